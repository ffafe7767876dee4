// A scene's files (scene_media.html): the before/after pair, and the upload widget.
import { readJSON } from "../api.js";
import { mountPairedVideo } from "../paired-video.js";
import { attachUploader } from "../uploader.js";

const pair = readJSON("pair-data");
if (pair) mountPairedVideo(document.getElementById("videos"), pair);
attachUploader(document.getElementById("uploader"));

// A benchmark's management page (manage.html): the upload widget.
import { attachUploader } from "../uploader.js";

attachUploader(document.getElementById("uploader"));

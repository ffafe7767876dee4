// A benchmark's management page (manage.html): the upload widget, the pipeline section and the studies'
// Copy buttons (copy.js); every job widget on the page follows its job live (job-progress.js).
import "../copy.js";
import { attachPipeline } from "../pipeline.js";
import { attachUploader } from "../uploader.js";

attachUploader(document.getElementById("uploader"));
attachPipeline(document.getElementById("pipeline"));

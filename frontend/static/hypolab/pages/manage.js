// A benchmark's management page (manage.html): the upload widget and the pipeline section; every job
// widget on the page follows its job live (job-progress.js).
import { attachPipeline } from "../pipeline.js";
import { attachUploader } from "../uploader.js";

attachUploader(document.getElementById("uploader"));
attachPipeline(document.getElementById("pipeline"));

/**
 * Upload widget: the browser sends a file straight to storage (a presigned S3 URL, or the signed
 * same-origin URL on local storage), then asks the server to check it (size, sha256) and record
 * the asset. The form holds: scene (optional), role, which (before/after, for videos), file,
 * a <progress> and an output[data-role=status]. The sha256 is computed here with WebCrypto, which
 * reads the whole file into memory: fine for videos and scans up to a few GB. A file over 64 MiB is
 * checked by a job on the server (202): its progress is read from the jobs API until it ends.
 */
import { errorText, get, post } from "./api.js";

const pause = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** The check's job followed to its end: the asset it recorded, or an error with its reason. */
export async function checkedAsset(job, onProgress, wait = pause) {
  while (job.status === "queued" || job.status === "running") {
    if (job.percent !== null) onProgress(job.percent / 100);
    await wait(2000);
    const answer = await get(`/api/v1/jobs/${job.id}/`);
    if (answer.ok) job = answer.data;
  }
  if (job.status !== "done") throw new Error(job.message || `the check was ${job.status}`);
  return { id: job.report.asset, size: job.report.size };
}

async function sha256Hex(file) {
  const digest = await crypto.subtle.digest("SHA-256", await file.arrayBuffer());
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function putWithProgress({ url, method, headers }, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    Object.entries(headers).forEach(([name, value]) => xhr.setRequestHeader(name, value));
    xhr.upload.addEventListener("progress", (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); });
    xhr.addEventListener("load", () => (xhr.status < 300 ? resolve() : reject(new Error(`storage answered ${xhr.status}`))));
    xhr.addEventListener("error", () => reject(new Error("the upload was interrupted")));
    xhr.send(file);
  });
}

export function attachUploader(form) {
  const progress = form.querySelector("progress");
  const status = form.querySelector("[data-role=status]");
  const say = (text, state) => { status.textContent = text; form.dataset.state = state; };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = form.elements.file.files[0];
    if (!file) { say("file: choose a file first.", "error"); return; }
    const which = form.elements.which ? form.elements.which.value : "";
    try {
      say("Computing the checksum…", "hashing");
      const announced = await post("/api/v1/uploads/", {
        scene: form.elements.scene.value || null, role: form.elements.role.value, filename: file.name,
        size: file.size, sha256: await sha256Hex(file), meta: which ? { which } : {},
      });
      if (!announced.ok) { say(errorText(announced.data), "error"); return; }
      say("Uploading…", "uploading");
      await putWithProgress(announced.data.upload, file, (fraction) => { progress.value = fraction; });
      say("Checking the stored file…", "checking");
      const done = await post(`/api/v1/uploads/${announced.data.id}/complete/`, {});
      if (!done.ok) { say(errorText(done.data), "error"); return; }
      const asset = done.status === 202
        ? await checkedAsset(done.data, (fraction) => { progress.value = fraction; }) : done.data;
      say(`Stored as asset ${asset.id} (${asset.size} bytes, sha256 checked).`, "done");
      form.dataset.assetId = asset.id;
    } catch (error) {
      say(`file: ${error.message}`, "error");
    }
  });
}

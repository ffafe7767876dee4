// One release (release_detail.html): the job widget follows its export live
// (job-progress.js); when it ends, the status and the files are read once from the release's API.
import { get, readJSON } from "../api.js";
import "../job-progress.js";

const releaseId = readJSON("release-id");

async function showRelease() {
  const r = await get(`/api/v1/releases/${releaseId}/`);
  if (!r.ok) return;
  document.getElementById("release-status").textContent = { ready: "Ready", failed: "Failed" }[r.data.status]
    || "Exporting";
  document.getElementById("release-files").replaceChildren(...Object.values(r.data.files).map((file) => {
    const item = document.createElement("li");
    const link = Object.assign(document.createElement("a"), { href: file.url, textContent: file.label });
    item.append(link, ` · ${(file.size / 1024).toFixed(1)} KB · `,
      Object.assign(document.createElement("code"), { textContent: `${file.sha256.slice(0, 16)}…` }));
    return item;
  }));
}

document.addEventListener("job:state", (event) => {
  if (event.detail.status === "done" || event.detail.status === "failed") showRelease();
});

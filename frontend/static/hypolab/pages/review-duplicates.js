// Near-duplicate pairs (review_duplicates.html): keep the first, the second or both of each pair. While
// the search runs, the job widget follows it live (job-progress.js); when it ends, the run and its pairs
// are read once from /api/v1/dedup/<id>/ (the page never reloads itself).
import { errorText, get, post, readJSON } from "../api.js";
import "../job-progress.js";

// review.models.DuplicatePair's labels: what a row says, as the server renders it.
const RESOLVED = { kept_first: "Kept the first", kept_second: "Kept the second", kept_both: "Not duplicates" };
const KINDS = { change: "Context change", question: "Question" };
// core.models.Job's labels: a run's status is its job's.
const STATUSES = { queued: "Queued", running: "Running", done: "Done", failed: "Failed", cancelled: "Cancelled" };

const table = document.getElementById("duplicate-pairs");
const runId = readJSON("dedup-run-id");

table.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-keep]");
  if (!button) return;
  const row = button.closest("tr");
  const r = await post(`/api/v1/duplicates/${row.dataset.pair}/resolve/`, { keep: button.dataset.keep });
  if (r.ok) row.querySelector(".resolution").textContent = RESOLVED[r.data.resolution] || r.data.resolution;
  else document.getElementById("dedup-error").textContent = errorText(r.data);
});

const cell = (text, className) => Object.assign(document.createElement("td"), { textContent: text, className: className || "" });

function pairRow(pair) {
  const row = document.createElement("tr");
  row.dataset.pair = pair.id;
  const resolution = cell(pair.resolution === "pending" ? "" : RESOLVED[pair.resolution] || pair.resolution, "resolution");
  if (pair.resolution === "pending") {
    for (const [keep, label] of [["first", "First"], ["second", "Second"], ["both", "Both"]]) {
      const button = Object.assign(document.createElement("button"), { textContent: label });
      button.dataset.keep = keep;
      resolution.append(button, " ");
    }
  }
  row.append(cell(KINDS[pair.kind] || pair.kind), cell(pair.similarity.toFixed(3)),
    cell(`#${pair.first_id} ${pair.first_text}`), cell(`#${pair.second_id} ${pair.second_text}`), resolution);
  return row;
}

async function showRun() {
  const r = await get(`/api/v1/dedup/${runId}/`);
  if (!r.ok) return;
  document.getElementById("dedup-status").textContent = STATUSES[r.data.status] || r.data.status;
  document.getElementById("dedup-texts").textContent = r.data.n_texts;
  document.getElementById("dedup-run-error").textContent = r.data.error ? ` · ${r.data.error}` : "";
  const header = table.querySelector("tr");
  const empty = document.createElement("tr");
  empty.append(Object.assign(cell("No pairs.", "muted"), { colSpan: 5 }));
  header.parentElement.replaceChildren(header, ...(r.data.pairs.length ? r.data.pairs.map(pairRow) : [empty]));
}

document.addEventListener("job:state", (event) => {
  if (["done", "failed", "cancelled"].includes(event.detail.status)) showRun();
});

/**
 * The one progress widget for every long-running job (core/jobs.py): each element
 * `<div class="job-progress" data-job-id="12">` (frontend/templates/frontend/_job_progress.html)
 * shows the job's status, a bar, the current step and, once it has ended, its report. It listens on
 * /ws/jobs/<id>/ and, when the socket is down, asks /api/v1/jobs/<id>/ every two seconds until the
 * job has ended. Its Cancel button, shown while the job is queued or running, posts
 * /api/v1/jobs/<id>/cancel/.
 */
import { errorText, get, post } from "./api.js";
import { subscribe } from "./dashboard.js";

const ENDED = new Set(["done", "failed", "cancelled"]);

const words = (name) => { const text = String(name).replace(/_/g, " "); return text.charAt(0).toUpperCase() + text.slice(1); };

/** A value of a report in words, not JSON: a list joined, an object as "key value" pairs. */
function plain(value) {
  if (value === null || value === undefined || value === "") return "–";
  if (Array.isArray(value)) return value.length ? value.map(plain).join(", ") : "none";
  if (typeof value === "object") {
    const pairs = Object.entries(value);
    return pairs.length ? pairs.map(([k, v]) => `${String(k).replace(/_/g, " ")} ${plain(v)}`).join(", ") : "none";
  }
  return typeof value === "boolean" ? (value ? "yes" : "no") : String(value);
}

function reportLines(report) {
  return Object.entries(report || {}).map(([what, value]) => `${words(what)}: ${plain(value)}`);
}

// A value that is a code name (a format such as lmms_eval, a file's role, a scene's id) is shown as code.
const CODE_NAME = /\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b/;

function reportItem(line) {
  const li = document.createElement("li");
  li.append(...line.split(CODE_NAME).map((part, index) => {
    if (index % 2 === 0) return part;  // split puts the captured code names at odd places
    const code = document.createElement("code");
    code.textContent = part;
    return code;
  }));
  return li;
}

export function showJob(element, state) {
  element.dataset.status = state.status;
  element.querySelector(".job-status").textContent = state.status;
  const bar = element.querySelector("progress");
  if (state.percent === null) {
    bar.removeAttribute("value");  // indeterminate while the total is unknown
  } else {
    bar.max = 100;
    bar.value = state.percent;
  }
  const counts = state.total === null ? `${state.done}` : `${state.done} / ${state.total}`;
  element.querySelector(".job-counts").textContent = counts;
  element.querySelector(".job-message").textContent = state.message || "";
  element.querySelector(".job-cancel").hidden = ENDED.has(state.status);
  const report = element.querySelector(".job-report");
  report.replaceChildren(...reportLines(state.report).map(reportItem));
  element.dispatchEvent(new CustomEvent("job:state", { detail: state, bubbles: true }));
}

export async function cancelJob(element) {
  const answer = await post(`/api/v1/jobs/${element.dataset.jobId}/cancel/`);
  if (answer.ok) showJob(element, answer.data);
  else element.querySelector(".job-message").textContent = errorText(answer.data);
}

export function watchJob(element) {
  const id = element.dataset.jobId;
  element.querySelector(".job-cancel").addEventListener("click", () => cancelJob(element));
  let polling = false;
  const poll = async () => {
    const answer = await get(`/api/v1/jobs/${id}/`);
    if (answer.ok) showJob(element, answer.data);
    if (!answer.ok || !ENDED.has(answer.data.status)) setTimeout(poll, 2000);
  };
  subscribe(`/ws/jobs/${id}/`, {
    onMessage: (data) => showJob(element, JSON.parse(data)),
    onDown: () => { if (!polling && !ENDED.has(element.dataset.status)) { polling = true; poll(); } },
  });
}

for (const element of document.querySelectorAll(".job-progress[data-job-id]")) watchJob(element);

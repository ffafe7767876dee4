// A model run (run.html): the job widget follows its current attempt live (job-progress.js); this
// keeps the run's own line in step with each state and, once scored, shows the job's report (the
// overall metrics, inference failures, how answers were read) as the page first rendered them.
import "../job-progress.js";

const byId = (id) => document.getElementById(id);

/**
 * The run's status for its job's state: scoring is the job's last step, "done" a finished run; null
 * while the job is queued (the run, queued for its renders or running with its batches waiting for a
 * GPU worker, says which itself).
 */
export function runStatus(state) {
  if (state.status === "queued") return null;
  if (state.status === "running" && (state.message || "").startsWith("Scoring")) return "scoring";
  return { done: "finished" }[state.status] ?? state.status;
}

/**
 * Overall metrics as the results tables show them: `ci` holds each metric's interval (± its longer side);
 * `names` are the metrics in words (core/labels.py, through the page's #metric-words).
 */
export function scoreLine(scores, names = {}) {
  const { ci, ...metrics } = scores;
  const interval = (value, range) => (value == null || !range ? "" : ` ± ${Math.max(range[1] - value, value - range[0]).toFixed(2)}`);
  return Object.entries(metrics)
    .map(([metric, value]) => `${names[metric] ?? metric} ${value ?? "–"}${interval(value, ci?.[metric])}`).join(" · ");
}

function showReport(report) {
  const names = JSON.parse(byId("metric-words")?.textContent || "{}");
  if (report.scores) byId("run-scores").textContent = scoreLine(report.scores, names);
  byId("run-inference-errors").textContent = report.inference_errors;
  for (const method of ["rule", "judge", "failed"]) {
    byId(`run-extraction-${method}`).textContent = report.extraction?.[method] ?? "";
  }
  byId("run-summary").hidden = false;
}

// the report is shown here in the page's words, not as the widget's list
for (const list of document.querySelectorAll(".job-progress .job-report")) list.hidden = true;

document.addEventListener("job:state", ({ detail: state }) => {
  const status = runStatus(state);
  if (status) byId("run-status").textContent = status;
  if (state.status === "running" || state.status === "done") byId("run-done").textContent = state.done;
  if (state.status === "done" && state.report?.scores !== undefined) showReport(state.report);
});

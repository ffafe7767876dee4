// A model run's live progress (run.html), pushed over the websocket until the run has finished.
import { readJSON } from "../api.js";
import { subscribe } from "../dashboard.js";

const page = readJSON("page-data");
const byId = (id) => document.getElementById(id);

function render(p) {
  byId("run-progress").value = p.done;
  byId("run-done").textContent = p.done;
  byId("run-status").textContent = p.status;
  byId("run-errors").textContent = p.errors;
  if (p.scores) {
    // `ci` holds each metric's interval (shown as the tables show it: ± its longer side), it is no metric.
    const { ci, ...metrics } = p.scores;
    const interval = (value, range) => (value == null || !range ? "" : ` ± ${Math.max(range[1] - value, value - range[0]).toFixed(2)}`);
    byId("run-scores").textContent = Object.entries(metrics)
      .map(([metric, value]) => `${metric} ${value ?? "–"}${interval(value, ci?.[metric])}`).join(" · ");
  }
  if (p.summary) {
    byId("run-inference-errors").textContent = p.summary.inference_errors;
    for (const method of ["rule", "judge", "failed"]) {
      byId(`run-extraction-${method}`).textContent = p.summary.extraction?.[method] ?? "";
    }
    byId("run-summary").hidden = false;
  }
}

const connect = () => subscribe(`/ws/runs/${page.run}/`, {
  onMessage: (data) => render(JSON.parse(data)),
  onOpen: () => { document.body.dataset.ws = "open"; },
  onDown: () => { if (byId("run-status").textContent !== page.finished) setTimeout(connect, 2000); },
});
connect();

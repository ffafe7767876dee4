import assert from "node:assert/strict";
import { test } from "node:test";

import { installDom } from "./fake_dom.mjs";

const ids = ["run-status", "run-done", "run-scores", "run-summary", "run-inference-errors", "run-extraction-rule",
  "run-extraction-judge", "run-extraction-failed"];
const dom = installDom();
const elements = Object.fromEntries(ids.map((id) => [id, dom.element("span", { id })]));
document.getElementById = (id) => elements[id] || null;
const { runStatus, scoreLine } = await import("../../frontend/static/hypolab/pages/run.js");

const state = (fields) => ({ status: "running", done: 0, total: 4, message: "", report: {}, ...fields });

test("the run's status follows its job: scoring is the job's last step, a done job a finished run", () => {
  assert.equal(runStatus(state({ message: "Inferring" })), "running");
  assert.equal(runStatus(state({ message: "Scoring …" })), "scoring");
  assert.equal(runStatus(state({ status: "done" })), "finished");
  assert.equal(runStatus(state({ status: "cancelled" })), "cancelled");
  assert.equal(runStatus(state({ status: "queued" })), null);  // the run's own status stands
});

test("each job state moves the run's line; a done job's report fills the scores and summary", () => {
  document.dispatchEvent(new CustomEvent("job:state", { detail: state({ done: 3, message: "Inferring" }) }));
  assert.equal(elements["run-status"].textContent, "running");
  assert.equal(elements["run-done"].textContent, 3);
  elements["run-summary"].hidden = true;
  const report = { scores: { EM: 50, PM: 40, ci: { EM: [30, 70] } }, inference_errors: 1,
    extraction: { rule: 2, judge: 0, failed: 1 } };
  document.dispatchEvent(new CustomEvent("job:state", { detail: state({ status: "done", done: 4, report }) }));
  assert.equal(elements["run-status"].textContent, "finished");
  assert.equal(elements["run-scores"].textContent, "EM 50 ± 20.00 · PM 40");
  assert.equal(elements["run-inference-errors"].textContent, 1);
  assert.equal(elements["run-extraction-failed"].textContent, 1);
  assert.equal(elements["run-summary"].hidden, false);
  assert.equal(scoreLine({ EM: null }), "EM –");
  assert.equal(scoreLine({ flip_circular: 44.4 }, { flip_circular: "FlipEval + CircularEval" }), "FlipEval + CircularEval 44.4");
});

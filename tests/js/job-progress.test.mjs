import assert from "node:assert/strict";
import { test } from "node:test";

import { installDom } from "./fake_dom.mjs";

const dom = installDom();
const { cancelJob, showJob } = await import("../../frontend/static/hypolab/job-progress.js");

function widget() {
  const named = Object.fromEntries([".job-status", ".job-counts", ".job-message", ".job-report"].map(
    (selector) => [selector, dom.element("span")]));
  named.progress = dom.element("progress");
  named[".job-cancel"] = dom.element("button");
  return dom.element("div", { children: named });
}

test("a running job shows its status, counts and percentage, and tells the page", () => {
  const element = widget();
  let told = null;
  element.addEventListener("job:state", (event) => { told = event.detail; });
  const state = { status: "running", done: 3, total: 12, percent: 25, message: "scoring", report: null };
  showJob(element, state);
  assert.equal(element.dataset.status, "running");
  assert.equal(element.querySelector(".job-counts").textContent, "3 / 12");
  assert.equal(element.querySelector("progress").value, 25);
  assert.equal(element.querySelector(".job-message").textContent, "scoring");
  assert.deepEqual(told, state);
});

test("an unknown total leaves the bar indeterminate and counts what is done", () => {
  const element = widget();
  element.querySelector("progress").value = 40;
  showJob(element, { status: "running", done: 7, total: null, percent: null, message: "", report: {} });
  assert.equal(element.querySelector("progress").value, undefined);
  assert.equal(element.querySelector(".job-counts").textContent, "7");
});

test("an ended job lists its report in words, one line per entry, no JSON", () => {
  const element = widget();
  showJob(element, { status: "done", done: 2, total: 2, percent: 100, message: "",
    report: { items: 2, skipped: { duplicate: 1 } } });
  const lines = element.querySelector(".job-report").children.map((li) => li.textContent);
  assert.deepEqual(lines, ["Items: 2", "Skipped: duplicate 1"]);
});

test("a report's code names (a format, a scene id) are shown as code, the rest as words", () => {
  const element = widget();
  showJob(element, { status: "done", done: 1, total: 1, percent: 100, message: "",
    report: { files: ["csv", "lmms_eval"], release: 2 } });
  const [files, release] = element.querySelector(".job-report").children;
  assert.equal(files.textContent, "Files: csv, lmms_eval");
  assert.deepEqual(files.children.map((part) => part.tagName ?? part), ["Files: csv, ", "CODE", ""]);
  assert.equal(release.textContent, "Release: 2");
});

test("Cancel shows while the job is queued or running, not once it has ended", () => {
  const element = widget();
  const cancel = element.querySelector(".job-cancel");
  for (const [status, hidden] of [["queued", false], ["running", false], ["done", true], ["failed", true],
    ["cancelled", true]]) {
    showJob(element, { status, done: 0, total: null, percent: null, message: "", report: {} });
    assert.equal(cancel.hidden, hidden, status);
  }
});

test("Cancel posts the job's cancel and shows the cancelled job, or the reason it could not", async () => {
  const element = widget();
  element.dataset.jobId = "12";
  dom.answerWith(() => ({ status: 200, body: { status: "cancelled", done: 1, total: 4, percent: 25,
    message: "Cancelled by ada.", report: {} } }));
  await cancelJob(element);
  assert.equal(dom.requests.at(-1).url, "/api/v1/jobs/12/cancel/");
  assert.equal(dom.requests.at(-1).method, "POST");
  assert.equal(element.dataset.status, "cancelled");
  assert.equal(element.querySelector(".job-message").textContent, "Cancelled by ada.");
  dom.answerWith(() => ({ status: 409, body: { status: ["This job has already ended (done)."] } }));
  await cancelJob(element);
  assert.equal(element.querySelector(".job-message").textContent, "This job has already ended (done).");
});

import assert from "node:assert/strict";
import { test } from "node:test";

import { installDom } from "./fake_dom.mjs";

const dom = installDom();
const { showJob } = await import("../../frontend/static/hypolab/job-progress.js");

function widget() {
  const named = Object.fromEntries([".job-status", ".job-counts", ".job-message", ".job-report"].map(
    (selector) => [selector, dom.element("span")]));
  named.progress = dom.element("progress");
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

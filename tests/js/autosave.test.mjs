import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { installDom } from "./fake_dom.mjs";

const dom = installDom({ elements: { "csrf-token": { textContent: '"token-1"' } } });
const { createAutosave } = await import("../../frontend/static/hypolab/autosave.js");

let form, status;
beforeEach(() => {
  dom.requests.length = 0;
  dom.freshWindow();
  form = dom.element("form");
  status = dom.element("span");
});

function autosave(extra = {}) {
  return createAutosave({ url: "/api/v1/drafts/7/", revision: 3, form, status, body: () => ({ text: "a chair" }), ...extra });
}

test("an edit is saved with the revision the last save returned, and the CSRF token", async () => {
  dom.answerWith(() => ({ status: 200, body: { revision: 4 } }));
  const saver = autosave();
  form.dispatchEvent(new Event("input"));
  assert.equal(saver.dirty, true);
  await saver.save();
  form.dispatchEvent(new Event("input"));
  await saver.save();
  assert.deepEqual(dom.requests.map((r) => r.json.revision), [3, 4]);
  assert.equal(dom.requests[0].method, "PUT");
  assert.equal(dom.requests[0].headers["X-CSRFToken"], "token-1");
  assert.equal(saver.revision, 4);
  assert.match(status.textContent, /^draft saved/);
});

test("nothing is sent while nothing changed", async () => {
  const saver = autosave();
  await saver.save();
  assert.equal(dom.requests.length, 0);
});

test("a stale revision (409) says another tab changed the draft and does not retry", async () => {
  dom.answerWith(() => ({ status: 409, body: { detail: "stale" } }));
  const saver = autosave();
  form.dispatchEvent(new Event("input"));
  await saver.save();
  assert.match(status.textContent, /changed in another tab/);
  assert.equal(saver.dirty, false);
});

test("an edit made while a save is on its way is not called saved, and goes with the next save", async () => {
  let edit = () => {};
  dom.answerWith(() => { edit(); return { status: 200, body: { revision: 4 } }; });
  const saver = autosave();
  form.dispatchEvent(new Event("input"));
  edit = () => form.dispatchEvent(new Event("input"));  // a drag goes on while the first save is sent
  await saver.save();
  assert.equal(saver.dirty, true);
  assert.equal(status.textContent, "editing…");
  edit = () => {};
  await saver.save();
  assert.equal(dom.requests.length, 2);
  assert.match(status.textContent, /^draft saved/);
});

test("a failed save keeps the edit for the next try", async () => {
  dom.answerWith(() => ({ status: 503, body: {} }));
  const saver = autosave();
  form.dispatchEvent(new Event("input"));
  await saver.save();
  assert.equal(saver.dirty, true);
  assert.match(status.textContent, /not saved yet/);
});

test("leaving the page sends the latest state at once, with keepalive and without a revision", async () => {
  dom.answerWith(() => ({ status: 200, body: { revision: 9 } }));
  autosave();
  form.dispatchEvent(new Event("input"));
  window.dispatchEvent(new Event("pagehide"));
  assert.equal(dom.requests.length, 1);
  assert.equal(dom.requests[0].keepalive, true);
  assert.equal(dom.requests[0].json.revision, undefined);
});

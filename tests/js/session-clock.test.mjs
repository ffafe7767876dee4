// The timed session engine (session-clock.js): the item's clock runs on the server's time from the
// stimulus onset, time-up sends a typed answer as a late one, focus losses and latency go with answers.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { installDom } from "./fake_dom.mjs";

const dom = installDom({ elements: { "csrf-token": { textContent: '"t"' } } });
const { runSession } = await import("../../frontend/static/hypolab/session-clock.js");

const HOUR = 3600_000;
let timeouts, view, shown, prefetched;

function makeView({ typed = "" } = {}) {
  const calls = { countdown: [], errors: [], items: [], finished: [] };
  return {
    calls,
    item(item, previous) { calls.items.push([item.id, previous]); return shown.promise; },
    revisiting() {}, answered() {}, stage() {}, feedback() {},
    countdown(itemMs, sessionMs) { calls.countdown.push([itemMs, sessionMs]); },
    finished(code) { calls.finished.push(code); },
    error(text) { calls.errors.push(text); },
    typed: () => typed,
  };
}

// The server is an hour ahead of this browser's clock: only the server's time may count.
function current(itemId, { deadlineInMs = 30_000 } = {}) {
  const now = Date.now() + HOUR;
  return { status: "active", n_items: 3, answered: [], allow_going_back: false,
           server_now: new Date(now).toISOString(), session_deadline: new Date(now + 600_000).toISOString(),
           item: { id: itemId, deadline: new Date(now + deadlineInMs).toISOString() },
           preload: [`/media/next-${itemId}.mp4`] };
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

const settle = () => new Promise((r) => setImmediate(r));

beforeEach(() => {
  dom.requests.length = 0;
  dom.freshWindow();
  timeouts = [];
  globalThis.setTimeout = (fn, ms) => timeouts.push([fn, ms]);
  prefetched = [];
  globalThis.document.head = { append: (link) => prefetched.push([link.rel, link.href]) };
  shown = deferred();
  view = makeView();
});

test("the countdown runs on the server's clock, not the browser's", async () => {
  dom.answerWith(() => ({ status: 200, body: current(11) }));
  await runSession(5, view).start();
  const [itemMs, sessionMs] = view.calls.countdown[0];
  assert.ok(itemMs > 29_000 && itemMs <= 30_000, `item time left ${itemMs}`);
  assert.ok(sessionMs > 599_000 && sessionMs <= 600_000, `session time left ${sessionMs}`);
  assert.deepEqual(prefetched, [["prefetch", "/media/next-11.mp4"]]);  // the next item's stimulus, fetched ahead
});

test("the onset is reported once the stimuli are on screen, and the server's new deadline counts", async () => {
  const later = new Date(Date.now() + HOUR + 45_000).toISOString();
  dom.answerWith((r) => (r.url.endsWith("onset/")
    ? { status: 200, body: { server_now: new Date(Date.now() + HOUR).toISOString(), deadline: later } }
    : { status: 200, body: current(12) }));
  await runSession(5, view).start();
  assert.deepEqual(dom.requests.map((r) => r.url), ["/api/v1/sessions/5/current/"]);  // nothing before onset
  shown.resolve();
  await settle(); await settle();
  const onset = dom.requests.find((r) => r.url.endsWith("onset/"));
  assert.equal(onset.method, "POST");
  assert.equal(onset.json.item, 12);
  assert.ok(Number.isInteger(onset.json.load_ms) && onset.json.load_ms >= 0);
  dom.tick();
  const [itemMs] = view.calls.countdown.at(-1);
  assert.ok(itemMs > 44_000 && itemMs <= 45_000, `after onset, time left ${itemMs}`);
});

test("time up with an answer typed but not sent: it goes as a late answer, and the next item follows", async () => {
  view = makeView({ typed: "the lamp" });
  dom.answerWith((r) => (r.url.endsWith("answer/") ? { status: 200, body: { late: true } }
    : { status: 200, body: current(13, { deadlineInMs: -10 }) }));
  await runSession(5, view).start();
  await settle(); await settle();
  const late = dom.requests.filter((r) => r.url.endsWith("answer/"));
  assert.equal(late.length, 1);
  assert.equal(late[0].json.item, 13);
  assert.equal(late[0].json.answer, "the lamp");
  assert.ok(Number.isInteger(late[0].json.client_latency_ms));
  assert.deepEqual(view.calls.errors, [""]);  // nothing to complain about: the answer was kept
  assert.equal(timeouts.length, 1);  // then the current item is asked for again
  assert.ok(timeouts[0][1] > 0);
});

test("time up with nothing typed sends nothing and says the time is up", async () => {
  dom.answerWith(() => ({ status: 200, body: current(14, { deadlineInMs: -10 }) }));
  await runSession(5, view).start();
  await settle();
  assert.equal(dom.requests.filter((r) => r.url.endsWith("answer/")).length, 0);
  assert.deepEqual(view.calls.errors, ["Time is up for this question."]);
});

test("an answer carries the time taken and the focus losses while the item was shown", async () => {
  dom.answerWith((r) => (r.url.endsWith("answer/") ? { status: 200, body: { status: "finished", completion_code: "C0DE" } }
    : { status: 200, body: current(15) }));
  const session = runSession(5, view);
  await session.start();
  window.dispatchEvent(new Event("blur"));
  window.dispatchEvent(new Event("blur"));
  await session.answer("left");
  const sent = dom.requests.find((r) => r.url.endsWith("answer/")).json;
  assert.equal(sent.answer, "left");
  assert.equal(sent.focus_losses, 2);
  assert.ok(Number.isInteger(sent.client_latency_ms) && sent.client_latency_ms >= 0);
  assert.deepEqual(view.calls.finished, ["C0DE"]);
});

test("a refused answer shows the server's message in words", async () => {
  dom.answerWith((r) => (r.url.endsWith("answer/") ? { status: 400, body: { answer: ["This field may not be blank."] } }
    : { status: 200, body: current(16) }));
  const session = runSession(5, view);
  await session.start();
  await session.answer("");
  assert.deepEqual(view.calls.errors, ["Answer: This field may not be blank."]);
});

// The paired before/after player (paired-video.js): the "after" video follows the "before" clock within
// half a frame, a frame step or a scrub puts both on the middle of the same frame, pausing lines them up.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

// Just the DOM this player touches: elements with style, dataset, children and events, and videos whose
// clock the test moves.
class Element extends EventTarget {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.style = {};
    this.dataset = {};
    this.children = [];
    this.classList = { names: new Set(), add: (n) => this.classList.names.add(n) };
  }
  append(...nodes) { this.children.push(...nodes); }
  replaceChildren(...nodes) { this.children = nodes; }
  setAttribute(name, value) { this[name] = value; }
  closest() { return null; }
  find(role) {  // the control with this data-role, anywhere below
    for (const child of this.children) {
      if (child.dataset?.role === role) return child;
      const below = child.find?.(role);
      if (below) return below;
    }
    return null;
  }
}

class Video extends Element {
  constructor() { super("video"); this.currentTime = 0; this.duration = 0; this.paused = true; this.seeking = false; }
  play() { this.paused = false; return Promise.resolve(); }
  pause() { this.paused = true; }
}

let frameCallbacks;
globalThis.HTMLVideoElement = class {};
HTMLVideoElement.prototype.requestVideoFrameCallback = () => {};
globalThis.Option = class extends Element {
  constructor(text, value) { super("option"); this.text = text; this.value = value; }
};
globalThis.document = { createElement: (tag) => (tag === "video" ? new Video() : new Element(tag)) };

const { mountPairedVideo } = await import("../../frontend/static/hypolab/paired-video.js");

let root, player, before, after;
beforeEach(() => {
  frameCallbacks = [];
  Video.prototype.requestVideoFrameCallback = function (fn) { frameCallbacks.push(fn); };
  root = new Element("div");
  player = mountPairedVideo(root, { before: "/media/before.mp4", after: "/media/after.mp4", fps: 10 });
  [before, after] = root.children[0].children.map((figure) => figure.children[0]);
  for (const video of [before, after]) { video.duration = 6; video.dispatchEvent(new Event("loadeddata")); }
});

function presentFrame(mediaTime) {  // the browser presents one of the master's frames
  before.currentTime = mediaTime;
  const pending = frameCallbacks.splice(0);
  pending.forEach((fn) => fn(0, { mediaTime }));
}

test("both videos loaded: the player says so, before is the clock and after follows", () => {
  assert.equal(root.dataset.loaded, "true");
  assert.equal(before.src, "/media/before.mp4");
  assert.equal(after.src, "/media/after.mp4");
  assert.equal(root.find("clock").textContent, "0.00 s · frame 0");
});

test("while playing, a follower more than half a frame away is moved to the master's time", async () => {
  await player.play();
  assert.equal(before.paused, false);
  assert.equal(after.paused, false);
  after.currentTime = 1.03;
  presentFrame(1.0);  // 0.03 s apart: within half a frame (0.05 s) at 10 fps, left alone
  assert.equal(after.currentTime, 1.03);
  after.currentTime = 1.2;
  presentFrame(1.1);  // 0.1 s apart: moved
  assert.equal(after.currentTime, 1.1);
  assert.equal(frameCallbacks.length, 1);  // the master keeps asking for its next frame
});

test("a frame step pauses both and puts them on the middle of the same frame", async () => {
  await player.play();
  before.currentTime = 2.0;
  player.step(1);
  assert.ok(before.paused && after.paused);
  assert.equal(before.currentTime, 2.15);  // frame 21's middle at 10 fps
  assert.equal(after.currentTime, before.currentTime);
  player.step(-3);
  assert.equal(before.currentTime, 1.85);
  assert.equal(after.currentTime, 1.85);
  assert.equal(root.find("clock").textContent, "1.85 s · frame 18");
});

test("the scrubber seeks both to one frame; a step before the start stays at the first frame", () => {
  const scrubber = root.find("scrubber");
  scrubber.value = 500;  // half way through 6 s
  scrubber.dispatchEvent(new Event("input"));
  assert.equal(before.currentTime, 3.05);
  assert.equal(after.currentTime, 3.05);
  player.seek(0);
  player.step(-1);
  assert.equal(before.currentTime, 0);
  assert.equal(after.currentTime, 0);
});

test("pausing lines the follower up exactly; the master's end stops both", async () => {
  await player.play();
  before.currentTime = 4.321;
  after.currentTime = 4.3;
  player.pause();
  assert.equal(after.currentTime, 4.321);
  await player.play();
  before.dispatchEvent(new Event("ended"));
  assert.ok(before.paused && after.paused);
  assert.equal(root.find("play").textContent, "Play both");
});

test("a video that fails to load marks the player as failed", () => {
  after.dispatchEvent(new Event("error"));
  assert.equal(root.dataset.loaded, "error");
});

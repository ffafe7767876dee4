// When the viewer draws (pointcloud-frames.js): one frame per animation frame however often it is
// asked, and the first-frame and full-frame marks once the GPU has finished those frames.
import assert from "node:assert/strict";
import { test } from "node:test";

const { frameLoop } = await import("../../frontend/static/hypolab/pointcloud-frames.js");

// Animation frames and the GPU run when the test says.
let animation = [];
globalThis.requestAnimationFrame = (fn) => animation.push(fn);
globalThis.cancelAnimationFrame = (id) => { if (id) animation[id - 1] = null; };
const nextAnimationFrame = () => {
  const due = animation;
  animation = [];
  due.forEach((fn) => fn?.());
};
const marks = [];
globalThis.performance.mark = (name) => marks.push(name);

function loop({ followsView = false } = {}) {
  marks.length = 0;
  animation = [];
  const element = { dataset: { complete: "false" } };
  const gpu = [];
  const state = { complete: false, draws: 0, firstDrawn: 0 };
  const frames = frameLoop(element, () => { state.draws += 1; return state.complete; }, {
    drawn: () => new Promise((resolve) => gpu.push(resolve)),
    onFirstDrawn: () => { state.firstDrawn += 1; },
    followsView: () => followsView,
  });
  const finishGpu = async () => { gpu.splice(0).forEach((resolve) => resolve()); await null; await null; };
  return { element, frames, state, finishGpu };
}

test("asking for frames draws once at the next animation frame; drawing now cancels it", () => {
  const { element, frames, state } = loop();
  frames.request();
  frames.request();
  nextAnimationFrame();
  assert.equal(state.draws, 1);
  assert.equal(element.dataset.frames, "1");
  frames.request();
  frames.now();
  nextAnimationFrame();
  assert.equal(state.draws, 2);
});

test("the first frame is marked once the GPU has drawn it, and only once", async () => {
  const { frames, state, finishGpu } = loop();
  frames.now();
  frames.now();
  assert.deepEqual(marks, []);
  await finishGpu();
  assert.deepEqual(marks, ["hl-viewer:first-frame"]);
  assert.equal(state.firstDrawn, 1);
});

test("a complete frame marks full-frame unless a later frame came first; a levelled file stays complete", async () => {
  const { element, frames, state, finishGpu } = loop();
  state.complete = true;
  frames.now();
  state.complete = false;
  frames.now(); // the camera moved on before the GPU finished
  await finishGpu();
  assert.equal(element.dataset.complete, "false");
  state.complete = true;
  frames.now();
  await finishGpu();
  assert.equal(element.dataset.complete, "true");
  assert.deepEqual(marks, ["hl-viewer:first-frame", "hl-viewer:full-frame"]);
  state.complete = false;
  frames.now();
  assert.equal(element.dataset.complete, "true");
});

test("an octree's completeness follows the view, with full-frame marked once", async () => {
  const { element, frames, state, finishGpu } = loop({ followsView: true });
  state.complete = true;
  frames.now();
  await finishGpu();
  assert.equal(element.dataset.complete, "true");
  state.complete = false;
  frames.now();
  assert.equal(element.dataset.complete, "false");
  state.complete = true;
  frames.now();
  await finishGpu();
  assert.equal(element.dataset.complete, "true");
  assert.equal(marks.filter((m) => m === "hl-viewer:full-frame").length, 1);
});

test("a stopped loop marks nothing, draws nothing more, but still reports the first frame", async () => {
  const { element, frames, state, finishGpu } = loop();
  state.complete = true;
  frames.now();
  frames.request();
  frames.stop();
  nextAnimationFrame();
  await finishGpu();
  assert.equal(state.draws, 1);
  assert.deepEqual(marks, []);
  assert.equal(element.dataset.complete, "false");
  assert.equal(state.firstDrawn, 1); // the page waiting for the first frame is answered
});

// Hover and click on the viewer's objects (pointcloud-picking.js), the cameras and their controls
// (pointcloud-cameras.js) and the red boxes (pointcloud-boxes.js), over stand-ins for the canvas.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as THREE from "three";

const { objectPicking } = await import("../../frontend/static/hypolab/pointcloud-picking.js");
const { viewerCameras } = await import("../../frontend/static/hypolab/pointcloud-cameras.js");
const { redBoxes } = await import("../../frontend/static/hypolab/pointcloud-boxes.js");

// A 100 x 100 canvas at the page's origin.
function page() {
  const element = Object.assign(new EventTarget(), { dataset: {}, getBoundingClientRect: () => ({ left: 0, top: 0 }) });
  const canvas = Object.assign(new EventTarget(), {
    style: {},
    ownerDocument: new EventTarget(),
    getBoundingClientRect: () => ({ left: 0, top: 0, width: 100, height: 100 }),
  });
  const tooltip = { hidden: true, textContent: "", style: {} };
  const button = Object.assign(new EventTarget(), {
    textContent: "", attributes: {}, setAttribute(name, value) { this.attributes[name] = value; },
  });
  return { element, canvas, tooltip, button };
}
const pointer = (type, x, y, buttons = 0) => Object.assign(new Event(type), { clientX: x, clientY: y, buttons });

// Looking straight down on a 4 m square: the canvas's centre is (0, 0), its left top corner (-2, 2).
const objects = [
  { label: "bed", instance_id: 4, center: [0, 0, 0], size: [1, 1, 1] },
  { label: "lamp", instance_id: 9, center: [1.5, 0, 0], size: [0.4, 0.4, 0.4] },
];
function picking() {
  const parts = page();
  const camera = new THREE.OrthographicCamera(-2, 2, 2, -2, 0.1, 100);
  camera.position.set(0, 0, 10);
  camera.updateMatrixWorld();
  const state = { redraws: 0, selected: [] };
  const picked = objectPicking(parts.element, parts.canvas, parts.tooltip, objects, {
    camera: () => camera, redraw: () => { state.redraws += 1; },
  });
  parts.element.addEventListener("hl-object-selected", (event) => state.selected.push(event.detail?.label ?? null));
  return { ...parts, picked, state };
}

test("hovering an object's box labels it and outlines it; the same object again draws nothing", () => {
  const { canvas, element, tooltip, picked, state } = picking();
  canvas.dispatchEvent(pointer("pointermove", 50, 50));
  assert.equal(tooltip.hidden, false);
  assert.equal(tooltip.textContent, "bed");
  assert.deepEqual(tooltip.style, { left: "62px", top: "62px" });
  assert.equal(element.dataset.hoverLabel, "bed");
  assert.equal(picked.hoverBox.visible, true);
  assert.deepEqual(picked.hoverBox.position.toArray(), [0, 0, 0]);
  canvas.dispatchEvent(pointer("pointermove", 52, 50));
  assert.equal(state.redraws, 1);
  canvas.dispatchEvent(pointer("pointermove", 87, 50)); // x = 1.48 m: the lamp
  assert.equal(element.dataset.hoverLabel, "lamp");
  canvas.dispatchEvent(pointer("pointermove", 2, 2, 1)); // a drag moves the camera, not the pointer
  assert.equal(element.dataset.hoverLabel, "lamp");
  canvas.dispatchEvent(pointer("pointermove", 2, 2));
  assert.equal(tooltip.hidden, true);
  assert.equal(element.dataset.hoverLabel, "");
  assert.equal(picked.hoverBox.visible, false);
  assert.equal(state.redraws, 3);
  picked.dispose();
});

test("a click selects the object under the pointer (or none) and tells the page; the selection stays outlined", () => {
  const { canvas, element, tooltip, picked, state } = picking();
  canvas.dispatchEvent(pointer("click", 87, 50));
  assert.equal(element.dataset.selectedLabel, "lamp");
  assert.equal(element.dataset.selectedInstance, "9");
  canvas.dispatchEvent(pointer("pointermove", 50, 50));
  assert.deepEqual(picked.hoverBox.position.toArray(), [0, 0, 0]);
  canvas.dispatchEvent(new Event("pointerleave"));
  assert.equal(tooltip.hidden, true);
  assert.equal(element.dataset.hoverLabel, "");
  assert.deepEqual(picked.hoverBox.position.toArray(), [1.5, 0, 0]);
  canvas.dispatchEvent(pointer("click", 2, 2));
  assert.equal(element.dataset.selectedLabel, "");
  assert.equal(picked.hoverBox.visible, false);
  assert.deepEqual(state.selected, ["lamp", null]);
});

function cameras() {
  const parts = page();
  const calls = [];
  const motion = { start: () => calls.push("start"), change: () => calls.push("change"), end: () => calls.push("end") };
  const viewer = viewerCameras(parts.element, parts.canvas, parts.button, { motion, redraw: () => calls.push("redraw") });
  viewer.frame(new THREE.Box3(new THREE.Vector3(0, 0, 0), new THREE.Vector3(4, 2, 1)));
  calls.length = 0;
  return { ...parts, viewer, calls };
}

test("the Top view button switches to the orthographic camera and back", () => {
  const { element, button, viewer, calls } = cameras();
  assert.equal(viewer.camera, viewer.perspective);
  button.dispatchEvent(new Event("click"));
  assert.equal(viewer.camera, viewer.top);
  assert.equal(element.dataset.camera, "top");
  assert.equal(button.textContent, "3D view");
  assert.equal(button.attributes["aria-pressed"], "true");
  button.dispatchEvent(new Event("click"));
  assert.equal(viewer.camera, viewer.perspective);
  assert.equal(button.textContent, "Top view");
  assert.deepEqual(calls, ["redraw", "redraw"]);
  viewer.dispose();
});

test("the controls report to the camera's motion, and a double click puts the camera back", () => {
  const { canvas, viewer, calls } = cameras();
  const framed = viewer.perspective.position.clone();
  for (const type of ["start", "change", "end"]) viewer.orbit.dispatchEvent({ type });
  assert.deepEqual(calls, ["start", "change", "end"]);
  viewer.perspective.position.x += 3;
  canvas.dispatchEvent(new Event("dblclick"));
  assert.ok(viewer.perspective.position.distanceTo(framed) < 1e-9);
});

test("a resize keeps both cameras' aspect, the top view framing the extent along the shorter side", () => {
  const { viewer } = cameras();
  const extent = 4 * 0.55;
  viewer.resize(200, 100);
  assert.equal(viewer.aspect, 2);
  assert.equal(viewer.perspective.aspect, 2);
  assert.deepEqual([viewer.top.left, viewer.top.right, viewer.top.top, viewer.top.bottom], [-2 * extent, 2 * extent, extent, -extent]);
  viewer.resize(100, 200);
  assert.deepEqual([viewer.top.left, viewer.top.right, viewer.top.top, viewer.top.bottom], [-extent, extent, 2 * extent, -2 * extent]);
});

test("red boxes outline the objects asked for, replacing the last set", () => {
  const scene = new THREE.Scene();
  const red = redBoxes(scene, objects);
  assert.equal(red.show([4, 9, 77]), 2);
  assert.equal(scene.children.length, 2);
  assert.equal(red.show([9]), 1);
  assert.deepEqual(scene.children.map((lines) => lines.position.x), [1.5]);
  assert.equal(red.show(null), 0);
  red.show([4]);
  red.dispose();
  assert.equal(scene.children.length, 0);
});

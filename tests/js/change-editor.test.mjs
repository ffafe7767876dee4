// The change editor's maths (change-editor.js): boxes after an edit as the server computes them, each
// operation, supports, keys, steps (undo, redo, a drag as one step) and the edit in the API's schema.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as THREE from "three";

const edit = await import("../../frontend/static/hypolab/change-editor.js");
const { changeEditLayer } = await import("../../frontend/static/hypolab/pointcloud-edit.js");

// A room: a floor box, a table (top at 0.8 m) and a chair on the floor, a lamp on the table.
const objects = [
  { instance_id: 1, label: "floor", center: [0, 0, -0.05], size: [6, 6, 0.1], yaw: 0 },
  { instance_id: 2, label: "table", center: [1, 1, 0.4], size: [1.2, 0.8, 0.8], yaw: 0 },
  { instance_id: 3, label: "chair", center: [-1, -1, 0.45], size: [0.5, 0.5, 0.9], yaw: Math.PI / 2 },
  { instance_id: 4, label: "desk lamp", center: [1, 1, 1.0], size: [0.2, 0.2, 0.4], yaw: 0 },
];
const close = (actual, expected, eps = 1e-9) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < eps, `${actual} != ${expected}`));
};

test("a box after its entry is scaled about its bottom centre, turned and moved, as the server's", () => {
  const box = edit.boxAfter(objects[2], { translation: [1, 0, 0.1], rotation: 0.5, scale: [2, 2, 2], removed: false });
  close(box.center, [0, -1, 0.9 + 0.1]);  // bottom stays at 0, the height doubles to 1.8
  close(box.size, [1, 1, 1.8]);
  assert.equal(box.yaw, Math.PI / 2 + 0.5);
});

test("operations touch one box each and never change the state they are given", () => {
  const start = edit.emptyEdit();
  const moved = edit.moveBy(start, "o3", [0.5, 0.25, 0]);
  assert.deepEqual(start, edit.emptyEdit());
  const turned = edit.turnBy(moved, "o3", edit.TURN_RAD);
  const scaled = edit.scaleBy(turned, "o3", 2);
  const entry = edit.entryOf(scaled, 3);
  close(entry.translation, [0.5, 0.25, 0]);
  assert.equal(entry.rotation, edit.TURN_RAD);
  close(entry.scale, [2, 2, 2]);
  const after = edit.afterBoxes(objects, scaled);
  assert.deepEqual(after.filter((b) => b.edited).map((b) => b.key), ["o3"]);
  // moving back to where it was leaves no entry (the server refuses one that changes nothing)
  assert.deepEqual(edit.moveBy(moved, "o3", [-0.5, -0.25, 0]).objects, {});
});

test("removal drops the transform, a removed object takes no step until put back, an added box goes away", () => {
  const state = edit.removeTarget(edit.moveBy(edit.emptyEdit(), "o3", [1, 0, 0]), "o3");
  assert.deepEqual(edit.toSchema(state), { objects: [{ instance_id: 3, removed: true }], added: [] });
  assert.equal(edit.moveBy(state, "o3", [1, 0, 0]), state);
  assert.equal(edit.toSchema(edit.restoreTarget(state, "o3")), null);
  const { state: withLamp, key } = edit.addBox(state, objects, "Desk lamp", [0, 0, 0]);
  assert.equal(key, "a0");
  close(withLamp.added[0].size, [0.2, 0.2, 0.4]);  // the size of the scene's object of that label
  close(withLamp.added[0].center, [0, 0, 0.2]);    // resting on the point given
  assert.deepEqual(edit.removeTarget(withLamp, "a0").added, []);
  const unknown = edit.addBox(state, objects, "piano", [0, 0, 0]).state;
  close(unknown.added[0].size, edit.DEFAULT_SIZE);
});

test("replacement is a removal and an addition in one edit", () => {
  let state = edit.removeTarget(edit.emptyEdit(), "o3");
  state = edit.addBox(state, objects, "stool", [-1, -1, 0]).state;
  state = edit.scaleBy(state, "a0", 2);
  const schema = edit.toSchema(state);
  assert.deepEqual(schema.objects, [{ instance_id: 3, removed: true }]);
  assert.deepEqual(schema.added, [{ label: "stool", center: [-1, -1, 0.5], size: [1, 1, 1], yaw: 0 }]);
});

test("supports: up onto the table under the chair's centre, down to the floor, none above the top", () => {
  let state = edit.moveBy(edit.emptyEdit(), "o3", [2, 2, 0]);  // the chair's centre over the table
  assert.deepEqual(edit.supportLevels(objects, state, "o3"), [0, 0.8, 1.2]);  // floor, table, the lamp's top
  state = edit.ontoSupport(objects, state, "o3", 1);
  assert.ok(Math.abs(edit.bottomOf(edit.boxOf(objects, state, "o3")) - 0.8) < 1e-9);
  state = edit.ontoSupport(objects, state, "o3", 1);
  state = edit.ontoSupport(objects, state, "o3", 1);
  assert.ok(Math.abs(edit.bottomOf(edit.boxOf(objects, state, "o3")) - 1.2) < 1e-9);
  state = edit.ontoSupport(objects, state, "o3", -1);
  state = edit.ontoSupport(objects, state, "o3", -1);
  assert.ok(Math.abs(edit.bottomOf(edit.boxOf(objects, state, "o3")) - 0) < 1e-9);
  assert.equal(edit.ontoSupport(objects, state, "o3", -1), state);
  assert.equal(edit.floorZ(objects.slice(1)), 0);  // no floor box: the lowest bottom
});

test("a turned footprint contains what lies inside it", () => {
  const long = { center: [0, 0, 0], size: [2, 0.2, 1], yaw: Math.PI / 2 };
  assert.ok(edit.containsXY(long, 0, 0.9));
  assert.ok(!edit.containsXY(long, 0.9, 0));
});

test("rays meet the floor plane, arrows move relative to the view, keys name their actions", () => {
  close(edit.rayToPlaneZ([0, 0, 2], [1, 0, -1], 0), [2, 0, 0]);
  assert.equal(edit.rayToPlaneZ([0, 0, 2], [1, 0, 1], 0), null);
  close(edit.arrowStep("ArrowUp", [0, 2], 0.1), [0, 0.1, 0]);
  close(edit.arrowStep("ArrowRight", [0, 1], 0.1), [0.1, 0, 0]);
  close(edit.arrowStep("ArrowLeft", [1, 0], 0.1), [0, 0.1, 0]);
  assert.equal(edit.keyAction({ key: "z", ctrlKey: true }), "undo");
  assert.equal(edit.keyAction({ key: "Z", ctrlKey: true, shiftKey: true }), "redo");
  assert.equal(edit.keyAction({ key: "y", metaKey: true }), "redo");
  assert.equal(edit.keyAction({ key: "r" }), "turn-left");
  assert.equal(edit.keyAction({ key: "R", shiftKey: true }), "turn-right");
  assert.equal(edit.keyAction({ key: "+" }), "bigger");
  assert.equal(edit.keyAction({ key: "-" }), "smaller");
  assert.equal(edit.keyAction({ key: "Delete" }), "remove");
  assert.equal(edit.keyAction({ key: "PageUp" }), "up");
  assert.equal(edit.keyAction({ key: "ArrowDown", shiftKey: true }), "back");
  assert.equal(edit.keyAction({ key: "a" }), null);
  assert.equal(edit.keyAction({ key: "r", ctrlKey: true }), null);  // the browser's reload
});

test("steps: each operation one step, a drag one step however many moves, undo and redo", () => {
  let h = edit.createHistory();
  h = edit.record(h, edit.turnBy(h.present, "o3", 0.2));
  const start = h.present;
  for (const dx of [0.1, 0.2, 0.3]) h = edit.preview(h, edit.moveBy(start, "o3", [dx, 0, 0]));
  h = edit.commit(h, start);
  assert.equal(h.past.length, 2);
  close(edit.entryOf(h.present, 3).translation, [0.3, 0, 0]);
  h = edit.undo(h);
  close(edit.entryOf(h.present, 3).translation, [0, 0, 0]);
  assert.equal(edit.entryOf(h.present, 3).rotation, 0.2);
  h = edit.redo(h);
  close(edit.entryOf(h.present, 3).translation, [0.3, 0, 0]);
  assert.equal(edit.record(h, h.present), h);  // nothing changed: no step
  assert.equal(edit.commit(h, h.present), h);
  h = edit.record(edit.undo(h), edit.emptyEdit());
  assert.deepEqual(h.future, []);  // a new step after undo drops what redo had
  assert.equal(edit.undo(edit.createHistory()).past.length, 0);
});

test("the schema: defaults left out, uniform scale a number, rounded, and read back the same", () => {
  let state = edit.moveBy(edit.emptyEdit(), "o3", [0.123456, -0.5, 0]);
  state = edit.scaleBy(state, "o2", 1.5);
  state = edit.scaleBy(edit.turnBy(state, "o4", Math.PI), "o4", 1);
  const schema = edit.toSchema(state);
  assert.deepEqual(schema, {
    objects: [{ instance_id: 2, scale: 1.5 }, { instance_id: 3, translation: [0.1235, -0.5, 0] },
              { instance_id: 4, rotation: 3.14159 }],
    added: [],
  });
  assert.deepEqual(edit.toSchema(edit.fromSchema(schema)), schema);
  const stored = { objects: [{ instance_id: 3, scale: [1, 2, 1] }], added: [], world: { anchor: 1 } };
  close(edit.entryOf(edit.fromSchema(stored), 3).scale, [1, 2, 1]);
  assert.equal(edit.toSchema(edit.emptyEdit()), null);
  assert.deepEqual(edit.fromSchema(null), edit.emptyEdit());
});

test("the object a text names is the one it mentions first; plurals count, the floor does not", () => {
  assert.equal(edit.namedObject(objects, "The desk lamp has been moved onto the chair.").instance_id, 4);
  assert.equal(edit.namedObject(objects, "Both chairs moved to the table").instance_id, 3);
  assert.equal(edit.namedObject(objects, "On the floor, nothing"), null);
  assert.match(edit.describe(objects, edit.moveBy(edit.emptyEdit(), "o3", [0.3, 0.4, 0])), /chair 3 moved 0\.50 m/);
  assert.equal(edit.describe(objects, edit.emptyEdit()), "No edit yet.");
});

// The three.js layer over a stand-in viewer: a 100 x 100 canvas looking straight down on a 4 m square.
function fakeViewer() {
  const camera = new THREE.OrthographicCamera(-2, 2, 2, -2, 0.1, 100);
  camera.position.set(0, 0, 10);
  camera.up.set(0, 1, 0);
  camera.lookAt(0, 0, 0);
  camera.updateMatrixWorld();
  const canvas = Object.assign(new EventTarget(), { getBoundingClientRect: () => ({ left: 0, top: 0, width: 100, height: 100 }) });
  const element = new EventTarget();
  let redraws = 0;
  return { viewer: { element, canvas, scene: new THREE.Scene(), activeCamera: camera, redraw: () => redraws++ }, redraws: () => redraws };
}
globalThis.window = globalThis.window || new EventTarget();
const pointerEvent = (type, target, x, y) => {
  const event = Object.assign(new Event(type, { bubbles: true }), { clientX: x, clientY: y, button: 0 });
  Object.defineProperty(event, "target", { value: target });
  return event;
};

test("the layer: a click picks a box, a drag of the selected one reports its move on the floor", () => {
  const { viewer, redraws } = fakeViewer();
  const events = [];
  const layer = changeEditLayer(viewer, objects, {
    pick: (key) => events.push(["pick", key]),
    drag: (phase, delta) => events.push(["drag", phase, delta]),
    place: (point) => events.push(["place", point]),
  });
  const after = edit.afterBoxes(objects, edit.emptyEdit());
  layer.draw(after, null);
  assert.ok(redraws() > 0);
  const [x, y] = layer.screenOf([-1, -1, 0]);  // the chair
  close([x, y], [25, 75]);
  viewer.element.dispatchEvent(pointerEvent("pointerdown", viewer.canvas, x, y));
  viewer.element.dispatchEvent(pointerEvent("click", viewer.canvas, x, y));
  assert.deepEqual(events, [["pick", "o3"]]);
  layer.draw(after, "o3");
  viewer.element.dispatchEvent(pointerEvent("pointerdown", viewer.canvas, x, y));
  window.dispatchEvent(pointerEvent("pointermove", viewer.canvas, x + 25, y));
  window.dispatchEvent(pointerEvent("pointerup", viewer.canvas, x + 25, y));
  assert.equal(events[1][1], "start");
  close(events[2][2], [1, 0, 0], 1e-6);  // 25 px of 100 across 4 m
  assert.deepEqual(events[3], ["drag", "end", undefined]);
  layer.placing = "lamp";
  viewer.element.dispatchEvent(pointerEvent("pointerdown", viewer.canvas, 80, 25));  // on the table's top
  close(events[4][1], [1.2, 1, 0.8], 1e-6);
  layer.dispose();
});

test("handles: where they are, the angle and the ratio a drag of one gives, clamped and snapped", () => {
  const chair = edit.boxOf(objects, edit.emptyEdit(), "o3");  // at (-1, -1), 0.5 square, turned 90°
  const points = edit.handlePoints(chair);
  close(points.centre, [-1, -1, 0]);
  close(points.turn, [-1, -1 + 0.25 + 0.2, 0]);  // beyond its front edge: its local +x, turned to +y
  close(points.front, [-1, -0.75, 0]);
  close(points.corner, [-1 - 0.25, -0.75, 0]);    // the corner of local +x, +y
  const out = 0.1 / Math.SQRT2;                    // the knob 0.1 m out along the diagonal
  close(points.scale, [-1.25 - out, -0.75 + out, 0]);
  assert.ok(Math.abs(edit.angleAbout([0, 0], [1, 0], [0, 1]) - Math.PI / 2) < 1e-12);
  assert.ok(Math.abs(edit.angleAbout([0, 0], [1, 0], [0, -2]) + Math.PI / 2) < 1e-12);
  assert.ok(Math.abs(edit.angleAbout([0, 0], [-1, 0.01], [-1, -0.01]) - 0.02) < 1e-4);  // across ±π: small
  assert.ok(Math.abs(edit.snapAngle(0.3) - edit.TURN_RAD) < 1e-12);
  assert.equal(edit.scaleRatio([1, 1], [2, 1], [1, 4]), 3);
  assert.equal(edit.scaleRatio([1, 1], [1, 1], [5, 5]), 1);  // from the centre: no ratio
  assert.equal(edit.scaleFactor(2, 1), 2);
  assert.equal(edit.scaleFactor(100, 2), edit.MAX_SCALE / 2);
  assert.equal(edit.scaleFactor(0.001, 1), edit.MIN_SCALE);
  assert.equal(edit.scaleFactor(-1, 1), 1);
  assert.ok(Math.abs(edit.scaleFactor(1.23, 1, { snap: true }) - 1.2) < 1e-12);
  assert.ok(Math.abs(2 * edit.scaleFactor(1.26, 2, { snap: true }) - 2.5) < 1e-12);  // the scale, not the ratio
});

test("a handle drag: a turn or a resize from the state it began in, one step, undone at once", () => {
  const start = edit.moveBy(edit.emptyEdit(), "o3", [0.5, 0, 0]);
  let history = edit.createHistory(start);
  for (const angle of [0.2, 0.9, Math.PI / 2]) history = edit.preview(history, edit.dragged(start, "o3", "turn", angle));
  history = edit.commit(history, start);
  assert.equal(edit.entryOf(history.present, 3).rotation, Math.PI / 2);
  assert.equal(history.past.length, 1);
  assert.ok(Math.abs(edit.entryOf(edit.dragged(start, "o3", "turn", 0.3, { snap: true }), 3).rotation - edit.TURN_RAD) < 1e-12);
  const turned = history.present;
  const scaled = edit.dragged(turned, "o3", "scale", 1.5);
  close(edit.entryOf(scaled, 3).scale, [1.5, 1.5, 1.5]);
  assert.deepEqual(edit.toSchema(scaled).objects, [{ instance_id: 3, translation: [0.5, 0, 0], rotation: 1.5708, scale: 1.5 }]);
  close(edit.entryOf(edit.dragged(edit.scaleBy(turned, "o3", 4), "o3", "scale", 5), 3).scale, [10, 10, 10]);
  history = edit.commit(edit.preview(history, scaled), turned);
  assert.deepEqual(edit.undo(history).present, turned);
  const { state, key } = edit.addBox(edit.emptyEdit(), objects, "stool", [0, 0, 0]);
  const grown = edit.boxOf(objects, edit.dragged(state, key, "scale", 2), key);
  close(grown.size, [1, 1, 1]);
  close(grown.center, [0, 0, 0.5]);  // about its bottom centre
  assert.deepEqual(edit.dragged(state, key, "move", [1, 0, 0]), edit.moveBy(state, key, [1, 0, 0]));
});

test("the layer: the selected box's handles turn and resize it by the pointer", () => {
  const { viewer } = fakeViewer();
  const events = [];
  const layer = changeEditLayer(viewer, objects, {
    pick: (key) => events.push(["pick", key]),
    drag: (phase, value, kind) => events.push([phase, kind, value]),
    place: () => {},
  });
  const after = edit.afterBoxes(objects, edit.emptyEdit());
  layer.draw(after, null);
  assert.equal(layer.handleOf("turn"), null);
  layer.draw(after, "o2");  // the table at (1, 1), 1.2 x 0.8, not turned: its turn handle at (1.8, 1)
  close(layer.handlePointOf("turn"), [1.8, 1, 0]);
  const [x, y] = layer.handleOf("turn");
  close([x, y], [95, 25]);
  const [cx, cy] = layer.screenOf([1, 1, 0]);
  const press = (from, to) => {
    viewer.element.dispatchEvent(pointerEvent("pointerdown", viewer.canvas, ...from));
    window.dispatchEvent(pointerEvent("pointermove", viewer.canvas, (from[0] + to[0]) / 2, (from[1] + to[1]) / 2));
    window.dispatchEvent(pointerEvent("pointermove", viewer.canvas, ...to));
    window.dispatchEvent(pointerEvent("pointerup", viewer.canvas, ...to));
    viewer.element.dispatchEvent(pointerEvent("click", viewer.canvas, ...to));
  };
  press([x, y], [cx, cy - (x - cx)]);  // a quarter turn counter-clockwise seen from above
  assert.deepEqual(events[0], ["start", "turn", undefined]);
  assert.ok(Math.abs(events.at(-2)[2] - Math.PI / 2) < 1e-6);
  assert.deepEqual(events.at(-1), ["end", "turn", undefined]);
  events.length = 0;
  const [sx, sy] = layer.handleOf("scale");  // beyond the corner (1.6, 1.4), 0.1 m out along the diagonal
  close(layer.handlePointOf("corner"), [1.6, 1.4, 0]);
  assert.ok(sx > 90 && sy < 15);
  press([sx, sy], [cx + 2 * (sx - cx), cy + 2 * (sy - cy)]);
  assert.equal(events[0][1], "scale");
  assert.ok(Math.abs(events.at(-2)[2] - 2) < 1e-6);
  assert.equal(events.filter((e) => e[0] === "pick").length, 0);  // a handle drag picks nothing
  layer.dispose();
});

// The points the viewer holds (pointcloud-levels.js) and its still frame (stillFrame in
// pointcloud-splat.js): what the levels cost, their colours as shown, their extent, and a splat
// that adds a level without redrawing the others and starts over when the view or colours change.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as THREE from "three";

const { heldLevels, pointsExtent } = await import("../../frontend/static/hypolab/pointcloud-levels.js");
const { instancePixel, pixel, stillFrame } = await import("../../frontend/static/hypolab/pointcloud-splat.js");

// Points given as [x, y, z] in quantised units, with one colour and instance id each.
function level(points, colour = [10, 20, 30], id = 0) {
  const quantised = Uint16Array.from(points.flatMap((p) => [...p, 0]));
  const rgb = Uint8Array.from(points.flatMap(() => [...colour, 255]));
  const instance = Uint16Array.from(points.map(() => id));
  return { count: points.length, quantised, rgb, instance };
}

test("the levels held say how many points and bytes they are, and when every level is in", () => {
  const element = { dataset: {} };
  const held = heldLevels(element, {}, { levelCounts: [2, 3] });
  held.add(level([[0, 0, 0], [1, 1, 1]]));
  assert.deepEqual(element.dataset, { pointsDrawn: "2", residentBytes: String(2 * (8 + 4 + 2)), nodes: "1" });
  assert.equal(held.allIn(), false);
  held.add(level([[2, 2, 2], [3, 3, 3], [4, 4, 4]]));
  assert.equal(element.dataset.pointsDrawn, "5");
  assert.equal(held.levels.length, 2);
  assert.equal(held.allIn(), true);
});

test("an octree's nodes are not all in before the loader says so", () => {
  const held = heldLevels({ dataset: {} }, { octree: { nodes: [] } }, { levelCounts: [1] });
  held.add(level([[0, 0, 0]]));
  assert.equal(held.allIn(), false);
  assert.equal(held.octree, null);
});

test("colours are the file's RGB bytes, or one colour per instance made once and counted", () => {
  const element = { dataset: {} };
  const held = heldLevels(element, {}, { levelCounts: [1] });
  const points = level([[0, 0, 0], [1, 0, 0]], [10, 20, 30], 7);
  points.instance[1] = 0; // the structure
  held.add(points);
  assert.deepEqual([...held.colours(points, false)], [pixel([10, 20, 30]), pixel([10, 20, 30])]);
  const before = Number(element.dataset.residentBytes);
  const byInstance = held.colours(points, true);
  assert.deepEqual([...byInstance], [instancePixel(7), instancePixel(0)]);
  assert.notEqual(instancePixel(7), instancePixel(0));
  assert.equal(held.colours(points, true), byInstance);
  assert.equal(Number(element.dataset.residentBytes), before + 8);
});

test("the extent is the points' real box in metres, and the origin alone for no points", () => {
  const cloud = { origin: [1, 2, 3], step: [0.5, 0.25, 2] };
  const box = pointsExtent(level([[2, 8, 1], [4, 0, 3]]), cloud);
  assert.deepEqual(box.min.toArray(), [2, 2, 5]);
  assert.deepEqual(box.max.toArray(), [3, 4, 9]);
  const empty = pointsExtent(level([]), cloud);
  assert.deepEqual([empty.min.toArray(), empty.max.toArray()], [[1, 2, 3], [1, 2, 3]]);
});

// A 4 x 4 drawing buffer looking down at quantised units from above: (x, y) lands on pixel (x, y).
function view() {
  const renderer = { getDrawingBufferSize: (size) => size.set(4, 4) };
  const camera = new THREE.OrthographicCamera(0, 4, 4, 0, 0.1, 100);
  camera.position.set(0, 0, 50);
  const still = stillFrame(renderer, { size: 0.01 }, [0, 0, 0]);
  return { still, camera };
}
const shown = (l) => new Uint32Array(l.rgb.buffer, 0, l.count);
const at = (texture, x, y) => new Uint32Array(texture.image.data.buffer)[y * 4 + x];

test("a still frame splats the nearest point per pixel over the background", () => {
  const { still, camera } = view();
  const far = level([[1, 2, 0]], [200, 0, 0]);
  const near = level([[1, 2, 5]], [0, 200, 0]);
  const texture = still.update(camera, [far, near], "rgb", shown);
  assert.equal(at(texture, 1, 2), pixel([0, 200, 0]));
  assert.equal(at(texture, 3, 3), pixel([0, 0, 0]));
});

test("a level that arrives is splatted into the frame; a new view or colour mode starts it over", () => {
  const { still, camera } = view();
  const first = level([[0, 0, 0]], [200, 0, 0]);
  const levels = [first];
  const texture = still.update(camera, levels, "rgb", shown);
  const version = texture.version;
  assert.equal(still.update(camera, levels, "rgb", shown), texture);
  assert.equal(texture.version, version); // nothing new: the splat is reused

  first.rgb.set([9, 9, 9]); // seen only if the first level is splatted again
  levels.push(level([[3, 3, 0]], [0, 0, 200]));
  still.update(camera, levels, "rgb", shown);
  assert.equal(at(texture, 0, 0), pixel([200, 0, 0]));
  assert.equal(at(texture, 3, 3), pixel([0, 0, 200]));

  still.update(camera, levels, "instance", shown);
  assert.equal(at(texture, 0, 0), pixel([9, 9, 9]));

  first.rgb.set([7, 7, 7]);
  still.invalidate(); // a level left the set
  still.update(camera, levels, "instance", shown);
  assert.equal(at(texture, 0, 0), pixel([7, 7, 7]));

  camera.position.x = 1;
  still.update(camera, levels, "instance", shown);
  assert.equal(at(texture, 0, 0), pixel([0, 0, 0]));
  still.dispose();
});

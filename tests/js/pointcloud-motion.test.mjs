// The viewer's moving frames (pointcloud-motion.js): when the camera counts as moving, and level 0
// thinned along its order while moving frames take too long on the GPU.
import assert from "node:assert/strict";
import { mock, test } from "node:test";

import * as THREE from "three";

const { cameraMotion, levelZeroPoints, nextMotionStride, SETTLE_MS } = await import(
  "../../frontend/static/hypolab/pointcloud-motion.js");

test("the thinning doubles over the GPU budget, halves well under it, and stays between 1 and 16", () => {
  assert.equal(nextMotionStride(1, 100), 2);
  assert.equal(nextMotionStride(16, 500), 16);
  assert.equal(nextMotionStride(4, 10), 2);
  assert.equal(nextMotionStride(1, 10), 1);
  assert.equal(nextMotionStride(4, 50), 4); // within the budget's band: no flapping
});

test("a change moves the camera until SETTLE_MS after the last one, never while a drag is on", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let redraws = 0;
  const motion = cameraMotion(() => { redraws += 1; });
  motion.change();
  assert.equal(motion.moving, true);
  assert.equal(redraws, 1);
  t.mock.timers.tick(SETTLE_MS - 1);
  motion.change(); // a later change puts the settle off
  t.mock.timers.tick(SETTLE_MS - 1);
  assert.equal(motion.moving, true);
  t.mock.timers.tick(1);
  assert.equal(motion.moving, false);
  assert.equal(redraws, 3); // two changes and the still frame

  motion.start();
  motion.change();
  t.mock.timers.tick(10 * SETTLE_MS); // a slow drag is no pause
  assert.equal(motion.moving, true);
  motion.end();
  t.mock.timers.tick(SETTLE_MS);
  assert.equal(motion.moving, false);

  motion.change();
  motion.stop();
  assert.equal(motion.moving, false);
  const before = redraws;
  t.mock.timers.tick(SETTLE_MS);
  assert.equal(redraws, before); // no settle left to draw
});

function levelZero(count = 10) {
  const quantised = new Uint16Array(4 * count).map((_, i) => (i % 4 === 3 ? 0 : i));
  const rgb = new Uint8Array(4 * count).fill(200);
  const cloud = { step: [0.01, 0.02, 0.03], origin: [1, 2, 3] };
  return { level: { count, quantised, rgb }, cloud };
}

test("level 0 is in metres by its transform, and a moving frame shows it whole or thinned", () => {
  const { level, cloud } = levelZero();
  const gpu = levelZeroPoints(level, cloud, new THREE.PointsMaterial());
  const [whole, thinned] = gpu.objects;
  assert.deepEqual(new THREE.Vector3(100, 100, 100).applyMatrix4(gpu.matrix).toArray().map((v) => +v.toFixed(6)), [2, 4, 6]);
  assert.equal(thinned.geometry.getAttribute("position"), whole.geometry.getAttribute("position"));
  gpu.show(false);
  assert.deepEqual([whole.visible, thinned.visible], [false, false]);
  gpu.show(true);
  assert.deepEqual([whole.visible, thinned.visible], [true, false]);

  assert.equal(gpu.adapt(200), true);
  assert.equal(gpu.stride, 2);
  assert.deepEqual([...thinned.geometry.index.array], [0, 2, 4, 6, 8]);
  gpu.show(true);
  assert.deepEqual([whole.visible, thinned.visible], [false, true]);
  assert.equal(gpu.adapt(50), false);
  gpu.adapt(200);
  assert.deepEqual([...thinned.geometry.index.array], [0, 4, 8]);
  gpu.dispose();
});

test("colours by mode are made once and shared by the whole and the thinned level", () => {
  const { level, cloud } = levelZero(3);
  const gpu = levelZeroPoints(level, cloud, new THREE.PointsMaterial());
  const [whole, thinned] = gpu.objects;
  const rgb = whole.geometry.getAttribute("color");
  const made = mock.fn(() => Uint32Array.of(1, 2, 3));
  gpu.colour("instance", made);
  gpu.colour("rgb", made);
  gpu.colour("instance", made);
  assert.equal(made.mock.callCount(), 1);
  const instance = whole.geometry.getAttribute("color");
  assert.notEqual(instance, rgb);
  assert.equal(thinned.geometry.getAttribute("color"), instance);
  assert.deepEqual([...instance.array.slice(0, 4)], [...new Uint8Array(Uint32Array.of(1).buffer)]);
  gpu.colour("rgb", made);
  assert.equal(whole.geometry.getAttribute("color"), rgb);
});

/**
 * Moving frames of the point-cloud viewer (pointcloud-viewer.js): when the camera counts as moving,
 * and what a moving frame draws. While the camera moves WebGL draws level 0 (a GPU beats the CPU
 * splat there); should a moving frame still take over MOTION_BUDGET_MS of GPU time (a slow or busy
 * machine), every 2nd, 4th, ... point of level 0 is drawn instead: along the Morton order that stays
 * a uniform thinning.
 */
import * as THREE from "three";

import { cloudGeometry } from "./pointcloud-gpu.js";

export const SETTLE_MS = 180;
// GPU time one frame may take while the camera moves; over it, fewer points of level 0 are drawn.
const MOTION_BUDGET_MS = 70;
const MAX_MOTION_STRIDE = 16;

/** The thinning of the next moving frames, from the GPU time of the last one at `stride`. */
export function nextMotionStride(stride, gpuMs) {
  if (gpuMs > MOTION_BUDGET_MS * 1.3 && stride < MAX_MOTION_STRIDE) return stride * 2;
  if (gpuMs < MOTION_BUDGET_MS / 2.5 && stride > 1) return stride / 2;
  return stride;
}

/**
 * Whether the camera moves: a change of the controls starts a motion, which settles SETTLE_MS
 * after the last change; never while a drag is on, however slow the frames are (a slow frame must
 * not look like a pause). `redraw()` is called whenever a frame should show the new state.
 */
export function cameraMotion(redraw) {
  let moving = false;
  let dragging = false;
  let settleTimer = 0;
  const change = () => {
    moving = true;
    redraw();
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      if (dragging) return;
      moving = false;
      redraw();
    }, SETTLE_MS);
  };
  return {
    get moving() {
      return moving;
    },
    change,
    start() {
      dragging = true;
    },
    end() {
      dragging = false;
      change();
    },
    /** Still at once, with no settle pending. */
    stop() {
      moving = false;
      clearTimeout(settleTimer);
    },
  };
}

/**
 * Level 0 on the GPU, in metres by the objects' transform (`matrix` dequantises), as two objects:
 * the whole level and the thinned one, an index of every stride-th point over the same buffers.
 * `show(moving)` makes the one the frame needs visible (neither in a still frame).
 */
export function levelZeroPoints(level, cloud, material) {
  const whole = new THREE.Points(cloudGeometry(level.quantised, level.rgb), material);
  whole.scale.set(...cloud.step);
  whole.position.set(...cloud.origin);
  whole.frustumCulled = false;
  whole.updateMatrix();
  const thinned = new THREE.Points(new THREE.BufferGeometry(), material);
  thinned.geometry.setAttribute("position", whole.geometry.getAttribute("position"));
  thinned.scale.copy(whole.scale);
  thinned.position.copy(whole.position);
  thinned.frustumCulled = false;
  const colours = new Map([["rgb", whole.geometry.getAttribute("color")]]); // by colour mode
  const strideIndex = new Map();
  let stride = 1;
  return {
    objects: [whole, thinned],
    matrix: whole.matrix,
    get stride() {
      return stride;
    },
    show(moving) {
      const thin = moving && stride > 1;
      whole.visible = moving && !thin;
      thinned.visible = thin;
    },
    /** Adapts the thinning to the GPU time of a moving frame; true when it changed. */
    adapt(gpuMs) {
      const next = nextMotionStride(stride, gpuMs);
      if (next === stride) return false;
      stride = next;
      if (!strideIndex.has(stride)) {
        const index = Uint32Array.from({ length: Math.ceil(level.count / stride) }, (_, i) => i * stride);
        strideIndex.set(stride, new THREE.BufferAttribute(index, 1));
      }
      if (stride > 1) thinned.geometry.setIndex(strideIndex.get(stride));
      return true;
    },
    /** Colours both by `mode`; `pixels()` gives the level's colours as shown, made once per mode. */
    colour(mode, pixels) {
      if (!colours.has(mode)) colours.set(mode, new THREE.BufferAttribute(new Uint8Array(pixels().buffer), 4, true));
      for (const points of [whole, thinned]) points.geometry.setAttribute("color", colours.get(mode));
    },
    dispose() {
      for (const points of [whole, thinned]) points.geometry.dispose();
    },
  };
}

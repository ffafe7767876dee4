/**
 * The viewer's WebGL side (pointcloud-viewer.js): the renderer and the points' material, built while
 * the file loads, the points' geometry (positions as uint16 and colours as sRGB bytes, both padded
 * to four components: software GL converts 3-component 16- and 8-bit formats on the CPU), and a
 * promise of the GPU having drawn a frame.
 */
import * as THREE from "three";

import { objectBox, RED } from "./pointcloud-boxes.js";
import { splatTexture } from "./pointcloud-splat.js";

export function cloudGeometry(quantised, rgb) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.BufferAttribute(quantised, 4));
  geometry.setAttribute("color", new THREE.BufferAttribute(rgb, 4, true));
  return geometry;
}

/**
 * The renderer and the points' material. What the first frame draws, a box over a background
 * texture, is drawn once by stand-ins: the shaders and the GL pipelines get built in the GPU
 * process while the file loads (three.js caches programs by material and layout, so the boxes
 * and the splat reuse them).
 */
export function prepareGpu() {
  const renderer = new THREE.WebGLRenderer({ antialias: false });
  renderer.outputColorSpace = THREE.LinearSRGBColorSpace;
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  // Sized once level 0 gives the real extent of the points.
  const material = new THREE.PointsMaterial({ size: 0.01, vertexColors: true, sizeAttenuation: true });
  const box = objectBox({ center: [0, 0, -2], size: [1, 1, 1] }, RED);
  const standIn = new THREE.Scene().add(box);
  standIn.background = splatTexture(new Uint32Array(1), 1, 1);
  renderer.render(standIn, new THREE.PerspectiveCamera());
  box.material.dispose();
  standIn.background.dispose();
  return { renderer, material };
}

/**
 * Draw a one-point stand-in with the points' attribute layout, off screen, so that the first
 * moving frame finds their shader and GL pipeline built; still frames do not need them.
 */
export function preparePoints(renderer, material) {
  const standIn = new THREE.Points(cloudGeometry(new Uint16Array(4), new Uint8Array(4)), material);
  const target = new THREE.WebGLRenderTarget(1, 1);
  renderer.setRenderTarget(target);
  renderer.render(new THREE.Scene().add(standIn), new THREE.PerspectiveCamera());
  renderer.setRenderTarget(null);
  target.dispose();
  standIn.geometry.dispose();
}

/** Resolves once the GPU has finished every command issued so far, without blocking the page. */
export function whenDrawn(gl) {
  return new Promise((resolve) => {
    const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
    gl.flush();
    const poll = () => {
      // A sync's status only changes between tasks, so poll from timers.
      if (gl.clientWaitSync(sync, 0, 0) === gl.TIMEOUT_EXPIRED) {
        setTimeout(poll, 1);
        return;
      }
      gl.deleteSync(sync);
      resolve();
    };
    poll();
  });
}

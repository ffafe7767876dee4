/**
 * The point-cloud viewer's cameras (pointcloud-viewer.js): a perspective one that orbits, pans and
 * zooms, and a top-down orthographic one that pans and zooms only, each with its controls on the
 * canvas. One is active at a time (data-camera, the Top view button); a double click puts it back
 * where it was framed.
 */
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";

import { frameCamera, frameTopCamera } from "./pointcloud-boxes.js";

/**
 * The cameras over `canvas`; the controls report to `motion` (cameraMotion: start, change, end)
 * and `redraw()` asks for a frame after a switch.
 */
export function viewerCameras(element, canvas, topButton, { motion, redraw }) {
  const perspective = new THREE.PerspectiveCamera(50, 1, 0.01, 100);
  perspective.up.set(0, 0, 1); // before the controls are made: they orbit around camera.up
  const top = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.01, 100);
  const orbit = new OrbitControls(perspective, canvas);
  orbit.screenSpacePanning = true;
  const topControls = new OrbitControls(top, canvas);
  topControls.enableRotate = false;
  topControls.screenSpacePanning = true;
  topControls.enabled = false;
  let camera = perspective;
  let controls = orbit;
  let aspect = 1;

  const setTop = (on) => {
    camera = on ? top : perspective;
    controls.enabled = false;
    controls = on ? topControls : orbit;
    controls.enabled = true;
    element.dataset.camera = on ? "top" : "perspective";
    topButton.textContent = on ? "3D view" : "Top view";
    topButton.setAttribute("aria-pressed", String(on));
    redraw();
  };
  for (const each of [orbit, topControls]) {
    each.addEventListener("start", motion.start);
    each.addEventListener("change", motion.change);
    each.addEventListener("end", motion.end);
  }
  canvas.addEventListener("dblclick", () => controls.reset());
  topButton.addEventListener("click", () => setTop(camera !== top));

  return {
    perspective,
    top,
    orbit,
    get camera() {
      return camera;
    },
    /** Width over height of the canvas. */
    get aspect() {
      return aspect;
    },
    setTop,
    /** Both cameras on the extent of the points (a Box3 in metres). */
    frame(box) {
      frameCamera(perspective, orbit, box);
      frameTopCamera(top, topControls, box);
    },
    resize(width, height) {
      aspect = width / height;
      perspective.aspect = aspect;
      perspective.updateProjectionMatrix();
      // The top view keeps the framed extent in view along the canvas's shorter side.
      const extent = top.userData.extent || 1;
      Object.assign(top, { left: -extent * Math.max(aspect, 1), right: extent * Math.max(aspect, 1) });
      Object.assign(top, { top: extent / Math.min(aspect, 1), bottom: -extent / Math.min(aspect, 1) });
      top.updateProjectionMatrix();
    },
    dispose() {
      orbit.dispose();
      topControls.dispose();
    },
  };
}

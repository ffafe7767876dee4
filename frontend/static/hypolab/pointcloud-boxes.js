/**
 * The scene around the points in the viewer (pointcloud-viewer.js): object boxes, which one a ray
 * enters first (hover and click test boxes, not points), the scene's front from its world frame, and
 * the cameras framed on the points' extent.
 */
import * as THREE from "three";

import { displayColour } from "./pointcloud-splat.js";

// Display values, as every colour in the viewer.
export const HOVER_COLOUR = [255, 196, 0];
export const RED = [235, 40, 40];
export const SIDES = ["front", "right", "back", "left"];
export const Z_AXIS = new THREE.Vector3(0, 0, 1);

/** Line box of unit size, placed on an object {center, size, yaw} by position/scale/rotation. */
const UNIT_EDGES = new THREE.EdgesGeometry(new THREE.BoxGeometry(1, 1, 1));

export function objectBox(object, colour) {
  const lines = new THREE.LineSegments(UNIT_EDGES, new THREE.LineBasicMaterial({ color: displayColour(colour) }));
  placeBox(lines, object);
  return lines;
}

export function placeBox(lines, object) {
  lines.position.set(...object.center);
  lines.scale.set(...object.size.map((s) => Math.max(s, 1e-3)));
  lines.rotation.set(0, 0, object.yaw || 0);
  lines.updateMatrixWorld();
}

/** The object whose box the ray enters first, or null. Boxes may be turned by a yaw about Z. */
export function objectUnderRay(ray, objects) {
  let best = null;
  let bestDistance = Infinity;
  const local = new THREE.Ray();
  const hit = new THREE.Vector3();
  const box = new THREE.Box3();
  for (const object of objects) {
    const yaw = object.yaw || 0;
    const centre = new THREE.Vector3(...object.center);
    local.origin.copy(ray.origin).sub(centre).applyAxisAngle(Z_AXIS, -yaw);
    local.direction.copy(ray.direction).applyAxisAngle(Z_AXIS, -yaw);
    const half = new THREE.Vector3(...object.size).multiplyScalar(0.5);
    box.set(half.clone().negate(), half);
    if (local.intersectBox(box, hit)) {
      const distance = hit.distanceTo(local.origin);
      // Ties (the ray starts inside both): the smaller box is the more specific answer.
      const tie = Math.abs(distance - bestDistance) <= 1e-6;
      if (distance < bestDistance - 1e-6 || (tie && volume(object) < volume(best))) {
        best = object;
        bestDistance = distance;
      }
    }
  }
  return best;
}

function volume(object) {
  return object.size[0] * object.size[1] * object.size[2];
}

/**
 * Unit vector (x, y) of the scene's front, from the world frame: the anchor object lies on
 * `side` of the scene, seen from the scene's centre. Null when the frame says nothing usable.
 */
export function frontDirection(worldFrame, objects, centre) {
  if (!worldFrame) return null;
  const anchor = objects.find((o) => o.instance_id === worldFrame.anchor_instance_id);
  if (!anchor || !SIDES.includes(worldFrame.side)) return null;
  const dx = anchor.center[0] - centre.x;
  const dy = anchor.center[1] - centre.y;
  const length = Math.hypot(dx, dy);
  if (length < 1e-6) return null;
  const d = [dx / length, dy / length];
  // Sides as on the top-view map seen from the front (demo/): with front at the
  // bottom, left is the map's left, so left is front turned -90 degrees about Z.
  const front = { front: d, back: [-d[0], -d[1]], left: [-d[1], d[0]], right: [d[1], -d[0]] }[worldFrame.side];
  return new THREE.Vector3(front[0], front[1], 0);
}

export function frameCamera(camera, controls, box) {
  const center = box.getCenter(new THREE.Vector3());
  const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-3);
  // The bounding sphere is loose around a flat room: come a little closer than it asks.
  const distance = (radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2))) * 0.85;
  // From the front-left and above, so floor, furniture and two walls are all in view.
  const direction = new THREE.Vector3(-0.55, -0.95, 0.85).normalize();
  camera.position.copy(center).addScaledVector(direction, distance);
  camera.near = distance / 100;
  camera.far = distance * 10;
  camera.updateProjectionMatrix();
  controls.target.copy(center);
  controls.maxDistance = distance * 4;
  controls.update();
  controls.saveState();
}

export function frameTopCamera(camera, controls, box) {
  const center = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  camera.position.set(center.x, center.y, box.max.z + Math.max(size.z, 1));
  camera.up.set(0, 1, 0);
  camera.near = 0.01;
  camera.far = size.z + 2 * Math.max(size.z, 1);
  camera.userData.extent = Math.max(size.x, size.y) * 0.55;
  controls.target.set(center.x, center.y, box.min.z);
  controls.update();
  controls.saveState();
}

/** The red boxes in `scene`: `show(ids)` outlines the objects with these instance ids instead. */
export function redBoxes(scene, objects) {
  let shown = [];
  const clear = () => {
    for (const lines of shown) {
      scene.remove(lines);
      lines.material.dispose();
    }
    shown = [];
  };
  return {
    /** Returns how many boxes are shown. */
    show(instanceIds) {
      clear();
      const wanted = new Set(instanceIds || []);
      shown = objects.filter((o) => wanted.has(o.instance_id)).map((o) => objectBox(o, RED));
      for (const lines of shown) scene.add(lines);
      return shown.length;
    },
    dispose: clear,
  };
}

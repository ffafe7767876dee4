/**
 * The change editor's layer over the point-cloud viewer (the maths is change-editor.js, the page's
 * controls change-editor-panel.js): draws the boxes an edit touches (the edited box bright at its new place,
 * the original faint, a removed one faint red), and turns the pointer into the editor's events: a click on
 * a box picks it, a drag of the selected one moves it on the horizontal plane of its bottom (the camera's controls pause
 * meanwhile), and while a new object is being placed a press puts it on the floor or on the top of the box
 * under the pointer. Part of the viewer's bundle (exported by pointcloud-viewer.js), so three.js is one copy.
 */
import * as THREE from "three";

import { floorZ, rayToPlaneZ, topOf } from "./change-editor.js";
import { objectBox, objectUnderRay } from "./pointcloud-boxes.js";

// Display values, as every colour in the viewer.
const EDITED = [70, 220, 255];
const SELECTED = [120, 255, 120];
const ORIGINAL = [200, 200, 200];
const REMOVED = [235, 60, 60];
const DRAG_PX = 3; // a press that moves less than this is a click

/**
 * `viewer` is the handle of mountPointCloudViewer; `objects` the scene's boxes. Callbacks: `pick(key)`
 * (a box was clicked), `drag(phase, delta)` (phase "start" | "move" | "end"; delta [dx, dy, 0] from the
 * press), `place(point)` (the bottom centre for the object being placed). Returns {draw(boxes, selected),
 * placing (a label while placing, else null), forward(), screenOf(point), dispose()}.
 */
export function changeEditLayer(viewer, objects, { pick, drag, place }) {
  const { element, canvas } = viewer;
  const group = new THREE.Group();
  viewer.scene.add(group);
  const raycaster = new THREE.Raycaster();
  const pointer = new THREE.Vector2();
  const floor = floorZ(objects);
  let shown = [];
  let boxes = [];
  let press = null;
  let selectedKey = null;
  const layer = { placing: null };

  const rayAt = (event) => {
    const rect = canvas.getBoundingClientRect();
    pointer.set(((event.clientX - rect.left) / rect.width) * 2 - 1, -((event.clientY - rect.top) / rect.height) * 2 + 1);
    raycaster.setFromCamera(pointer, viewer.activeCamera);
    return raycaster.ray;
  };
  const array = (v) => [v.x, v.y, v.z];

  const standing = () => boxes.filter((b) => !b.removed);
  const onDown = (event) => {
    if (event.button !== 0 || event.target !== canvas) return;
    const ray = rayAt(event);
    press = { x: event.clientX, y: event.clientY, taken: false };
    if (layer.placing) {
      const hit = objectUnderRay(ray, standing());
      const point = rayToPlaneZ(array(ray.origin), array(ray.direction), hit ? topOf(hit) : floor);
      if (point) place(point);
      take(event);
      return;
    }
    // Only the selected box is dragged: a press elsewhere still orbits the camera.
    const hit = objectUnderRay(ray, standing());
    if (!hit || hit.key !== selectedKey) return;
    const plane = hit.center[2] - hit.size[2] / 2;
    Object.assign(press, { plane, grab: rayToPlaneZ(array(ray.origin), array(ray.direction), plane), moving: false });
    take(event);
  };
  // The camera's controls listen on the canvas: a press the editor takes never reaches them.
  const take = (event) => {
    press.taken = true;
    event.stopPropagation();
    event.preventDefault();
  };
  const onMove = (event) => {
    if (!press?.grab) return;
    if (!press.moving && Math.hypot(event.clientX - press.x, event.clientY - press.y) < DRAG_PX) return;
    const ray = rayAt(event);
    const at = rayToPlaneZ(array(ray.origin), array(ray.direction), press.plane);
    if (!at) return;
    if (!press.moving) { press.moving = true; drag("start"); }
    drag("move", [at[0] - press.grab[0], at[1] - press.grab[1], 0]);
  };
  const onUp = () => {
    if (press?.moving) drag("end");
    if (press) press.grab = null;
  };
  // A click (a press that did not move) picks the box under it, at its place after the edit; the viewer's
  // own picking (the original boxes) does not see it.
  const onClick = (event) => {
    const done = press;
    press = null;
    if (event.target !== canvas) return;
    if (!done || Math.hypot(event.clientX - done.x, event.clientY - done.y) >= DRAG_PX) {
      if (done?.taken) event.stopPropagation();
      return;
    }
    if (done.taken) { event.stopPropagation(); return; }
    const hit = objectUnderRay(rayAt(event), standing());
    if (hit) {
      event.stopPropagation();
      pick(hit.key);
    }
  };
  element.addEventListener("pointerdown", onDown, true);
  window.addEventListener("pointermove", onMove);
  window.addEventListener("pointerup", onUp);
  element.addEventListener("click", onClick, true);

  const clear = () => {
    for (const lines of shown) {
      group.remove(lines);
      lines.material.dispose();
    }
    shown = [];
  };
  const line = (box, colour, opacity = 1) => {
    const lines = objectBox(box, colour);
    if (opacity < 1) Object.assign(lines.material, { transparent: true, opacity });
    group.add(lines);
    shown.push(lines);
  };

  return Object.assign(layer, {
    /** Draws `boxes` (afterBoxes) with `selected` (a key) highlighted; they are also what a press tests. */
    draw(next, selected) {
      clear();
      boxes = next;
      selectedKey = selected;
      for (const box of boxes) {
        const isSelected = box.key === selected;
        if (box.removed) line(box.before, REMOVED, isSelected ? 0.9 : 0.5);
        else if (box.edited || isSelected) {
          if (box.before && box.edited) line(box.before, ORIGINAL, 0.35);
          line(box, isSelected ? SELECTED : EDITED);
        }
      }
      viewer.redraw();
    },
    /** The view's forward direction on the floor ([x, y]), for the arrow keys. */
    forward() {
      const camera = viewer.activeCamera;
      const direction = camera.getWorldDirection(new THREE.Vector3());
      if (Math.hypot(direction.x, direction.y) < 1e-3) direction.copy(camera.up).applyQuaternion(camera.quaternion);
      return [direction.x, direction.y];
    },
    /** Where the point ([x, y, z]) is on the page (clientX, clientY). */
    screenOf(point) {
      const rect = canvas.getBoundingClientRect();
      const v = new THREE.Vector3(...point).project(viewer.activeCamera);
      return [rect.left + ((v.x + 1) / 2) * rect.width, rect.top + ((1 - v.y) / 2) * rect.height];
    },
    dispose() {
      clear();
      viewer.scene.remove(group);
      element.removeEventListener("pointerdown", onDown, true);
      window.removeEventListener("pointermove", onMove);
      window.removeEventListener("pointerup", onUp);
      element.removeEventListener("click", onClick, true);
    },
  });
}

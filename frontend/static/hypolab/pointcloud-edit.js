/**
 * The change editor's layer over the point-cloud viewer (the maths is change-editor.js, the page's
 * controls change-editor-panel.js): draws the boxes an edit touches (the edited box bright at its new place,
 * the original faint, a removed one faint red), and turns the pointer into the editor's events: a click on
 * a box picks it, a drag of the selected one moves it on the horizontal plane of its bottom, a drag of its turn
 * handle (the ring beyond its front edge) turns it about the vertical and of its scale handle (the knob at a
 * corner) resizes it (the camera's controls pause meanwhile; Shift snaps), and while a new object is being
 * placed a press puts it on the floor or on the top of the box under the pointer. Part of the viewer's bundle (exported by pointcloud-viewer.js), so three.js is one copy.
 */
import * as THREE from "three";

import { angleAbout, floorZ, handlePoints, rayToPlaneZ, scaleRatio, topOf } from "./change-editor.js";
import { objectBox, objectUnderRay } from "./pointcloud-boxes.js";
import { displayColour } from "./pointcloud-splat.js";

// Display values, as every colour in the viewer.
const EDITED = [70, 220, 255];
const SELECTED = [120, 255, 120];
const ORIGINAL = [200, 200, 200];
const REMOVED = [235, 60, 60];
const HANDLE = [255, 170, 40];
const DRAG_PX = 3; // a press that moves less than this is a click
const HANDLE_PX = 12; // a press this close to a handle on the screen takes the handle
const HANDLE_KINDS = ["turn", "scale"];

/**
 * `viewer` is the handle of mountPointCloudViewer; `objects` the scene's boxes. Callbacks: `pick(key)`
 * (a box was clicked), `drag(phase, value, kind, {snap})` (phase "start" | "move" | "end"; kind "move" with
 * value [dx, dy, 0] from the press, "turn" with the angle about the box's centre from the press, "scale" with
 * the ratio of distances from the centre; snap while Shift is held), `place(point)` (the bottom centre for
 * the object being placed). Returns {draw(boxes, selected), placing (a label while placing, else null),
 * forward(), screenOf(point), handleOf(kind), handlePointOf(kind), dispose()}.
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
  let handles = null; // the selected box's handlePoints while it has handles
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
    // A handle of the selected box first (they sit on and beside its edges), then the box itself; a press
    // elsewhere still orbits the camera.
    const kind = handleUnder(event);
    if (kind) {
      const plane = handles.centre[2];
      const grab = rayToPlaneZ(array(ray.origin), array(ray.direction), plane) || handles[kind];
      Object.assign(press, { plane, grab, kind, centre: handles.centre, moving: false });
      take(event);
      return;
    }
    const hit = objectUnderRay(ray, standing());
    if (!hit || hit.key !== selectedKey) return;
    const plane = hit.center[2] - hit.size[2] / 2;
    Object.assign(press, { plane, grab: rayToPlaneZ(array(ray.origin), array(ray.direction), plane), kind: "move",
                           moving: false });
    take(event);
  };
  const handleUnder = (event) => {
    if (!handles) return null;
    // Within HANDLE_PX, and nearer the handle than the box's centre is (a box small on the screen stays draggable).
    let best = null;
    let bestPx = HANDLE_PX;
    const [cx, cy] = layer.screenOf(handles.centre);
    for (const kind of HANDLE_KINDS) {
      const [x, y] = layer.screenOf(handles[kind]);
      const px = Math.hypot(event.clientX - x, event.clientY - y);
      if (px <= bestPx && px < Math.hypot(x - cx, y - cy) / 2) { best = kind; bestPx = px; }
    }
    return best;
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
    const { kind, grab, centre } = press;
    if (!press.moving) { press.moving = true; drag("start", undefined, kind); }
    const value = kind === "turn" ? angleAbout(centre, grab, at) : kind === "scale" ? scaleRatio(centre, grab, at)
      : [at[0] - grab[0], at[1] - grab[1], 0];
    drag("move", value, kind, { snap: event.shiftKey });
  };
  const onUp = () => {
    if (press?.moving) drag("end", undefined, press.kind);
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
      if (lines.geometry && !lines.userData.shared) lines.geometry.dispose();
    }
    shown = [];
    handles = null;
  };
  // The handles: drawn over the points (no depth test), sized to the box so that they stay near it.
  const knob = (mesh, point) => {
    mesh.position.set(...point);
    mesh.renderOrder = 10;
    mesh.updateMatrixWorld();
    group.add(mesh);
    shown.push(mesh);
  };
  const handleMaterial = () => new THREE.MeshBasicMaterial({ color: displayColour(HANDLE), depthTest: false,
                                                             transparent: true, side: THREE.DoubleSide });
  const drawHandles = (box) => {
    handles = handlePoints(box);
    const r = Math.min(0.12, Math.max(0.04, Math.min(box.size[0], box.size[1]) / 4));
    knob(new THREE.Mesh(new THREE.RingGeometry(r * 0.55, r, 24), handleMaterial()), handles.turn);
    knob(new THREE.Mesh(new THREE.BoxGeometry(r, r, r), handleMaterial()), handles.scale);
    for (const [from, to] of [[handles.front, handles.turn], [handles.corner, handles.scale]]) {
      const arm = new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(...from), new THREE.Vector3(...to)]);
      const lines = new THREE.Line(arm, new THREE.LineBasicMaterial({ color: displayColour(HANDLE), depthTest: false }));
      lines.renderOrder = 10;
      group.add(lines);
      shown.push(lines);
    }
  };
  const line = (box, colour, opacity = 1) => {
    const lines = objectBox(box, colour);
    if (opacity < 1) Object.assign(lines.material, { transparent: true, opacity });
    lines.userData.shared = true; // objectBox's edges are one geometry for every box
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
        if (isSelected && !box.removed) drawHandles(box);
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
    /** Where the selected box's handle `kind` ("turn" | "scale") is on the page, or null when none is shown. */
    handleOf(kind) {
      return handles && handles[kind] ? layer.screenOf(handles[kind]) : null;
    },
    /** The handle's point in the scene ([x, y, z], on the box's bottom plane), its centre's with "centre". */
    handlePointOf(kind) {
      return handles && handles[kind] ? handles[kind].slice() : null;
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

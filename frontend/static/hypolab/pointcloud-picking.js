/**
 * Hover and click on the point-cloud viewer's objects (pointcloud-viewer.js): a ray from the pointer
 * against their boxes, not the points. The label under the pointer shows in the tooltip and as
 * data-hover-label; a click selects (data-selected-label, data-selected-instance, an
 * "hl-object-selected" event); the box hovered, else the one selected, is outlined.
 */
import * as THREE from "three";

import { HOVER_COLOUR, objectBox, objectUnderRay, placeBox } from "./pointcloud-boxes.js";

/**
 * Listens on `canvas` for the `objects` ({label, instance_id, center, size, yaw}) seen through
 * `camera()`, the active camera; `redraw()` asks for a frame. `hoverBox` is the outline to add
 * to the scene.
 */
export function objectPicking(element, canvas, tooltip, objects, { camera, redraw }) {
  const hoverBox = objectBox({ center: [0, 0, 0], size: [1, 1, 1] }, HOVER_COLOUR);
  hoverBox.visible = false;
  const pointer = new THREE.Vector2();
  const raycaster = new THREE.Raycaster();
  let hovered = null;
  let selected = null;
  const objectAt = (event) => {
    const rect = canvas.getBoundingClientRect();
    pointer.set(
      ((event.clientX - rect.left) / rect.width) * 2 - 1,
      -((event.clientY - rect.top) / rect.height) * 2 + 1,
    );
    raycaster.setFromCamera(pointer, camera());
    return objectUnderRay(raycaster.ray, objects);
  };
  const outline = (object) => {
    hoverBox.visible = Boolean(object);
    if (object) placeBox(hoverBox, object);
  };
  canvas.addEventListener("pointermove", (event) => {
    if (event.buttons) return; // dragging the camera, not pointing
    const object = objectAt(event);
    const rect = element.getBoundingClientRect();
    tooltip.hidden = !object;
    if (object) {
      tooltip.textContent = object.label;
      tooltip.style.left = `${event.clientX - rect.left + 12}px`;
      tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    }
    element.dataset.hoverLabel = object ? object.label : "";
    if (object !== hovered) {
      hovered = object;
      outline(hovered || selected);
      redraw(); // a still frame reuses its splat: only the boxes are drawn again
    }
  });
  canvas.addEventListener("pointerleave", () => {
    tooltip.hidden = true;
    element.dataset.hoverLabel = "";
    if (hovered) {
      hovered = null;
      outline(selected);
      redraw();
    }
  });
  canvas.addEventListener("click", (event) => {
    selected = objectAt(event);
    element.dataset.selectedLabel = selected ? selected.label : "";
    element.dataset.selectedInstance = selected ? String(selected.instance_id) : "";
    outline(selected);
    redraw();
    element.dispatchEvent(new CustomEvent("hl-object-selected", { detail: selected }));
  });
  return {
    hoverBox,
    dispose() {
      hoverBox.material.dispose();
    },
  };
}

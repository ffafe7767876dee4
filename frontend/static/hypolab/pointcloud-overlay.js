/**
 * The viewer's controls over the canvas (pointcloud-viewer.js): the toolbar (top view, colour by
 * instance), the hover tooltip and the compass of the scene's world frame.
 */
import * as THREE from "three";

import { SIDES, Z_AXIS } from "./pointcloud-boxes.js";

function button(text, title) {
  const node = document.createElement("button");
  node.type = "button";
  node.className = "hl-viewer-button";
  node.textContent = text;
  node.title = title;
  return node;
}

/** The overlay's elements, appended to `element`. */
export function viewerOverlay(element) {
  const overlay = document.createElement("div");
  overlay.className = "hl-viewer-overlay";
  const toolbar = document.createElement("div");
  toolbar.className = "hl-viewer-toolbar";
  const topButton = button("Top view", "Switch between the 3D view and a top-down orthographic view");
  const colourButton = button("Colour by instance", "Colour points by object instance or by their RGB");
  toolbar.append(topButton, colourButton);
  const tooltip = document.createElement("div");
  tooltip.className = "hl-topview-tooltip";
  tooltip.setAttribute("role", "tooltip");
  tooltip.hidden = true;
  const compass = document.createElement("div");
  compass.className = "hl-viewer-compass";
  compass.hidden = true;
  compass.title = "The scene's world frame";
  const compassLabels = SIDES.map((side) => {
    const label = document.createElement("span");
    label.textContent = side;
    label.dataset.side = side;
    compass.append(label);
    return label;
  });
  overlay.append(toolbar, compass, tooltip);
  element.append(overlay);
  return { overlay, topButton, colourButton, tooltip, compass, compassLabels };
}

/** Points each compass label the way its side of the scene lies on screen, around the points' centre. */
export function placeCompass(compassLabels, front, extentBox, camera, aspect) {
  const centre = extentBox.getCenter(new THREE.Vector3());
  const origin = centre.clone().project(camera);
  const reach = extentBox.getSize(new THREE.Vector3()).length() * 0.1;
  const turns = { front: 0, right: Math.PI / 2, back: Math.PI, left: -Math.PI / 2 };
  for (const label of compassLabels) {
    const direction = front.clone().applyAxisAngle(Z_AXIS, turns[label.dataset.side]);
    const tip = centre.clone().addScaledVector(direction, reach).project(camera);
    // Screen y grows downwards; NDC y upwards. Aspect keeps angles true on a wide canvas.
    const angle = Math.atan2(-(tip.y - origin.y), (tip.x - origin.x) * aspect);
    label.style.left = `${50 + 36 * Math.cos(angle)}%`;
    label.style.top = `${50 + 36 * Math.sin(angle)}%`;
  }
}

/**
 * The nodes of an HLPC octree (version 3) a view needs, within a point budget, as Potree chooses
 * them: starting from the root, the node that looks largest on screen next, as long as it is in the
 * frustum, is at least MIN_NODE_PX in radius on screen and its points still fit in the budget.
 * The loader keeps exactly those nodes: it drops the others before it fetches new ones, so the
 * points held never exceed the budget, whatever the size of the scan.
 */
import * as THREE from "three";

import { fetchNode } from "./hlpc.js";

// Also scenes/pointcloud.py VIEWER_BUDGET_POINTS: files up to it are read whole.
export const VIEWER_BUDGET_POINTS = 2_000_000;
// A node of 100k points this small on screen already draws several points per pixel.
const MIN_NODE_PX = 100;
// Range requests in flight at once: enough to hide a round trip, few enough to keep decoding smooth.
const MAX_REQUESTS = 4;

const sphere = new THREE.Sphere();
const frustum = new THREE.Frustum();
const clip = new THREE.Matrix4();

/** The node's cube in metres (kept on the node). */
function nodeBox(node, cloud) {
  if (!node.box) {
    const side = 2 ** (cloud.octree.top - node.depth);
    const corner = (k) => new THREE.Vector3(...node.cell.map((c, a) => cloud.origin[a] + (c + k) * side * cloud.step[a]));
    node.box = new THREE.Box3(corner(0), corner(1));
  }
  return node.box;
}

/** Radius on screen, in pixels of a drawing buffer `heightPx` high, of a node's bounding sphere. */
function screenRadius(camera, box, heightPx) {
  box.getBoundingSphere(sphere);
  if (camera.isOrthographicCamera) return (sphere.radius * camera.zoom * heightPx) / (camera.top - camera.bottom);
  const distance = sphere.center.distanceTo(camera.position);
  if (distance <= sphere.radius) return Infinity; // the camera is inside it
  const slope = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2));
  return (sphere.radius / Math.sqrt(distance ** 2 - sphere.radius ** 2) / slope) * (heightPx / 2);
}

/** The nodes to show for `camera`, root first, largest on screen next; their points fit `budget`. */
export function selectNodes(cloud, camera, heightPx, budget) {
  camera.updateMatrixWorld();
  frustum.setFromProjectionMatrix(clip.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse));
  const chosen = [];
  let total = 0;
  const queue = [{ node: cloud.octree.nodes[0], priority: Infinity }];
  while (queue.length) {
    let best = 0;
    for (let i = 1; i < queue.length; i++) if (queue[i].priority > queue[best].priority) best = i;
    const { node } = queue[best];
    queue[best] = queue[queue.length - 1];
    queue.pop();
    if (chosen.length && total + node.count > budget) break;
    chosen.push(node);
    total += node.count;
    for (const child of node.children) {
      const box = nodeBox(child, cloud);
      if (!frustum.intersectsBox(box)) continue;
      const priority = screenRadius(camera, box, heightPx);
      if (priority >= MIN_NODE_PX) queue.push({ node: child, priority });
    }
  }
  return chosen;
}

/**
 * Keeps the nodes the view needs: `update(camera, heightPx)` chooses them, calls `onEvict(level)`
 * for each held node no longer chosen, then fetches the missing ones and calls `onNode(level)` for
 * each that is still chosen when it arrives. `idle()`: nothing chosen is missing.
 */
export function octreeLoader(url, cloud, root, budget, { onNode, onEvict, onError }) {
  const held = new Map([[cloud.octree.nodes[0], root]]);
  const requested = new Set();
  let wanted = new Set(held.keys());
  let queue = [];
  const lastView = { matrix: new THREE.Matrix4(), heightPx: 0 };
  const pump = () => {
    while (requested.size < MAX_REQUESTS && queue.length) {
      const node = queue.shift();
      requested.add(node);
      fetchNode(url, node)
        .then((level) => {
          if (!wanted.has(node) || held.has(node)) return;
          held.set(node, level);
          onNode(level);
        })
        .catch((error) => {
          wanted.delete(node); // so the view can settle without it
          onError(error);
        })
        .finally(() => {
          requested.delete(node);
          pump();
        });
    }
  };
  return {
    held,
    update(camera, heightPx) {
      camera.updateMatrixWorld();
      clip.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse);
      if (clip.equals(lastView.matrix) && heightPx === lastView.heightPx) return; // the same view
      lastView.matrix.copy(clip);
      lastView.heightPx = heightPx;
      const chosen = selectNodes(cloud, camera, heightPx, budget);
      wanted = new Set(chosen);
      for (const [node, level] of held) {
        if (!wanted.has(node)) {
          held.delete(node);
          onEvict(level);
        }
      }
      queue = chosen.filter((node) => !held.has(node) && !requested.has(node));
      pump();
    },
    idle: () => [...wanted].every((node) => held.has(node)),
  };
}

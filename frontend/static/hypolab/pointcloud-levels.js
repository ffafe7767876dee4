/**
 * The points the viewer holds (pointcloud-viewer.js): a version 2 file's levels as they stream in,
 * or a version 3 file's octree nodes, which octreeLoader keeps within the point budget as the view
 * changes; what they cost (data-points-drawn, data-resident-bytes, data-nodes), their colours as
 * shown, and the real extent of the first.
 */
import * as THREE from "three";

import { octreeLoader } from "./pointcloud-octree.js";
import { instancePixel } from "./pointcloud-splat.js";

/**
 * The levels held, in order ({start, count, quantised, rgb, instance}), for `cloud` as streamHLPC
 * reads it; `source` is {url, budget, levelCounts}. `allIn()`: every level of the file, or every
 * octree node the view needs, is held.
 */
export function heldLevels(element, cloud, source) {
  const levels = [];
  const palette = new Map();
  let points = 0;
  let bytes = 0;
  let octree = null;
  let closed = false;
  const show = () => {
    element.dataset.pointsDrawn = String(points);
    element.dataset.residentBytes = String(bytes);
    element.dataset.nodes = String(levels.length);
  };
  // The bytes of a level's arrays: positions, colours, ids, and instance colours once made.
  const count = (level, sign) => {
    points += sign * level.count;
    bytes += sign * (level.quantised.byteLength + level.rgb.byteLength + level.instance.byteLength);
    bytes += sign * (level.instancePixels?.byteLength || 0);
    show();
  };
  const add = (level) => {
    levels.push(level);
    count(level, 1);
  };
  return {
    levels,
    add,
    get octree() {
      return octree;
    },
    allIn: () => (cloud.octree ? Boolean(octree?.idle()) : levels.length === source.levelCounts.length),
    /** A level's colours as shown, one pixel per point; instance colours are made when first asked for. */
    colours(level, byInstance) {
      if (!byInstance) return new Uint32Array(level.rgb.buffer, level.rgb.byteOffset, level.count);
      if (!level.instancePixels) {
        level.instancePixels = new Uint32Array(level.count);
        for (let i = 0; i < level.count; i++) {
          const id = level.instance[i];
          if (!palette.has(id)) palette.set(id, instancePixel(id));
          level.instancePixels[i] = palette.get(id);
        }
        bytes += level.instancePixels.byteLength;
        show();
      }
      return level.instancePixels;
    },
    /**
     * Starts holding the octree's nodes the view asks for, the root (levels[0]) held already:
     * `onNode()` after one is added, `onEvict()` after one is dropped, `onError(error)` when one
     * could not be loaded.
     */
    loadOctree({ onNode, onEvict, onError }) {
      octree = octreeLoader(source.url, cloud, levels[0], source.budget, {
        onNode: (level) => {
          if (closed) return;
          add(level);
          onNode();
        },
        onEvict: (level) => {
          levels.splice(levels.indexOf(level), 1);
          count(level, -1);
          onEvict();
        },
        onError,
      });
      element.dataset.pointBudget = String(source.budget);
    },
    /** Nodes that arrive later are not held. */
    close() {
      closed = true;
    },
  };
}

/**
 * The real bbox, in metres, of a level's quantised points; the quantisation box would frame the
 * cameras too, but is a little larger than the points.
 */
export function pointsExtent({ quantised: q }, cloud) {
  if (!q.length) return new THREE.Box3(new THREE.Vector3(...cloud.origin), new THREE.Vector3(...cloud.origin));
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < q.length; i += 4) {
    for (let axis = 0; axis < 3; axis++) {
      const v = q[i + axis];
      if (v < lo[axis]) lo[axis] = v;
      if (v > hi[axis]) hi[axis] = v;
    }
  }
  const metres = (corner) => new THREE.Vector3(...corner.map((v, axis) => cloud.origin[axis] + v * cloud.step[axis]));
  return new THREE.Box3(metres(lo), metres(hi));
}

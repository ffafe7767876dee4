/**
 * Point-cloud viewer for HLPC files (layout in scenes/pointcloud.py, read by hlpc.js).
 * Version 2 files hold disjoint levels: the file is read as a stream, level 0 (a uniform sample) is
 * drawn as soon as its bytes are in, and each further level is added to the frame on screen as it
 * arrives, so one level is decompressed while the previous one is drawn.
 *
 * Version 3 files (scans over the point budget, default 2M points) are octrees: the stream stops
 * after the root node, which plays level 0; once the first frame is on screen, and at each still
 * frame after the camera moved, pointcloud-octree.js chooses the nodes in view at the detail the
 * view needs within the budget, drops the others and fetches the missing ones by range request.
 * The points held (data-points-drawn) never exceed the budget.
 *
 * A still frame (the camera has not moved for SETTLE_MS) is splatted on the CPU
 * (pointcloud-splat.js): every point is projected, depth-tested against a z-buffer and written
 * into a pixel buffer, which WebGL shows as the scene's background texture under the boxes.
 * Software GL (SwiftShader) takes about 1 us per point; the splat takes tens of ns, and a level
 * that arrives is splatted into the same buffers (the z-buffer makes the order irrelevant). A
 * frame whose camera, size and colours have not changed (hover, click) reuses the splat.
 *
 * While the camera moves WebGL draws level 0 over its own background instead (a GPU beats the
 * CPU there), thinned while a moving frame takes too long (pointcloud-motion.js). It renders only
 * when something changes, never in a busy loop (pointcloud-frames.js).
 *
 * Positions stay uint16 (the object's scale and position, or the splat's matrix, dequantise
 * them) and colours stay sRGB bytes: the renderer outputs "linear", so the bytes reach the
 * screen unchanged. On the GPU both are padded to four components: software GL (ANGLE on
 * SwiftShader) converts 3 x 16-bit and 3 x 8-bit vertex formats on the CPU, which made the first
 * frame twice as slow.
 *
 * Also: orbit / pan / zoom, a top-down orthographic toggle, colour by RGB or by instance, hover
 * and click on objects (a ray against their boxes, not the points) with the label shown and the
 * box outlined, red boxes for a set of objects, and a compass of the scene's world frame.
 *
 * Element data attributes: data-loaded "true" once the first level is drawn ("error" on
 * failure, the status text says why), data-point-count (points in the file), data-points-drawn
 * (points held and drawn in still frames), data-resident-bytes (the bytes of their arrays),
 * data-point-budget, data-nodes (octree nodes held), data-complete "true" when all levels (an
 * octree: all nodes the view needs) are drawn, data-hover-label, data-selected-label,
 * data-camera ("perspective" | "top"), data-colour ("rgb" | "instance"), data-frames (frames
 * rendered), data-motion-stride (the thinning of moving frames). Performance marks:
 * "hl-viewer:first-frame" and "hl-viewer:full-frame", each once the GPU has finished that frame.
 */
import * as THREE from "three";

import { streamHLPC } from "./hlpc.js";
import { frontDirection, redBoxes } from "./pointcloud-boxes.js";
import { viewerCameras } from "./pointcloud-cameras.js";
import { frameLoop } from "./pointcloud-frames.js";
import { prepareGpu, preparePoints, whenDrawn } from "./pointcloud-gpu.js";
import { heldLevels, pointsExtent } from "./pointcloud-levels.js";
import { cameraMotion, levelZeroPoints } from "./pointcloud-motion.js";
import { VIEWER_BUDGET_POINTS } from "./pointcloud-octree.js";
import { placeCompass, viewerOverlay } from "./pointcloud-overlay.js";
import { objectPicking } from "./pointcloud-picking.js";
import { displayColour, stillFrame } from "./pointcloud-splat.js";

// The change editor's layer travels in this bundle, beside the one copy of three.js.
export { changeEditLayer } from "./pointcloud-edit.js";

// Colours are passed through as display bytes (see above), so these are display values too.
const BACKGROUND = [0x1d, 0x1f, 0x24];

// The viewer shown in each element, so mounting again (next item) frees the previous GL context.
const mounted = new WeakMap();

/**
 * Fetch the HLPC file at `pointsUrl` and draw it inside `element` (which sets the size).
 * `scene` (optional) is the page's scene data (scenes/viewer.py): `objects` with boxes for
 * hover and click, `world_frame` for the compass; `redBoxes` lists instance ids outlined in red;
 * `pointBudget` the most points held at once (an octree file's; default VIEWER_BUDGET_POINTS).
 * Resolves, once the first level is drawn, to a handle with the three.js objects, the decoded
 * levels, `showBoxes(ids)`, `setColourMode(mode)`, `setTopView(on)`, `loaded` (a promise of the
 * cloud, once the stream is read), `element`, `canvas`, `activeCamera`, `redraw()` (for layers drawn over it)
 * and `dispose()`; resolves to null when loading fails (the element shows the
 * reason) or when a newer mount on the same element took over. Mounting again disposes the
 * previous viewer.
 */
export async function mountPointCloudViewer(element, pointsUrl, scene = {}) {
  mounted.get(element)?.dispose();
  const claim = { dispose() {} };
  mounted.set(element, claim);
  element.classList.add("hl-pointcloud");
  element.dataset.loaded = "false";
  element.dataset.complete = "false";
  const status = document.createElement("div");
  status.className = "hl-viewer-status";
  status.setAttribute("role", "status");
  status.textContent = "Loading point cloud…";
  element.replaceChildren(status);
  const objects = (scene.objects || []).filter((o) => o.center && o.size);

  let viewer = null;
  let gpu = null;
  let firstLevel = null;
  const firstDrawn = new Promise((resolve) => {
    firstLevel = resolve;
  });
  const stale = () => mounted.get(element) !== claim && mounted.get(element) !== viewer?.handle;
  const fail = (error) => {
    firstLevel(null);
    if (!viewer) gpu?.renderer.dispose();
    if (stale()) return null;
    viewer?.dispose();
    element.dataset.loaded = "error";
    status.hidden = false;
    status.classList.add("hl-error");
    status.textContent = `Could not show the point cloud: ${error.message}`;
    return null;
  };

  const loaded = (async () => {
    if (!pointsUrl) throw new Error("this scene has no point cloud");
    const fetched = fetch(pointsUrl);
    // The GL context and the shaders of the first frame get ready while the file comes in.
    gpu = prepareGpu();
    const response = await fetched;
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    return streamHLPC(
      response,
      (cloud, levelCounts) => {
        if (stale()) throw new Error("replaced");
        const onFirstFrame = () => firstLevel(stale() ? null : viewer.handle);
        // Nodes are read from the URL the page names, not the one a redirect led to: on a bucket it
        // is the download API, which signs a fresh URL whenever the last one would have expired.
        const source = { url: pointsUrl, budget: scene.pointBudget || VIEWER_BUDGET_POINTS, levelCounts };
        viewer = createViewer(element, status, gpu, cloud, source, objects, scene, onFirstFrame);
        mounted.set(element, viewer.handle);
      },
      (level, index) => {
        if (stale()) throw new Error("replaced");
        viewer.addLevel(level, index);
        // Level 1 is decoded once level 0 is on screen: on two cores, decoding it meanwhile held
        // the first frame back by 100 ms.
        if (index === 0) return firstDrawn;
      },
    );
  })().catch(fail);
  const handle = await firstDrawn;
  if (handle) handle.loaded = loaded;
  return handle;
}

/**
 * The viewer of one stream, put together from its parts: the points held (pointcloud-levels.js),
 * the cameras (pointcloud-cameras.js), moving frames (pointcloud-motion.js), still frames
 * (pointcloud-splat.js), hover and click (pointcloud-picking.js), the red boxes and the compass;
 * it draws a frame from them when pointcloud-frames.js says, and at each new size of the element.
 */
function createViewer(element, status, gpu, cloud, source, objects, sceneData, onFirstFrame) {
  const { renderer, material } = gpu;
  const gl = renderer.getContext();
  const canvas = renderer.domElement;
  const scene = new THREE.Scene();
  const background = displayColour(BACKGROUND);
  let levelZero = null; // level 0 on the GPU, drawn while the camera moves
  let extentBox = null; // the points' real bbox, known once level 0 is in
  let front = null; // the scene's front, for the compass
  let byInstance = false;
  let disposed = false;

  element.append(canvas);
  const redraw = () => loop.request();
  const motion = cameraMotion(redraw);
  const held = heldLevels(element, cloud, source);
  const { overlay, topButton, colourButton, tooltip, compass, compassLabels } = viewerOverlay(element);
  const cameras = viewerCameras(element, canvas, topButton, { motion, redraw });
  const picking = objectPicking(element, canvas, tooltip, objects, { camera: () => cameras.camera, redraw });
  scene.add(picking.hoverBox);
  const red = redBoxes(scene, objects);
  const still = stillFrame(renderer, material, BACKGROUND);
  const bufferSize = new THREE.Vector2();

  const draw = () => {
    const { camera } = cameras;
    levelZero.show(motion.moving);
    if (motion.moving) {
      scene.background = background;
      renderer.render(scene, camera);
      const issued = performance.now();
      whenDrawn(gl).then(() => {
        if (!disposed && levelZero.adapt(performance.now() - issued)) {
          element.dataset.motionStride = String(levelZero.stride);
        }
      });
    } else {
      // Dropping the nodes this view no longer needs comes first: the splat then lacks them.
      held.octree?.update(camera, renderer.getDrawingBufferSize(bufferSize).y);
      const mode = byInstance ? "instance" : "rgb";
      scene.background = still.update(camera, held.levels, mode, (level) => held.colours(level, byInstance));
      renderer.render(scene, camera);
    }
    if (front) placeCompass(compassLabels, front, extentBox, camera, cameras.aspect);
    return !motion.moving && held.allIn();
  };
  const loadOctree = () => {
    held.loadOctree({
      onNode: () => {
        if (!motion.moving) redraw();
      },
      onEvict: () => still.invalidate(),
      onError: (error) => {
        console.warn("an octree node could not be loaded:", error);
        redraw();
      },
    });
    redraw();
  };

  const loop = frameLoop(element, draw, {
    drawn: () => whenDrawn(gl),
    followsView: () => Boolean(held.octree),
    onFirstDrawn: () => {
      if (!disposed) {
        status.hidden = true;
        element.dataset.loaded = "true";
        preparePoints(renderer, material);
        // An octree's other nodes come once the root is on screen, as a file's level 1 does.
        if (cloud.octree) loadOctree();
      }
      onFirstFrame();
    },
  });

  let size = "";
  const resize = () => {
    const width = Math.max(element.clientWidth, 1);
    const height = Math.max(element.clientHeight, 1);
    // The observer also calls when it starts; redrawing the same size would waste a frame.
    if (size === `${width}x${height}`) return;
    size = `${width}x${height}`;
    renderer.setSize(width, height, false);
    cameras.resize(width, height);
    redraw();
  };
  const observer = new ResizeObserver(resize);

  const setColourMode = (mode) => {
    byInstance = mode === "instance";
    const shown = byInstance ? "instance" : "rgb";
    levelZero.colour(shown, () => held.colours(held.levels[0], byInstance));
    element.dataset.colour = shown;
    colourButton.textContent = byInstance ? "Colour by RGB" : "Colour by instance";
    colourButton.setAttribute("aria-pressed", String(byInstance));
    redraw();
  };
  colourButton.addEventListener("click", () => setColourMode(byInstance ? "rgb" : "instance"));
  const showBoxes = (instanceIds) => {
    element.dataset.redBoxes = String(red.show(instanceIds));
    redraw();
  };

  const firstLevel = (level) => {
    levelZero = levelZeroPoints(level, cloud, material);
    scene.add(...levelZero.objects);
    still.dequantise.copy(levelZero.matrix);
    extentBox = pointsExtent(level, cloud);
    // About the point spacing on the floor of a 200k-point room, so surfaces read as closed.
    material.size = Math.max(extentBox.getSize(new THREE.Vector3()).length() * 0.003, 0.002);
    cameras.frame(extentBox);
    // The controls announce the framing as a change; it is no interaction: the frame is still.
    motion.stop();
    front = frontDirection(sceneData.world_frame, objects, extentBox.getCenter(new THREE.Vector3()));
    compass.hidden = !front;
    resize();
    observer.observe(element);
    showBoxes(sceneData.redBoxes);
    setColourMode("rgb");
    element.dataset.camera = "perspective";
    element.dataset.pointCount = String(cloud.count);
  };
  const addLevel = (level, index) => {
    held.add(level);
    if (index === 0) firstLevel(level);
    // While the camera moves only level 0 is drawn; the frame once it settles has the new level.
    if (index === 0 || !motion.moving) loop.now();
  };

  const handle = {
    scene,
    camera: cameras.perspective,
    topCamera: cameras.top,
    controls: cameras.orbit,
    renderer,
    levels: held.levels,
    cloud,
    showBoxes,
    setColourMode,
    setTopView: cameras.setTop,
    element,
    canvas,
    get activeCamera() {
      return cameras.camera;
    },
    redraw,
    dispose() {
      disposed = true;
      held.close();
      observer.disconnect();
      loop.stop();
      motion.stop();
      cameras.dispose();
      levelZero?.dispose();
      material.dispose();
      red.dispose();
      picking.dispose();
      renderer.dispose();
      still.dispose();
      canvas.remove();
      overlay.remove();
      if (mounted.get(element) === handle) mounted.delete(element);
    },
  };
  return { handle, addLevel, dispose: handle.dispose };
}

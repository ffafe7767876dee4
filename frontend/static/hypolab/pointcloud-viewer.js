/**
 * Point-cloud viewer for HLPC files (layout in benchmarks/material/pointcloud.py, read by hlpc.js).
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
 * A still frame (the camera has not moved for SETTLE_MS) is splatted on the CPU: every point is
 * projected, depth-tested against a z-buffer and written into a pixel buffer, which WebGL shows as
 * the scene's background texture under the boxes. Software GL (SwiftShader) takes about 1 us per
 * point; the splat takes tens of ns, and a level that arrives is splatted into the same buffers
 * (the z-buffer makes the order irrelevant). A frame whose camera, size and colours have not
 * changed (hover, click) reuses the splat.
 *
 * While the camera moves WebGL draws level 0 over its own background instead (a GPU beats the
 * CPU there). Should a moving frame still take over MOTION_BUDGET_MS of GPU time (a slow or busy
 * machine), every 2nd, 4th, ... point of level 0 is drawn instead: along the Morton order that
 * stays a uniform thinning. It renders only when something changes, never in a busy loop.
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
import { OrbitControls } from "three/addons/controls/OrbitControls.js";

import { streamHLPC } from "./hlpc.js";
import {
  frameCamera, frameTopCamera, frontDirection, HOVER_COLOUR, objectBox, objectUnderRay, placeBox, RED,
} from "./pointcloud-boxes.js";
import { cloudGeometry, prepareGpu, preparePoints, whenDrawn } from "./pointcloud-gpu.js";
import { octreeLoader, VIEWER_BUDGET_POINTS } from "./pointcloud-octree.js";
import { placeCompass, viewerOverlay } from "./pointcloud-overlay.js";
import { displayColour, instancePixel, pixel, splatLevel, splatTexture } from "./pointcloud-splat.js";

const SETTLE_MS = 180;
// GPU time one frame may take while the camera moves; over it, fewer points of level 0 are drawn.
const MOTION_BUDGET_MS = 70;
const MAX_MOTION_STRIDE = 16;
// Colours are passed through as display bytes (see above), so these are display values too.
const BACKGROUND = [0x1d, 0x1f, 0x24];

// The viewer shown in each element, so mounting again (next item) frees the previous GL context.
const mounted = new WeakMap();

/**
 * Fetch the HLPC file at `pointsUrl` and draw it inside `element` (which sets the size).
 * `scene` (optional) is the page's scene data (benchmarks/material/viewer.py): `objects` with boxes for
 * hover and click, `world_frame` for the compass; `redBoxes` lists instance ids outlined in red;
 * `pointBudget` the most points held at once (an octree file's; default VIEWER_BUDGET_POINTS).
 * Resolves, once the first level is drawn, to a handle with the three.js objects, the decoded
 * levels, `showBoxes(ids)`, `setColourMode(mode)`, `setTopView(on)`, `loaded` (a promise of the
 * cloud, once the stream is read) and `dispose()`; resolves to null when loading fails (the element shows the
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

function createViewer(element, status, gpu, cloud, source, objects, sceneData, onFirstFrame) {
  const { levelCounts } = source;
  const { renderer, material } = gpu;
  const gl = renderer.getContext();
  const levels = []; // the decoded levels, in order: {start, count, quantised, rgb}
  let levelZero = null; // level 0 on the GPU, drawn while the camera moves
  let extentBox = null; // the points' real bbox, known once level 0 is in
  const scene = new THREE.Scene();
  const background = displayColour(BACKGROUND);

  const perspective = new THREE.PerspectiveCamera(50, 1, 0.01, 100);
  perspective.up.set(0, 0, 1); // before the controls are made: they orbit around camera.up
  const top = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.01, 100);
  element.append(renderer.domElement);
  const orbit = new OrbitControls(perspective, renderer.domElement);
  orbit.screenSpacePanning = true;
  const topControls = new OrbitControls(top, renderer.domElement);
  topControls.enableRotate = false;
  topControls.screenSpacePanning = true;
  topControls.enabled = false;
  let camera = perspective;
  let controls = orbit;

  const { overlay, topButton, colourButton, tooltip, compass, compassLabels } = viewerOverlay(element);

  const hoverBox = objectBox({ center: [0, 0, 0], size: [1, 1, 1] }, HOVER_COLOUR);
  hoverBox.visible = false;
  scene.add(hoverBox);
  let redBoxes = [];
  let front = null;

  let octree = null; // the octree's loader, once the first frame is on screen (version 3 files)
  let splatStale = false; // a level left the set the still frame was splatted from
  let frames = 0;
  let firstMarked = false;
  let stillLevels = 0; // levels in the frame on screen when it is a still one, else 0
  let fullMarked = false;
  let disposed = false;
  let moving = false;
  let settleTimer = 0;
  let frame = 0;
  let aspect = 1;
  let byInstance = false;

  const updateCompass = () => {
    if (!front || !extentBox) return;
    placeCompass(compassLabels, front, extentBox, camera, aspect);
  };

  // The still frame's points: pixels (and their texture) and z-buffer of the drawing buffer's
  // size, the clip matrix and colours they were splatted with, and how many levels they hold.
  let splat = null;
  const bufferSize = new THREE.Vector2();
  const clipMatrix = new THREE.Matrix4();
  const dequantise = new THREE.Matrix4();
  const backgroundPixel = pixel(BACKGROUND);
  /** Splat the levels the still frame lacks (all of them when the view changed). */
  const splatStill = () => {
    const { x: width, y: height } = renderer.getDrawingBufferSize(bufferSize);
    camera.updateMatrixWorld();
    clipMatrix.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).multiply(dequantise);
    if (splat?.width !== width || splat.height !== height) {
      splat?.texture.dispose();
      const pixels = new Uint32Array(width * height);
      const depth = new Float32Array(width * height);
      const texture = splatTexture(pixels, width, height);
      splat = { width, height, pixels, depth, texture, matrix: new THREE.Matrix4(), byInstance, levels: 0 };
    } else if (splatStale || !splat.matrix.equals(clipMatrix) || splat.byInstance !== byInstance) {
      splat.levels = 0;
    }
    splatStale = false;
    if (splat.levels === levels.length) return;
    if (!splat.levels) {
      splat.pixels.fill(backgroundPixel);
      splat.depth.fill(Infinity);
      splat.matrix.copy(clipMatrix);
      splat.byInstance = byInstance;
    }
    // gl_PointSize of three.js points: size * (drawing-buffer height / 2) / w, in perspective only.
    const pointScale = camera.isPerspectiveCamera ? (material.size * height) / 2 : 0;
    for (const level of levels.slice(splat.levels)) {
      splatLevel(level.quantised, shownColours(level), level.count, clipMatrix.elements, pointScale, splat);
    }
    splat.levels = levels.length;
    splat.texture.needsUpdate = true;
  };

  const render = () => {
    cancelAnimationFrame(frame);
    frame = 0;
    const thinned = moving && motionStride > 1;
    levelZero.visible = moving && !thinned;
    motionPoints.visible = thinned;
    // Dropping the nodes this view no longer needs comes first: the splat then lacks them.
    if (!moving) octree?.update(camera, renderer.getDrawingBufferSize(bufferSize).y);
    if (!moving) splatStill();
    scene.background = moving ? background : splat.texture;
    renderer.render(scene, camera);
    if (moving) {
      const issued = performance.now();
      whenDrawn(gl).then(() => adaptMotionStride(performance.now() - issued));
    }
    stillLevels = moving ? 0 : levels.length;
    updateCompass();
    afterFrame();
  };
  const afterFrame = () => {
    frames += 1;
    element.dataset.frames = String(frames);
    // The marks wait for the GPU to finish the frame, not just for the draw call to be issued.
    if (!firstMarked) {
      firstMarked = true;
      whenDrawn(gl).then(() => {
        if (!disposed) {
          performance.mark("hl-viewer:first-frame");
          status.hidden = true;
          element.dataset.loaded = "true";
          preparePoints(renderer, material);
          // An octree's other nodes come once the root is on screen, as a file's level 1 does.
          if (cloud.octree) startOctree();
        }
        onFirstFrame();
      });
    }
    const allIn = cloud.octree ? Boolean(octree?.idle()) : levels.length === levelCounts.length;
    const complete = allIn && stillLevels === levels.length;
    if (complete && element.dataset.complete !== "true") {
      const serial = frames;
      whenDrawn(gl).then(() => {
        if (disposed || serial !== frames) return; // a later frame decides
        if (!fullMarked) performance.mark("hl-viewer:full-frame");
        fullMarked = true;
        element.dataset.complete = "true";
      });
    } else if (!complete && octree) {
      element.dataset.complete = "false";
    }
  };
  const startOctree = () => {
    octree = octreeLoader(source.url, cloud, levels[0], source.budget, {
      onNode: (level) => {
        if (disposed) return;
        levels.push(level);
        held(level, 1);
        if (!moving) requestRender();
      },
      onEvict: (level) => {
        levels.splice(levels.indexOf(level), 1);
        held(level, -1);
        splatStale = true;
      },
      onError: (error) => {
        console.warn("an octree node could not be loaded:", error);
        requestRender();
      },
    });
    element.dataset.pointBudget = String(source.budget);
    requestRender();
  };
  // The points held and the bytes of their arrays (positions, colours, ids, instance colours).
  let pointsHeld = 0;
  let bytesHeld = 0;
  const held = (level, sign) => {
    pointsHeld += sign * level.count;
    bytesHeld += sign * (level.quantised.byteLength + level.rgb.byteLength + level.instance.byteLength);
    bytesHeld += sign * (level.instancePixels?.byteLength || 0);
    element.dataset.pointsDrawn = String(pointsHeld);
    element.dataset.residentBytes = String(bytesHeld);
    element.dataset.nodes = String(levels.length);
  };
  const requestRender = () => {
    if (!frame) frame = requestAnimationFrame(render);
  };
  // Interaction draws level 0 now and the full set once things have been still for a moment;
  // never while a drag is on, however slow the frames are (a slow frame must not look like a pause).
  let dragging = false;
  const interact = () => {
    moving = true;
    requestRender();
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => {
      if (dragging) return;
      moving = false;
      requestRender();
    }, SETTLE_MS);
  };

  let size = "";
  const resize = () => {
    const width = Math.max(element.clientWidth, 1);
    const height = Math.max(element.clientHeight, 1);
    // The observer also calls when it starts; redrawing the same size would waste a frame.
    if (size === `${width}x${height}`) return;
    size = `${width}x${height}`;
    renderer.setSize(width, height, false);
    perspective.aspect = width / height;
    perspective.updateProjectionMatrix();
    const extent = top.userData.extent || 1;
    aspect = width / height;
    Object.assign(top, { left: -extent * Math.max(aspect, 1), right: extent * Math.max(aspect, 1) });
    Object.assign(top, { top: extent / Math.min(aspect, 1), bottom: -extent / Math.min(aspect, 1) });
    top.updateProjectionMatrix();
    requestRender();
  };

  // Level 0 again, through an index of every motionStride-th point, sharing its GPU buffers.
  let motionPoints = null;
  let motionStride = 1;
  const strideIndex = new Map();
  const adaptMotionStride = (gpuMs) => {
    let stride = motionStride;
    if (gpuMs > MOTION_BUDGET_MS * 1.3 && stride < MAX_MOTION_STRIDE) stride *= 2;
    else if (gpuMs < MOTION_BUDGET_MS / 2.5 && stride > 1) stride /= 2;
    if (stride === motionStride || disposed) return;
    motionStride = stride;
    element.dataset.motionStride = String(stride);
    if (!strideIndex.has(stride)) {
      const count = levels[0].count;
      const index = Uint32Array.from({ length: Math.ceil(count / stride) }, (_, i) => i * stride);
      strideIndex.set(stride, new THREE.BufferAttribute(index, 1));
    }
    if (stride > 1) motionPoints.geometry.setIndex(strideIndex.get(stride));
  };

  /** A level's colours as shown, one pixel per point; instance colours are made when first asked for. */
  const palette = new Map();
  const shownColours = (level) => {
    if (!byInstance) return new Uint32Array(level.rgb.buffer, level.rgb.byteOffset, level.count);
    if (!level.instancePixels) {
      level.instancePixels = new Uint32Array(level.count);
      for (let i = 0; i < level.count; i++) {
        const id = level.instance[i];
        if (!palette.has(id)) palette.set(id, instancePixel(id));
        level.instancePixels[i] = palette.get(id);
      }
      bytesHeld += level.instancePixels.byteLength;
      element.dataset.residentBytes = String(bytesHeld);
    }
    return level.instancePixels;
  };
  // Level 0's colour attributes on the GPU, by colour mode.
  const levelZeroColours = new Map();
  const colourLevelZero = () => {
    const mode = byInstance ? "instance" : "rgb";
    if (!levelZeroColours.has(mode)) {
      const bytes = new Uint8Array(shownColours(levels[0]).buffer);
      levelZeroColours.set(mode, new THREE.BufferAttribute(bytes, 4, true));
    }
    const colours = levelZeroColours.get(mode);
    for (const points of [levelZero, motionPoints]) points.geometry.setAttribute("color", colours);
  };
  const setColourMode = (mode) => {
    byInstance = mode === "instance";
    colourLevelZero();
    element.dataset.colour = byInstance ? "instance" : "rgb";
    colourButton.textContent = byInstance ? "Colour by RGB" : "Colour by instance";
    colourButton.setAttribute("aria-pressed", String(byInstance));
    requestRender();
  };
  const setTopView = (on) => {
    camera = on ? top : perspective;
    controls.enabled = false;
    controls = on ? topControls : orbit;
    controls.enabled = true;
    element.dataset.camera = on ? "top" : "perspective";
    topButton.textContent = on ? "3D view" : "Top view";
    topButton.setAttribute("aria-pressed", String(on));
    requestRender();
  };
  const showBoxes = (instanceIds) => {
    for (const lines of redBoxes) {
      scene.remove(lines);
      lines.material.dispose();
    }
    const wanted = new Set(instanceIds || []);
    redBoxes = objects.filter((o) => wanted.has(o.instance_id)).map((o) => objectBox(o, RED));
    for (const lines of redBoxes) scene.add(lines);
    element.dataset.redBoxes = String(redBoxes.length);
    requestRender();
  };

  const pointer = new THREE.Vector2();
  const raycaster = new THREE.Raycaster();
  let hovered = null;
  let selected = null;
  const objectAt = (event) => {
    const rect = renderer.domElement.getBoundingClientRect();
    pointer.set(
      ((event.clientX - rect.left) / rect.width) * 2 - 1,
      -((event.clientY - rect.top) / rect.height) * 2 + 1,
    );
    raycaster.setFromCamera(pointer, camera);
    return objectUnderRay(raycaster.ray, objects);
  };
  const outline = (object) => {
    hoverBox.visible = Boolean(object);
    if (object) placeBox(hoverBox, object);
  };
  const onPointerMove = (event) => {
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
      requestRender(); // a still frame reuses its splat: only the boxes are drawn again
    }
  };
  const onClick = (event) => {
    selected = objectAt(event);
    element.dataset.selectedLabel = selected ? selected.label : "";
    element.dataset.selectedInstance = selected ? String(selected.instance_id) : "";
    outline(selected);
    requestRender();
    element.dispatchEvent(new CustomEvent("hl-object-selected", { detail: selected }));
  };
  const onLeave = () => {
    tooltip.hidden = true;
    element.dataset.hoverLabel = "";
    if (hovered) {
      hovered = null;
      outline(selected);
      requestRender();
    }
  };
  renderer.domElement.addEventListener("pointermove", onPointerMove);
  renderer.domElement.addEventListener("pointerleave", onLeave);
  renderer.domElement.addEventListener("click", onClick);
  renderer.domElement.addEventListener("dblclick", () => controls.reset());
  for (const each of [orbit, topControls]) {
    each.addEventListener("start", () => {
      dragging = true;
    });
    each.addEventListener("change", interact);
    each.addEventListener("end", () => {
      dragging = false;
      interact();
    });
  }
  topButton.addEventListener("click", () => setTopView(camera !== top));
  colourButton.addEventListener("click", () => setColourMode(byInstance ? "rgb" : "instance"));
  const observer = new ResizeObserver(resize);

  const frameOnPoints = ({ quantised: q }) => {
    // The real bbox of the first level frames the cameras; the quantisation box would do too,
    // but is a little larger than the points.
    const lo = [Infinity, Infinity, Infinity];
    const hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < q.length; i += 4) {
      for (let axis = 0; axis < 3; axis++) {
        const v = q[i + axis];
        if (v < lo[axis]) lo[axis] = v;
        if (v > hi[axis]) hi[axis] = v;
      }
    }
    extentBox = q.length
      ? new THREE.Box3(
          new THREE.Vector3(...lo.map((v, axis) => cloud.origin[axis] + v * cloud.step[axis])),
          new THREE.Vector3(...hi.map((v, axis) => cloud.origin[axis] + v * cloud.step[axis])),
        )
      : new THREE.Box3(new THREE.Vector3(...cloud.origin), new THREE.Vector3(...cloud.origin));
    // About the point spacing on the floor of a 200k-point room, so surfaces read as closed.
    material.size = Math.max(extentBox.getSize(new THREE.Vector3()).length() * 0.003, 0.002);
    frameCamera(perspective, orbit, extentBox);
    frameTopCamera(top, topControls, extentBox);
    front = frontDirection(sceneData.world_frame, objects, extentBox.getCenter(new THREE.Vector3()));
    compass.hidden = !front;
  };

  const handle = {
    scene,
    camera: perspective,
    topCamera: top,
    controls: orbit,
    renderer,
    levels,
    cloud,
    showBoxes,
    setColourMode,
    setTopView,
    dispose() {
      disposed = true;
      observer.disconnect();
      cancelAnimationFrame(frame);
      clearTimeout(settleTimer);
      orbit.dispose();
      topControls.dispose();
      for (const points of [levelZero, motionPoints]) points?.geometry.dispose();
      material.dispose();
      for (const lines of [...redBoxes, hoverBox]) lines.material.dispose();
      renderer.dispose();
      splat?.texture.dispose();
      renderer.domElement.remove();
      overlay.remove();
      if (mounted.get(element) === handle) mounted.delete(element);
    },
  };

  const addLevel = (level, index) => {
    levels.push(level);
    if (index === 0) {
      // Positions are quantised; the object's transform turns them back into metres.
      levelZero = new THREE.Points(cloudGeometry(level.quantised, level.rgb), material);
      levelZero.scale.set(...cloud.step);
      levelZero.position.set(...cloud.origin);
      levelZero.frustumCulled = false;
      levelZero.updateMatrix();
      dequantise.copy(levelZero.matrix);
      motionPoints = new THREE.Points(new THREE.BufferGeometry(), material);
      motionPoints.geometry.setAttribute("position", levelZero.geometry.getAttribute("position"));
      motionPoints.scale.copy(levelZero.scale);
      motionPoints.position.copy(levelZero.position);
      motionPoints.frustumCulled = false;
      scene.add(levelZero, motionPoints);
      levelZeroColours.set("rgb", levelZero.geometry.getAttribute("color"));
    }
    held(level, 1);
    if (index === 0) {
      frameOnPoints(level);
      // The controls announce the framing as a change; it is no interaction: the frame is still.
      moving = false;
      clearTimeout(settleTimer);
      resize();
      observer.observe(element);
      showBoxes(sceneData.redBoxes);
      setColourMode("rgb");
      element.dataset.camera = "perspective";
      element.dataset.pointCount = String(cloud.count);
    }
    // While the camera moves only level 0 is drawn; the frame once it settles has the new level.
    if (index === 0 || !moving) render();
  };

  return { handle, addLevel, dispose: handle.dispose };
}

/**
 * Point-cloud viewer: loads an HLPC v1 binary (layout in benchmarks/pointcloud.py) into one
 * THREE.BufferGeometry and draws it with orbit / zoom / pan controls, Z up. It renders only when
 * the view changes (controls, resize), never in a busy loop.
 *
 * When drawn, the element gets data-loaded="true" and data-point-count; on failure
 * data-loaded="error" and the status text says why.
 */
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";

const HEADER_BYTES = 36;
const QUANT_MAX = 65535;
const BACKGROUND = 0x1d1f24;

// The file stores sRGB bytes; three.js expects vertex colours in linear space.
const SRGB_TO_LINEAR = Float32Array.from({ length: 256 }, (_, i) => {
  const c = i / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});

/** Decode an HLPC v1 ArrayBuffer into float32 positions, linear float32 colours and instance ids. */
export function decodeHLPC(buffer) {
  const view = new DataView(buffer);
  const magic = String.fromCharCode(...new Uint8Array(buffer, 0, 4));
  const version = view.getUint32(4, true);
  if (magic !== "HLPC" || version !== 1) {
    throw new Error(`not an HLPC v1 file (${magic} v${version})`);
  }
  const count = view.getUint32(8, true);
  const min = [0, 1, 2].map((i) => view.getFloat32(12 + 4 * i, true));
  const max = [0, 1, 2].map((i) => view.getFloat32(24 + 4 * i, true));
  const rgbOffset = HEADER_BYTES + 6 * count;
  const instanceOffset = rgbOffset + 3 * count + (count % 2);
  if (buffer.byteLength < instanceOffset + 2 * count) {
    throw new Error("the file is truncated");
  }

  // Typed arrays read in platform byte order, which is little-endian on every browser platform.
  const quantised = new Uint16Array(buffer, HEADER_BYTES, 3 * count);
  const rgb = new Uint8Array(buffer, rgbOffset, 3 * count);
  const step = [0, 1, 2].map((axis) => (max[axis] - min[axis]) / QUANT_MAX);
  const positions = new Float32Array(3 * count);
  const colours = new Float32Array(3 * count);
  for (let i = 0; i < 3 * count; i += 3) {
    positions[i] = min[0] + quantised[i] * step[0];
    positions[i + 1] = min[1] + quantised[i + 1] * step[1];
    positions[i + 2] = min[2] + quantised[i + 2] * step[2];
    colours[i] = SRGB_TO_LINEAR[rgb[i]];
    colours[i + 1] = SRGB_TO_LINEAR[rgb[i + 1]];
    colours[i + 2] = SRGB_TO_LINEAR[rgb[i + 2]];
  }
  const instance = new Uint16Array(buffer, instanceOffset, count);
  return { count, min, max, positions, colours, instance };
}

function frameCamera(camera, controls, box) {
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

// The viewer shown in each element, so mounting again (next item) frees the previous GL context.
const mounted = new WeakMap();

/**
 * Fetch the HLPC file at `pointsUrl` and draw it inside `element` (which sets the size).
 * Resolves to a handle with the three.js objects, the instance ids and `dispose()`;
 * resolves to null when loading fails (the element shows the reason) or when a newer mount on the
 * same element took over while this one was loading. Mounting again disposes the previous viewer.
 */
export async function mountPointCloudViewer(element, pointsUrl) {
  mounted.get(element)?.dispose();
  const claim = { dispose() {} };
  mounted.set(element, claim);
  element.classList.add("hl-pointcloud");
  element.dataset.loaded = "false";
  const status = document.createElement("div");
  status.className = "hl-viewer-status";
  status.setAttribute("role", "status");
  status.textContent = "Loading point cloud…";
  element.replaceChildren(status);

  let cloud;
  let renderer;
  try {
    if (!pointsUrl) throw new Error("this scene has no point cloud");
    const response = await fetch(pointsUrl);
    if (!response.ok) throw new Error(`the server answered ${response.status}`);
    cloud = decodeHLPC(await response.arrayBuffer());
    if (mounted.get(element) !== claim) return null;
    renderer = new THREE.WebGLRenderer({ antialias: true });
  } catch (error) {
    if (mounted.get(element) !== claim) return null;
    element.dataset.loaded = "error";
    status.classList.add("hl-error");
    status.textContent = `Could not show the point cloud: ${error.message}`;
    return null;
  }

  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.BufferAttribute(cloud.positions, 3));
  geometry.setAttribute("color", new THREE.BufferAttribute(cloud.colours, 3));
  const box = new THREE.Box3(new THREE.Vector3(...cloud.min), new THREE.Vector3(...cloud.max));
  geometry.boundingBox = box;
  geometry.boundingSphere = box.getBoundingSphere(new THREE.Sphere());

  // About the point spacing on the floor of a 200k-point room, so surfaces read as closed.
  const pointSize = Math.max(box.getSize(new THREE.Vector3()).length() * 0.003, 0.002);
  const material = new THREE.PointsMaterial({ size: pointSize, vertexColors: true, sizeAttenuation: true });
  const points = new THREE.Points(geometry, material);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(BACKGROUND);
  scene.add(points);

  const camera = new THREE.PerspectiveCamera(50, 1, 0.01, 100);
  camera.up.set(0, 0, 1); // before the controls are made: they orbit around camera.up
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  element.append(renderer.domElement);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.screenSpacePanning = true;
  frameCamera(camera, controls, box);

  let frame = 0;
  const render = () => {
    frame = 0;
    renderer.render(scene, camera);
  };
  const requestRender = () => {
    if (!frame) frame = requestAnimationFrame(render);
  };
  const resize = () => {
    const width = Math.max(element.clientWidth, 1);
    const height = Math.max(element.clientHeight, 1);
    renderer.setSize(width, height, false);
    camera.aspect = width / height;
    camera.updateProjectionMatrix();
    requestRender();
  };
  controls.addEventListener("change", requestRender);
  renderer.domElement.addEventListener("dblclick", () => controls.reset());
  const observer = new ResizeObserver(resize);
  observer.observe(element);

  resize();
  render();
  status.hidden = true;
  element.dataset.pointCount = String(cloud.count);
  element.dataset.loaded = "true";

  const handle = {
    scene,
    camera,
    controls,
    renderer,
    points,
    instance: cloud.instance,
    dispose() {
      observer.disconnect();
      cancelAnimationFrame(frame);
      controls.dispose();
      geometry.dispose();
      material.dispose();
      renderer.dispose();
      renderer.domElement.remove();
      if (mounted.get(element) === handle) mounted.delete(element);
    },
  };
  mounted.set(element, handle);
  return handle;
}

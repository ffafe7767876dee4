/**
 * Still frames of the point-cloud viewer (pointcloud-viewer.js), splatted on the CPU: every point is
 * projected, depth-tested against a z-buffer and written into a pixel buffer, which WebGL shows as
 * the scene's background texture under the boxes. Software GL (SwiftShader) takes about 1 us per
 * point; the splat takes tens of ns, and a level that arrives is splatted into the same buffers
 * (the z-buffer makes the order irrelevant). Colours are display bytes (pointcloud-viewer.js).
 */
import * as THREE from "three";

// GL points of a few pixels near the camera become squares in the splat; this bounds the square.
const MAX_SPLAT_PX = 32;
const STRUCTURE_GREY = [96, 98, 104];

export function displayColour([r, g, b]) {
  return new THREE.Color().setRGB(r / 255, g / 255, b / 255, THREE.LinearSRGBColorSpace);
}

/** An opaque colour as one pixel of a Uint32Array over RGBA bytes (whatever the byte order). */
export function pixel([r, g, b]) {
  return new Uint32Array(Uint8Array.of(r, g, b, 255).buffer)[0];
}

/** A distinct colour per instance id (golden-angle hues) as a pixel; 0, the structure, is grey. */
export function instancePixel(id) {
  if (id === 0) return pixel(STRUCTURE_GREY);
  const colour = new THREE.Color().setHSL(((id * 0.618034) % 1 + 1) % 1, 0.75, 0.55, THREE.LinearSRGBColorSpace);
  return pixel([colour.r, colour.g, colour.b].map((c) => Math.round(c * 255)));
}

/**
 * Splat `count` points into `target` ({width, height, depth, pixels}, rows bottom-up as GL's):
 * quantised positions (x, y, z, 0) go to clip space by `m` (column-major, as THREE.Matrix4.elements)
 * and the nearest point per pixel wins. A point covers a square of `pointScale / w` pixels (at
 * least one), as GL draws a point of sizeAttenuation; an orthographic camera passes 0: one pixel.
 */
export function splatLevel(quantised, colours, count, m, pointScale, target) {
  const { width, height, depth, pixels } = target;
  const [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15] = m;
  const halfWidth = width / 2;
  const halfHeight = height / 2;
  for (let i = 0, o = 0; i < count; i++, o += 4) {
    const x = quantised[o], y = quantised[o + 1], z = quantised[o + 2];
    const w = m3 * x + m7 * y + m11 * z + m15;
    const clipZ = m2 * x + m6 * y + m10 * z + m14;
    if (!(w > 0) || clipZ < -w || clipZ > w) continue; // behind the camera, or past near / far
    const inverseW = 1 / w;
    const sx = ((m0 * x + m4 * y + m8 * z + m12) * inverseW + 1) * halfWidth;
    const sy = ((m1 * x + m5 * y + m9 * z + m13) * inverseW + 1) * halfHeight;
    if (!(sx >= 0 && sx < width && sy >= 0 && sy < height)) continue;
    const d = clipZ * inverseW;
    const size = pointScale * inverseW;
    if (size <= 1) {
      const p = (sy | 0) * width + (sx | 0);
      if (d < depth[p]) {
        depth[p] = d;
        pixels[p] = colours[i];
      }
      continue;
    }
    // The pixels whose centres the point's square covers, as GL rasterises it.
    const half = Math.min(size, MAX_SPLAT_PX) / 2;
    const left = Math.max(Math.ceil(sx - half - 0.5), 0);
    const right = Math.min(Math.ceil(sx + half - 0.5), width);
    const top = Math.max(Math.ceil(sy - half - 0.5), 0);
    const bottom = Math.min(Math.ceil(sy + half - 0.5), height);
    for (let row = top; row < bottom; row++) {
      for (let p = row * width + left, end = row * width + right; p < end; p++) {
        if (d < depth[p]) {
          depth[p] = d;
          pixels[p] = colours[i];
        }
      }
    }
  }
}

/** A texture over a splat's pixels, shown texel for texel with the bytes unchanged. */
export function splatTexture(pixels, width, height) {
  const texture = new THREE.DataTexture(new Uint8Array(pixels.buffer), width, height);
  texture.colorSpace = THREE.NoColorSpace;
  texture.needsUpdate = true;
  return texture;
}

/**
 * The still frame's points: pixels (and their texture) and z-buffer of the drawing buffer's size,
 * the clip matrix and colour mode they were splatted with, and how many levels they hold.
 * `dequantise` is the points' transform from quantised units to metres (set by the viewer).
 */
export function stillFrame(renderer, material, background) {
  const backgroundPixel = pixel(background);
  const bufferSize = new THREE.Vector2();
  const clipMatrix = new THREE.Matrix4();
  const dequantise = new THREE.Matrix4();
  let splat = null;
  let stale = false; // a level left the set the frame was splatted from
  return {
    dequantise,
    invalidate() {
      stale = true;
    },
    /**
     * Splat the levels the frame lacks (all of them when the view or the colours changed) and
     * return its texture. `colours(level)` gives a level's pixels in the colour `mode`.
     */
    update(camera, levels, mode, colours) {
      const { x: width, y: height } = renderer.getDrawingBufferSize(bufferSize);
      camera.updateMatrixWorld();
      clipMatrix.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).multiply(dequantise);
      if (splat?.width !== width || splat.height !== height) {
        splat?.texture.dispose();
        const pixels = new Uint32Array(width * height);
        const depth = new Float32Array(width * height);
        const texture = splatTexture(pixels, width, height);
        splat = { width, height, pixels, depth, texture, matrix: new THREE.Matrix4(), mode, levels: 0 };
      } else if (stale || !splat.matrix.equals(clipMatrix) || splat.mode !== mode) {
        splat.levels = 0;
      }
      stale = false;
      if (splat.levels === levels.length) return splat.texture;
      if (!splat.levels) {
        splat.pixels.fill(backgroundPixel);
        splat.depth.fill(Infinity);
        splat.matrix.copy(clipMatrix);
        splat.mode = mode;
      }
      // gl_PointSize of three.js points: size * (drawing-buffer height / 2) / w, in perspective only.
      const pointScale = camera.isPerspectiveCamera ? (material.size * height) / 2 : 0;
      for (const level of levels.slice(splat.levels)) {
        splatLevel(level.quantised, colours(level), level.count, clipMatrix.elements, pointScale, splat);
      }
      splat.levels = levels.length;
      splat.texture.needsUpdate = true;
      return splat.texture;
    },
    dispose() {
      splat?.texture.dispose();
    },
  };
}

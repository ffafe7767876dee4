/**
 * Reading HLPC point files (layout in scenes/pointcloud.py): version 1 (one block),
 * version 2 (disjoint levels, read as one stream) and version 3 (an octree: the stream gives the
 * header, the node table and the root; every other node is one HTTP range request).
 *
 * A decoded section ("level": a v2 level or a v3 node) is {start, count, quantised, rgb, instance}:
 * uint16 x, y, z, 0 per point, RGBA bytes and uint16 instance ids. Positions stay quantised; the
 * cloud's origin and step turn them into metres.
 */

const V1_HEADER_BYTES = 36;
const V2_HEADER_BYTES = 40;
const LEVEL_BYTES = 8;
const NODE_BYTES = 16;
const PLANES_PER_POINT = 11;
const QUANT_MAX = 65535;

/** Reads exact byte counts from a stream, waiting for more chunks as needed; `take.cancel()` stops it. */
function byteReader(stream) {
  const reader = stream.getReader();
  const chunks = [];
  let buffered = 0;
  async function take(n) {
    while (buffered < n) {
      const { done, value } = await reader.read();
      if (done) throw new Error("the file is truncated");
      chunks.push(value);
      buffered += value.byteLength;
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const head = chunks[0];
      const k = Math.min(head.byteLength, n - filled);
      out.set(head.subarray(0, k), filled);
      filled += k;
      if (k === head.byteLength) chunks.shift();
      else chunks[0] = head.subarray(k);
    }
    buffered -= n;
    return out;
  }
  take.cancel = () => reader.cancel();
  return take;
}

async function gunzip(bytes) {
  // A stream straight over the bytes: Blob.stream() would send them through the blob registry.
  const stream = new Response(bytes).body.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Undo the delta / zigzag / byte-plane coding of one section of n points (see the top). */
export function decodeSection(raw, n, start) {
  if (raw.length !== PLANES_PER_POINT * n) throw new Error("a level has the wrong size");
  const quantised = new Uint16Array(4 * n);
  const rgb = new Uint8Array(4 * n);
  const instance = new Uint16Array(n);
  let x = 0, y = 0, z = 0, r = 0, g = 0, b = 0;
  for (let i = 0, o = 0; i < n; i++, o += 4) {
    const dx = raw[i] | (raw[3 * n + i] << 8);
    const dy = raw[n + i] | (raw[4 * n + i] << 8);
    const dz = raw[2 * n + i] | (raw[5 * n + i] << 8);
    x = (x + ((dx >>> 1) ^ -(dx & 1))) & 0xffff;
    y = (y + ((dy >>> 1) ^ -(dy & 1))) & 0xffff;
    z = (z + ((dz >>> 1) ^ -(dz & 1))) & 0xffff;
    r = (r + raw[6 * n + i]) & 0xff;
    g = (g + raw[7 * n + i]) & 0xff;
    b = (b + raw[8 * n + i]) & 0xff;
    quantised[o] = x; quantised[o + 1] = y; quantised[o + 2] = z;
    rgb[o] = r; rgb[o + 1] = g; rgb[o + 2] = b; rgb[o + 3] = 255;
    instance[i] = raw[9 * n + i] | (raw[10 * n + i] << 8);
  }
  return { start, count: n, quantised, rgb, instance };
}

/** A whole version 1 file (one level): uint16 positions over the bbox, raw colours and ids. */
function readV1(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(8, true);
  const min = [0, 1, 2].map((i) => view.getFloat32(12 + 4 * i, true));
  const max = [0, 1, 2].map((i) => view.getFloat32(24 + 4 * i, true));
  const rgbOffset = V1_HEADER_BYTES + 6 * count;
  const instanceOffset = rgbOffset + 3 * count + (count % 2);
  if (bytes.byteLength < instanceOffset + 2 * count) throw new Error("the file is truncated");
  const copy = bytes.slice(); // aligned for the Uint16Array views
  const packed = new Uint16Array(copy.buffer, V1_HEADER_BYTES, 3 * count);
  const instance = new Uint16Array(copy.buffer, instanceOffset, count).slice();
  const level = { start: 0, count, quantised: new Uint16Array(4 * count), rgb: new Uint8Array(4 * count), instance };
  for (let i = 0; i < count; i++) {
    for (let axis = 0; axis < 3; axis++) {
      level.quantised[4 * i + axis] = packed[3 * i + axis];
      level.rgb[4 * i + axis] = copy[rgbOffset + 3 * i + axis];
    }
    level.rgb[4 * i + 3] = 255;
  }
  const step = min.map((lo, axis) => (max[axis] - lo) / QUANT_MAX);
  return { cloud: { count, origin: min, step }, level };
}

/** The v3 node table: nodes breadth first with their cell, depth, byte range and children. */
function readNodes(view, at, count, firstOffset) {
  const nodes = [];
  const byCell = new Map();
  let offset = firstOffset;
  for (let i = 0; i < count; i++, at += NODE_BYTES) {
    const node = {
      index: i,
      count: view.getUint32(at, true),
      bytes: view.getUint32(at + 4, true),
      cell: [0, 1, 2].map((axis) => view.getUint16(at + 8 + 2 * axis, true)),
      depth: view.getUint8(at + 14),
      offset,
      children: [],
    };
    offset += node.bytes;
    nodes.push(node);
    byCell.set(`${node.depth}/${node.cell}`, node);
    const parent = byCell.get(`${node.depth - 1}/${node.cell.map((c) => c >> 1)}`);
    if (node.depth) parent.children.push(node);
  }
  return nodes;
}

/**
 * Stream an HLPC file: `onCloud(cloud, levelCounts)` once the header is read (`cloud` has count,
 * origin, step and, for an octree, `octree` {top, nodes}), then `onLevel(level, index)` as each
 * level is decoded. An octree gives its root only; the stream is then cancelled, so the rest of
 * the file never comes over the wire (`fetchNode` reads the other nodes).
 */
export async function streamHLPC(response, onCloud, onLevel) {
  const take = byteReader(response.body);
  const head = await take(16);
  const view = new DataView(head.buffer);
  const magic = String.fromCharCode(...head.subarray(0, 4));
  const version = view.getUint32(4, true);
  if (magic !== "HLPC" || ![1, 2, 3].includes(version)) {
    throw new Error(`not an HLPC file (${magic} v${version})`);
  }
  if (version === 1) {
    const count = view.getUint32(8, true);
    const rest = await take(V1_HEADER_BYTES - 16 + 9 * count + (count % 2) + 2 * count);
    const whole = new Uint8Array(16 + rest.byteLength);
    whole.set(head);
    whole.set(rest, 16);
    const { cloud, level } = readV1(whole);
    await onCloud(cloud, [count]);
    await onLevel(level, 0);
    return cloud;
  }
  const count = view.getUint32(8, true);
  const entries = view.getUint32(12, true);
  const tableBytes = version === 3 ? 4 + NODE_BYTES * entries : LEVEL_BYTES * entries;
  const rest = new DataView((await take(V2_HEADER_BYTES - 16 + tableBytes)).buffer);
  const origin = [0, 1, 2].map((i) => rest.getFloat32(4 * i, true));
  const step = [0, 1, 2].map((i) => rest.getFloat32(12 + 4 * i, true));
  if (version === 3) {
    const nodes = readNodes(rest, 28, entries, V2_HEADER_BYTES + tableBytes);
    const cloud = { count, origin, step, octree: { top: rest.getUint32(24, true), nodes } };
    await onCloud(cloud, [nodes[0].count]);
    const root = decodeSection(await gunzip(await take(nodes[0].bytes)), nodes[0].count, 0);
    take.cancel();
    await onLevel(root, 0);
    return cloud;
  }
  const levels = Array.from({ length: entries }, (_, i) => ({
    count: rest.getUint32(24 + LEVEL_BYTES * i, true),
    bytes: rest.getUint32(28 + LEVEL_BYTES * i, true),
  }));
  const cloud = { count, origin, step };
  await onCloud(cloud, levels.map((level) => level.count));
  let start = 0;
  for (const [index, level] of levels.entries()) {
    const decoded = decodeSection(await gunzip(await take(level.bytes)), level.count, start);
    performance.mark(`hl-viewer:level-${index}-decoded`);
    await onLevel(decoded, index);
    start += level.count;
  }
  return cloud;
}

/** One octree node of the file at `url`, by a range request (the media view checks access on each). */
export async function fetchNode(url, node, signal) {
  const range = `bytes=${node.offset}-${node.offset + node.bytes - 1}`;
  const response = await fetch(url, { headers: { Range: range }, signal });
  if (response.status !== 206) {
    await response.body?.cancel();
    throw new Error(`the server answered ${response.status} to a range request`);
  }
  const section = decodeSection(await gunzip(new Uint8Array(await response.arrayBuffer())), node.count, 0);
  section.node = node;
  return section;
}

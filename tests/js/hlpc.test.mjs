// The viewer's HLPC reader against files the platform writes (scenes/pointcloud.py): the same
// points, colours and instance ids as the Python decoder gives, for a levelled file (v2) streamed whole
// and an octree (v3) whose root comes with the stream and every other node by a range request.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const python = existsSync(`${root}.venv/bin/python`) ? `${root}.venv/bin/python` : "python3";
const { streamHLPC, fetchNode } = await import("../../frontend/static/hypolab/hlpc.js");
globalThis.performance.mark = globalThis.performance.mark || (() => {});

// A 3,000-point cloud written by the platform, and what its own decoder reads back, as JSON.
const WRITE = `
import base64, importlib.util, json, sys
import numpy as np
# the module alone (it needs numpy only), without the package's Django imports
spec = importlib.util.spec_from_file_location("pointcloud", "scenes/pointcloud.py")
pc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pc)
rng = np.random.default_rng(7)
xyz = rng.uniform([-2, -1, 0], [3, 4, 2.5], (3000, 3)).astype(np.float32)
rgb = rng.integers(0, 256, (3000, 3), dtype=np.uint8)
ids = rng.integers(0, 40, 3000, dtype=np.uint16)
levels = pc.encode_viewer_points(xyz, rgb, ids, first_level=500)
octree = pc.encode_octree(xyz, rgb, ids, node_points=400)
header = pc.read_octree(octree)
def points(decoded):
    x, c, i = decoded
    return {"xyz": x.round(5).tolist(), "rgb": c.tolist(), "ids": i.tolist()}
nodes = [points(pc.decode_octree_node(octree[n["offset"]:n["offset"] + n["bytes"]], n, header)) for n in header["nodes"]]
json.dump({"levels": base64.b64encode(levels).decode(), "octree": base64.b64encode(octree).decode(),
           "levelPoints": points(pc.decode_viewer_points(levels)), "nodes": nodes}, sys.stdout)
`;
const written = JSON.parse(execFileSync(python, ["-c", WRITE], { cwd: root, maxBuffer: 64 << 20 }));
const bytes = (b64) => new Uint8Array(Buffer.from(b64, "base64"));

function streamed(data, chunk = 777) {
  // the body arrives in uneven chunks, as over a network
  const body = new ReadableStream({
    start(controller) {
      for (let at = 0; at < data.length; at += chunk) controller.enqueue(data.slice(at, at + chunk));
      controller.close();
    },
  });
  return new Response(body);
}

function metres(cloud, section) {
  const out = [];
  for (let i = 0; i < section.count; i++) {
    out.push([0, 1, 2].map((axis) => cloud.origin[axis] + section.quantised[4 * i + axis] * cloud.step[axis]));
  }
  return out;
}

function assertSame(cloud, sections, expected) {
  const xyz = sections.flatMap((s) => metres(cloud, s));
  const rgb = sections.flatMap((s) => Array.from({ length: s.count }, (_, i) => [...s.rgb.subarray(4 * i, 4 * i + 3)]));
  const ids = sections.flatMap((s) => [...s.instance]);
  assert.equal(xyz.length, expected.xyz.length);
  xyz.forEach((p, i) => p.forEach((v, axis) => assert.ok(Math.abs(v - expected.xyz[i][axis]) < 1e-3, `point ${i}`)));
  assert.deepEqual(rgb, expected.rgb);
  assert.deepEqual(ids, expected.ids);
}

test("a levelled file streams level by level and decodes to the platform's points", async () => {
  const levels = [];
  let counts;
  const cloud = await streamHLPC(streamed(bytes(written.levels)), (_, c) => { counts = c; }, (level) => levels.push(level));
  assert.equal(cloud.count, 3000);
  assert.deepEqual(levels.map((l) => l.count), counts);
  assert.ok(levels.length > 1, "more than one level");
  assert.deepEqual(levels.map((l) => l.start), counts.map((_, i) => counts.slice(0, i).reduce((a, b) => a + b, 0)));
  assertSame(cloud, levels, written.levelPoints);
});

test("an octree gives its root from the stream and each other node by a range request", async () => {
  const file = bytes(written.octree);
  const sections = [];
  const cloud = await streamHLPC(streamed(file), () => {}, (root) => sections.push(root));
  const nodes = cloud.octree.nodes;
  assert.equal(nodes.length, written.nodes.length);
  assert.ok(nodes.length > 3 && nodes[0].children.length > 0, "a tree with children");
  const ranges = [];
  globalThis.fetch = async (url, { headers }) => {
    const [, from, to] = headers.Range.match(/^bytes=(\d+)-(\d+)$/);
    ranges.push([Number(from), Number(to)]);
    return new Response(file.slice(Number(from), Number(to) + 1), { status: 206 });
  };
  for (const node of nodes.slice(1)) sections.push(await fetchNode("/media/scene.hlpc", node));
  assert.equal(ranges.length, nodes.length - 1);
  nodes.forEach((node, i) => assertSame(cloud, [sections[i]], written.nodes[i]));
  assert.equal(sections.reduce((n, s) => n + s.count, 0), 3000);  // every point in exactly one node
});

test("a server that ignores the range is an error, not a wrong node", async () => {
  const file = bytes(written.octree);
  const cloud = await streamHLPC(streamed(file), () => {}, () => {});
  globalThis.fetch = async () => new Response(file, { status: 200 });
  await assert.rejects(fetchNode("/media/scene.hlpc", cloud.octree.nodes[1]), /answered 200 to a range request/);
});

test("a truncated or foreign file says so", async () => {
  const file = bytes(written.levels);
  await assert.rejects(streamHLPC(streamed(file.slice(0, 60)), () => {}, () => {}), /truncated/);
  const foreign = file.slice();
  foreign.set([80, 76, 89, 0], 0);
  await assert.rejects(streamHLPC(streamed(foreign), () => {}, () => {}), /not an HLPC file/);
});

import assert from "node:assert/strict";
import { test } from "node:test";

import { installDom } from "./fake_dom.mjs";

const dom = installDom();
const { checkedAsset } = await import("../../frontend/static/hypolab/uploader.js");

test("a large upload's check is followed through the jobs API until it ends, then names the asset", async () => {
  const states = [
    { id: 4, status: "running", percent: 50, report: {} },
    { id: 4, status: "done", percent: 100, report: { asset: 9, size: 2048 } },
  ];
  dom.answerWith(() => ({ status: 200, body: states.shift() }));
  const seen = [];
  const asset = await checkedAsset({ id: 4, status: "queued", percent: null }, (f) => seen.push(f), async () => {});
  assert.deepEqual(asset, { id: 9, size: 2048 });
  assert.deepEqual(seen, [0.5]);
  assert.ok(dom.requests.every((r) => r.url === "/api/v1/jobs/4/"));
});

test("a check that failed is an error with its reason", async () => {
  dom.answerWith(() => ({ status: 200, body: { id: 5, status: "failed", percent: null,
    message: "sha256: Does not match the uploaded bytes." } }));
  await assert.rejects(checkedAsset({ id: 5, status: "running", percent: null }, () => {}, async () => {}),
    /Does not match/);
});

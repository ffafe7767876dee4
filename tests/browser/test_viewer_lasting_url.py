"""Chromium reads octree nodes through a stable URL that redirects to a signed one on another origin
(issue #33): the Range header survives the redirect, and once the first signature has expired the
same stable URL leads to a fresh one, so a viewer left open keeps loading nodes.

Two loopback servers stand in for the platform and the bucket: the platform answers the download
API as benchmarks.api.AssetDownload does (302, `Cache-Control: private, max-age` half the
signature's life), the store answers ranges with CORS as S3 does and 403 to an expired signature
(moto serves no CORS headers on GET, nor checks expiry). The page runs the real hlpc.js."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from scenes.pointcloud import encode_octree, read_octree

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]
HLPC_JS = Path(__file__).resolve().parents[2] / "frontend" / "static" / "hypolab" / "hlpc.js"
LIFE_S = 2  # the signed URL's life; the redirect may be kept for half of it
PAGE = b'<!doctype html><meta charset="utf-8"><title>nodes</title>'


def octree_file() -> bytes:
    rng = np.random.default_rng(3)
    xyz = rng.uniform([-2, -1, 0], [3, 4, 2.5], (3000, 3)).astype(np.float32)
    rgb = rng.integers(0, 256, (3000, 3), dtype=np.uint8)
    return encode_octree(xyz, rgb, rng.integers(0, 40, 3000, dtype=np.uint16), node_points=400)


def serve(handler) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def origins():
    content = octree_file()
    log = {"signed": 0, "store": [], "preflights": 0}

    class Store(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def cors(self):
            self.send_header("Access-Control-Allow-Origin", self.headers.get("Origin", "*"))
            self.send_header("Access-Control-Allow-Headers", "Range")

        def do_OPTIONS(self):  # noqa: N802 (the bucket's CORS rule, were a preflight needed)
            log["preflights"] += 1
            self.send_response(204)
            self.cors()
            self.end_headers()

        def do_GET(self):  # noqa: N802
            signed_at = float(self.path.split("signed=", 1)[1])
            log["store"].append((self.headers.get("Range"), self.headers.get("Origin")))
            if time.time() > signed_at + LIFE_S:
                self.send_response(403)  # S3: "Request has expired"
                self.cors()
                self.end_headers()
                return
            start, end = (int(v) for v in self.headers["Range"].removeprefix("bytes=").split("-")) \
                if self.headers.get("Range") else (0, len(content) - 1)
            body = content[start:end + 1]
            self.send_response(206 if self.headers.get("Range") else 200)
            self.cors()
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(content)}")
            self.end_headers()
            self.wfile.write(body)

    store, store_url = serve(Store)

    class Platform(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            if self.path == "/api/v1/assets/1/download/":
                log["signed"] += 1
                self.send_response(302)
                self.send_header("Location", f"{store_url}/scene.hlpc?signed={time.time()}")
                self.send_header("Cache-Control", f"private, max-age={LIFE_S // 2}")
                self.end_headers()
                return
            body, kind = (HLPC_JS.read_bytes(), "text/javascript") if self.path == "/hlpc.js" else (PAGE, "text/html")
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    platform, platform_url = serve(Platform)
    yield {"platform": platform_url, "store": store_url, "log": log, "header": read_octree(content)}
    platform.shutdown()
    store.shutdown()


FIRST = """async () => {
  const { streamHLPC, fetchNode } = await import("/hlpc.js");
  const response = await fetch("/api/v1/assets/1/download/");
  const cloud = await streamHLPC(response, () => {}, () => {});
  window.hl = { fetchNode, cloud, signedUrl: response.url };
  const node = await fetchNode("/api/v1/assets/1/download/", cloud.octree.nodes[1]);
  return { count: node.count, nodes: cloud.octree.nodes.length, signedUrl: response.url };
}"""
LATER = """async (index) => {
  const { fetchNode, cloud, signedUrl } = window.hl;
  const node = await fetchNode("/api/v1/assets/1/download/", cloud.octree.nodes[index]);
  // what the viewer did before: the URL the first redirect led to
  const old = await fetchNode(signedUrl, cloud.octree.nodes[index]).then(() => "loaded", (e) => e.message);
  return { count: node.count, old };
}"""


def test_nodes_load_through_the_stable_url_after_the_signature_expires(origins, new_page):
    page = new_page()
    page.goto(f"{origins['platform']}/")
    nodes = origins["header"]["nodes"]
    first = page.evaluate(FIRST)
    assert first["nodes"] == len(nodes) and first["count"] == nodes[1]["points"]
    assert first["signedUrl"].startswith(origins["store"])
    ranged = [r for r, _ in origins["log"]["store"] if r]
    assert ranged == [f"bytes={nodes[1]['offset']}-{nodes[1]['offset'] + nodes[1]['bytes'] - 1}"], ranged
    assert all(origin == origins["platform"] for _, origin in origins["log"]["store"]), origins["log"]

    time.sleep(LIFE_S + 1)  # every signature handed out so far has expired, and so has the kept redirect
    later = page.evaluate(LATER, 2)
    assert later["count"] == nodes[2]["points"]
    assert later["old"] == "the server answered 403 to a range request"
    assert origins["log"]["signed"] >= 2  # a fresh signature for the later node
    print(json.dumps({"signed": origins["log"]["signed"], "store_requests": len(origins["log"]["store"]),
                      "preflights": origins["log"]["preflights"]}))

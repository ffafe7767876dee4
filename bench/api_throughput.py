"""A run against an OpenAI-compatible endpoint that answers every request in 200 ms (as a hosted API
or a vLLM server does), on the embedded default: SQLite, tasks in the caller's process (what
`scripts/demo` serves). The endpoint is tests/latency_endpoint.py in a process of its own, counting the
requests it holds at once.

Needs no arguments; builds a throwaway SQLite database and 600 caption-only Hypo3D items, launches one
run of a model on the endpoint (its default window) and times it from launch to scored. Last line:
`items_per_s=N max_in_flight=N efficiency=N overhead_ms_per_item=N`, where efficiency is items_per_s
over what the window allows (max_in_flight / 0.2 s) and the overhead is the time per item beyond the
endpoint's own (ceil(600 / max_in_flight) x 200 ms). Goal: 16 in flight, efficiency >= 0.8, overhead
<= 5 ms per item."""

import json
import math
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N_ITEMS = 600
LATENCY_S = 0.2

sys.path.insert(0, str(ROOT))
from _database import use_embedded_default  # noqa: E402 -- a sibling module of the benches


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_endpoint() -> tuple[subprocess.Popen, str]:
    port = free_port()
    endpoint = subprocess.Popen([sys.executable, str(ROOT / "tests" / "latency_endpoint.py"), str(port), str(LATENCY_S)],
                                stdout=subprocess.PIPE, text=True)
    return endpoint, endpoint.stdout.readline().strip()


def peak_in_flight(url: str) -> int:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=5) as response:
        return json.loads(response.read())["peak"]


def main():
    use_embedded_default("api-throughput")
    from benchmarks.models import Benchmark, Item, Scene
    from modeleval import services, tasks  # noqa: F401 -- imported before the clock starts, as a server has
    from modeleval.models import ModelSpec

    benchmark = Benchmark.objects.create(name="api bench", slug="api-bench", family="hypo3d")
    scene = Scene.objects.create(benchmark=benchmark, external_id="scene0000_00", caption="A small office.")
    Item.objects.bulk_create(
        Item(benchmark=benchmark, scene=scene, question=f"What is left of chair {i}?", answers=["desk"],
             status="approved", tags={"change_type": "movement"}, external_id=f"q{i}")
        for i in range(N_ITEMS)
    )
    endpoint, url = start_endpoint()
    try:
        model = ModelSpec.objects.create(name="served", adapter="openai_compatible", modality="caption_only",
                                         config={"endpoint": url, "model": "served-model"})
        started = time.perf_counter()
        run = services.launch_run(model.pk, benchmark, None)  # the API's defaults (batch_size 8)
        elapsed = time.perf_counter() - started
        run.refresh_from_db()
        in_flight = peak_in_flight(url)
    finally:
        endpoint.terminate()
        endpoint.wait()
    errors = run.predictions.exclude(error="").count()
    if run.status != "finished" or run.predictions.count() != N_ITEMS or errors:
        raise SystemExit(f"run {run.status}: {run.predictions.count()} predictions, {errors} errors")
    items_per_s = N_ITEMS / elapsed
    ideal_s = math.ceil(N_ITEMS / in_flight) * LATENCY_S
    print(f"items={N_ITEMS} latency_ms={LATENCY_S * 1000:.0f} elapsed_s={elapsed:.2f} ideal_s={ideal_s:.2f}")
    print(f"items_per_s={items_per_s:.1f} max_in_flight={in_flight} "
          f"efficiency={items_per_s / (in_flight / LATENCY_S):.2f} "
          f"overhead_ms_per_item={(elapsed - ideal_s) * 1000 / N_ITEMS:.2f}")


if __name__ == "__main__":
    main()

"""Runs against an OpenAI-compatible endpoint that answers every request in 200 ms (as a hosted API or a
vLLM server does), on the embedded default: SQLite, tasks in the caller's process (what `scripts/demo`
serves). The endpoint is tests/latency_endpoint.py in a process of its own, counting the requests it
holds at once.

Needs no arguments; builds a throwaway SQLite database with caption-only Hypo3D items and launches two
runs of a model on the endpoint (its default window of 16): one of 180 requests (a short run, where
ramp-up and tail count) and one of 10,000 (about 125 s at 80 requests/s). Each is timed from launch to
its last prediction written (the newest Prediction.created_at; scoring, which follows, is not counted).
Last line: `efficiency_180=N efficiency_10000=N max_in_flight=N overhead_ms_per_item=N ...`, where
efficiency is requests/s over what the window allows (max_in_flight / 0.2 s) and the overhead is the
time per request beyond the endpoint's own (ceil(N / max_in_flight) x 200 ms), of the 10,000 run.
Goal (issue #49): efficiency_180 >= 0.8, efficiency_10000 >= 0.9, 16 in flight."""

import json
import math
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = (180, 10_000)
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


def timed_run(n_items: int, url: str) -> dict:
    """One run of `n_items` requests on a benchmark of its own: seconds from launch to the last
    prediction written, and to scored."""
    from django.db.models import Max

    from benchmarks.models import Benchmark, Item, Scene
    from modeleval import services
    from modeleval.models import ModelSpec

    benchmark = Benchmark.objects.create(name=f"api bench {n_items}", slug=f"api-bench-{n_items}", family="hypo3d")
    scene = Scene.objects.create(benchmark=benchmark, external_id="scene0000_00", caption="A small office.")
    Item.objects.bulk_create(
        (Item(benchmark=benchmark, scene=scene, question=f"What is left of chair {i}?", answers=["desk"],
              status="approved", tags={"change_type": "movement"}, external_id=f"q{i}") for i in range(n_items)),
        batch_size=1000,
    )
    model = ModelSpec.objects.create(name=f"served {n_items}", adapter="openai_compatible", modality="caption_only",
                                     config={"endpoint": url, "model": "served-model"})
    launched, started = time.time(), time.perf_counter()
    run = services.launch_run(model.pk, benchmark, None)  # the API's defaults; scored before it returns
    scored_s = time.perf_counter() - started
    run.refresh_from_db()
    errors = run.predictions.exclude(error="").count()
    if run.status != "finished" or run.predictions.count() != n_items or errors:
        raise SystemExit(f"run {run.status}: {run.predictions.count()} predictions, {errors} errors")
    written_s = run.predictions.aggregate(last=Max("created_at"))["last"].timestamp() - launched
    return {"written_s": written_s, "scored_s": scored_s}


def main():
    use_embedded_default("api-throughput")
    from modeleval import services, tasks  # noqa: F401 -- imported before the clock starts, as a server has

    endpoint, url = start_endpoint()
    try:
        timings = {n: timed_run(n, url) for n in RUNS}
        in_flight = peak_in_flight(url)
    finally:
        endpoint.terminate()
        endpoint.wait()
    capacity = in_flight / LATENCY_S
    figures = {}
    for n, timing in timings.items():
        ideal_s = math.ceil(n / in_flight) * LATENCY_S
        per_s = n / timing["written_s"]
        print(f"requests={n} latency_ms={LATENCY_S * 1000:.0f} written_s={timing['written_s']:.2f} "
              f"scored_s={timing['scored_s']:.2f} ideal_s={ideal_s:.2f} requests_per_s={per_s:.1f}")
        figures[f"efficiency_{n}"] = f"{per_s / capacity:.3f}"
        figures[f"requests_per_s_{n}"] = f"{per_s:.1f}"
        figures[f"overhead_ms_per_item_{n}"] = f"{(timing['written_s'] - ideal_s) * 1000 / n:.2f}"
    figures["max_in_flight"] = in_flight
    figures["overhead_ms_per_item"] = figures[f"overhead_ms_per_item_{RUNS[-1]}"]
    print(" ".join(f"{key}={value}" for key, value in figures.items()))


if __name__ == "__main__":
    main()

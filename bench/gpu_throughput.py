"""GPU inference throughput of the local transformers adapter through the gpu-queue path, against a
plain one-at-a-time `generate` loop over the same items, in the same run.

The model is a randomly initialised Qwen2-VL at Qwen2-VL-2B's real sizes (no weights are needed for
speed), saved as a checkpoint and registered as an `hf_local` ModelSpec. Every generation is exactly
NEW_TOKENS tokens long (the checkpoint's generation config), so both paths do the same work.
The queue path is the real one: `launch_run` fans batches out to the `gpu` queue on a Redis broker this
script starts on a free port, a Celery worker process (`--pool solo`, as docker-compose runs it) loads
the model once and answers `generation_batch` prompts per `generate` call. Items are 3DSRBench-style
multiple choice on one 448x448 image each (256 visual tokens).

Needs no arguments. Without CUDA it runs the same path with the tiny test model on the CPU and says
`device=cpu` (that figure is not a GPU measurement). Last line:
`items_per_s=N baseline_items_per_s=N speedup=N device=...`."""

import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WORK = Path(tempfile.mkdtemp(prefix="hypolab-gpu-bench-"))
NEW_TOKENS = 32
N_ITEMS = 512  # through the queue
N_BASELINE = 64  # one at a time: slower, so fewer items give the same precision
TASK_BATCH = 128  # item ids per infer_batch task
GENERATION_BATCH = 64  # prompts per generate call in the worker
IMAGE_SIDE = 448


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis() -> tuple[subprocess.Popen, str]:
    port = free_port()
    redis = subprocess.Popen(
        [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(WORK)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return redis, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def picture(index: int) -> bytes:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(index)
    pixels = rng.integers(0, 256, (IMAGE_SIDE, IMAGE_SIDE, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def seed_items(checkpoint: Path):
    """A 3DSRBench-style benchmark: N_ITEMS choice items, each on a scene with one image."""
    from benchmarks.models import AssetRole, Benchmark, Item, Scene
    from benchmarks.services import store_asset
    from modeleval.models import ModelSpec

    benchmark = Benchmark.objects.create(name="gpu bench", slug="gpu-bench", family="3dsrbench")
    items = []
    for i in range(N_ITEMS):
        scene = Scene.objects.create(benchmark=benchmark, external_id=f"img{i:05d}")
        store_asset(scene, AssetRole.IMAGE, f"img{i:05d}.png", picture(i))
        items.append(Item(benchmark=benchmark, scene=scene, answer_format="single", status="approved",
                          external_id=f"q{i:05d}", question="Is the chair to the left of the desk?",
                          choices=["yes", "no"], answers=["A"], tags={"category": "location"}))
    Item.objects.bulk_create(items)
    model = ModelSpec.objects.create(
        name="qwen2-vl-2b-random", adapter=ModelSpec.Adapter.HF_LOCAL, modality=ModelSpec.Modality.IMAGE,
        max_new_tokens=NEW_TOKENS, config={"checkpoint": str(checkpoint), "generation_batch": GENERATION_BATCH,
                                           "worker_queue": "bench"})
    return benchmark, model


def wait_for_predictions(run, total: int, limit_s: float, worker: subprocess.Popen) -> None:
    deadline = time.monotonic() + limit_s
    while run.predictions.count() < total:
        if worker.poll() is not None:  # a worker that died at start-up would leave us waiting
            raise RuntimeError(f"the worker exited ({worker.returncode}):\n"
                               + (WORK / "worker.log").read_text()[-3000:])
        if time.monotonic() > deadline:
            raise TimeoutError(f"{run.predictions.count()}/{total} predictions after {limit_s:.0f} s")
        time.sleep(0.2)


def queue_throughput(benchmark, model, worker_env: dict) -> float:
    from django.contrib.auth.models import User

    from benchmarks.models import Item
    from modeleval import services

    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "gpu.bench", "--pool", "solo",
         "--concurrency", "1", "--hostname", "gpu@bench", "--loglevel", "WARNING", "--without-gossip",
         "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=worker_env, stdout=(WORK / "worker.log").open("w"), stderr=subprocess.STDOUT)
    try:
        # Warm-up run on one generate call's worth of items: the worker loads the model (not timed).
        warm_ids = list(Item.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", flat=True)
                        [:GENERATION_BATCH])
        warm = services.launch_run(model.pk, benchmark, None, batch_size=TASK_BATCH)
        wait_for_predictions(warm, len(warm_ids), 900, worker)  # 900 s: the first load compiles kernels
        # a cancel goes through the run's job, which only staff may cancel
        admin, _ = User.objects.get_or_create(username="bench-admin", defaults={"is_staff": True})
        services.cancel_run(warm.pk, admin)
        started = time.perf_counter()
        run = services.launch_run(model.pk, benchmark, None, batch_size=TASK_BATCH)
        wait_for_predictions(run, N_ITEMS, 1200, worker)
        elapsed = time.perf_counter() - started
        errors = run.predictions.exclude(error="").count()
        if errors:
            raise RuntimeError(f"{errors} predictions failed: {run.predictions.exclude(error='').first().error}")
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    return N_ITEMS / elapsed


def baseline_throughput(benchmark, model) -> float:
    """What a researcher's script does: load with transformers, one prompt and one generate per item."""
    import torch
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from benchmarks.models import Item
    from modeleval.prompting.prompts import build_request

    device = "cuda" if torch.cuda.is_available() else "cpu"
    checkpoint = model.config["checkpoint"]
    processor = AutoProcessor.from_pretrained(checkpoint)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    vlm = AutoModelForImageTextToText.from_pretrained(checkpoint, dtype=dtype).to(device).eval()
    items = list(Item.objects.filter(benchmark=benchmark).select_related("scene").order_by("pk")[:N_BASELINE + 2])
    requests = [build_request(model, None, item) for item in items]

    def generate_one(request):
        image = Image.open(io.BytesIO(request.images[0])).convert("RGB")
        content = [{"type": "image"}, {"type": "text", "text": request.prompt}]
        text = processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                             tokenize=False)
        inputs = processor(text=[text], images=[image], return_tensors="pt").to(device)
        with torch.inference_mode():
            out = vlm.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False)
        assert out.shape[1] - inputs["input_ids"].shape[1] == NEW_TOKENS
        return processor.batch_decode(out[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)[0]

    for request in requests[:2]:  # warm-up: kernels, allocator
        generate_one(request)
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for request in requests[2:]:
        generate_one(request)
    if device == "cuda":
        torch.cuda.synchronize()
    return N_BASELINE / (time.perf_counter() - started)


def main():
    global N_ITEMS, N_BASELINE, TASK_BATCH, GENERATION_BATCH
    import torch

    from tests.tiny_vlm import TINY_TEXT, TINY_VISION, build_qwen2_vl, build_qwen2_vl_2b

    device = "cuda" if torch.cuda.is_available() else "cpu"
    checkpoint = WORK / "checkpoint"
    if device == "cuda":
        build_qwen2_vl_2b(checkpoint, fixed_new_tokens=NEW_TOKENS, max_pixels=IMAGE_SIDE * IMAGE_SIDE)
        torch.cuda.empty_cache()
        gpu = torch.cuda.get_device_name(0).replace(" ", "_")
    else:  # no GPU: the same path on the tiny model, so the script still runs end to end
        N_ITEMS, N_BASELINE, TASK_BATCH, GENERATION_BATCH = 32, 16, 16, 8
        build_qwen2_vl(checkpoint, TINY_TEXT, TINY_VISION, fixed_new_tokens=NEW_TOKENS)
        gpu = "none"

    redis, redis_url = start_redis()
    os.environ.update({
        "DATABASE_URL": f"sqlite:///{WORK / 'bench.sqlite3'}",
        "REDIS_URL": redis_url,
        "REDIS_KEY_PREFIX": "gpu-bench-",
        "MEDIA_ROOT": str(WORK / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "HF_HUB_OFFLINE": "1",
        "SECRET_KEY": "gpu-bench-throwaway".ljust(64, "k"),  # DEBUG is off and DATABASE_URL is set: the settings need one
        "HTTPS": "false",
    })
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        benchmark, model = seed_items(checkpoint)
        # the GPU worker of this model's queue is the only process that loads the checkpoint
        queued = queue_throughput(benchmark, model, {**os.environ, "LOCAL_CHECKPOINTS": "1"})
        baseline = baseline_throughput(benchmark, model)
    finally:
        redis.terminate()
        shutil.rmtree(WORK, ignore_errors=True)
    print(f"gpu={gpu} new_tokens={NEW_TOKENS} items={N_ITEMS} baseline_items={N_BASELINE} "
          f"generation_batch={GENERATION_BATCH}")
    print(f"items_per_s={queued:.2f} baseline_items_per_s={baseline:.2f} speedup={queued / baseline:.1f} "
          f"device={device}")


if __name__ == "__main__":
    main()

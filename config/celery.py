"""Celery app: `gpu` (and `gpu.<worker_queue>` per model, modeleval/dispatch.py) for model inference, `default`
for everything else."""

import os

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("hypolab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_default_queue = "default"
# Inference is the only work that needs an accelerator; route it by name so callers never choose.
app.conf.task_routes = {"modeleval.tasks.infer_batch": {"queue": "gpu"}}
# Long GPU batches: a worker takes one message at a time and acks it only when done,
# so a crash hands the batch to another worker instead of losing it.
app.conf.worker_prefetch_multiplier = 1
app.conf.task_acks_late = True
app.conf.task_reject_on_worker_lost = True
# Leases are also expired whenever someone asks for one; the sweep frees abandoned ones promptly.
app.conf.beat_schedule = {
    "expire-stale-leases": {"task": "annotation.tasks.expire_stale_leases", "schedule": 60.0},
    # Idempotency keys older than 24 h (core/idempotency.py).
    "purge-idempotency-keys": {"task": "core.tasks.purge_idempotency_keys", "schedule": 3600.0,
                               "options": {"expires": 3600.0}},
    # A job whose worker died stays running; after JOB_STALE_S without progress it is failed (core/jobs.py).
    "fail-stalled-jobs": {"task": "core.tasks.fail_stalled_running_jobs", "schedule": 60.0,
                          "options": {"expires": 60.0}},
    # A scene whose processing died (its worker killed, its message lost) is sent again (benchmarks/tasks.py).
    "reprocess-stalled-scenes": {"task": "benchmarks.tasks.reprocess_stalled_scenes", "schedule": 300.0,
                                 "options": {"expires": 300.0}},
    # A GPU worker that stopped beating mid-batch is gone: hand its batch to another (modeleval/inflight.py).
    # Expires unsent after one period, so a beat that could not reach the broker does not queue a backlog.
    "reap-stalled-batches": {"task": "modeleval.tasks.reap_stalled_batches", "schedule": settings.INFERENCE_REAPER_S,
                             "options": {"expires": settings.INFERENCE_REAPER_S}},
}
app.autodiscover_tasks()

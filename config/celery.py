"""Celery app: `gpu` (and `gpu.<worker_queue>` per model, modeleval/dispatch.py) for model inference, `default`
for everything else."""

import logging
import os
import threading

from celery import Celery, Task
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

log = logging.getLogger(__name__)


class ThreadResult:
    """What a task sent in a thread gives its sender: `get` waits for the thread (as EagerResult would)."""

    def __init__(self):
        self.done, self.value, self.error = threading.Event(), None, None

    def get(self, timeout=None, **_options):
        if not self.done.wait(timeout):
            raise TimeoutError("the task has not finished")
        if self.error is not None:
            raise self.error
        return self.value

    def forget(self) -> None:
        pass


class HypoLabTask(Task):
    """On a web server with no broker (TASKS_IN_THREADS, set by scripts/demo for its server only) a task sent
    from a request runs in a thread of the process, after the sender's transaction commits, so a launch,
    a recipe or an export answers at once and the page follows its job; elsewhere the embedded default
    runs tasks in the caller (commands, the suite) and a services stack sends them to Redis."""

    def apply_async(self, args=None, kwargs=None, **options):
        if not (self.app.conf.task_always_eager and settings.TASKS_IN_THREADS):
            return super().apply_async(args, kwargs, **options)
        from django.db import close_old_connections, connection, transaction

        result = ThreadResult()

        def run():
            try:
                result.value = self.apply(args, kwargs, **options).get()
            except Exception as error:  # the job records the failure; the thread has no caller to tell
                result.error = error
                log.exception("task %s failed in its thread", self.name)
            finally:
                result.done.set()
                connection.close()
                close_old_connections()

        thread = threading.Thread(target=run, name=f"task-{self.name}", daemon=True)
        transaction.on_commit(thread.start)
        return result


app = Celery("hypolab", task_cls=HypoLabTask)
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
    # A job whose worker died stays running; after its kind's stale limit without a sign of life it is failed
    # (core/jobs.py): every 10 s, so a release export (RELEASE_EXPORT_STALE_S) is failed within a minute.
    "fail-stalled-jobs": {"task": "core.tasks.fail_stalled_running_jobs", "schedule": 10.0,
                          "options": {"expires": 10.0}},
    # A scene whose processing died (its worker killed, its message lost) is sent again (scenes/tasks.py).
    "reprocess-stalled-scenes": {"task": "scenes.tasks.reprocess_stalled_scenes", "schedule": 300.0,
                                 "options": {"expires": 300.0}},
    # A GPU worker that stopped beating mid-batch is gone: hand its batch to another (modeleval/runs/inflight.py).
    # Expires unsent after one period, so a beat that could not reach the broker does not queue a backlog.
    "reap-stalled-batches": {"task": "modeleval.tasks.reap_stalled_batches", "schedule": settings.INFERENCE_REAPER_S,
                             "options": {"expires": settings.INFERENCE_REAPER_S}},
}
app.autodiscover_tasks()

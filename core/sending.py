"""Sending a Celery task by its registered name. A stage's dispatch module names the tasks it sends
instead of importing them, so its imports run one way: tasks.py → the verbs → dispatch, never back."""

import importlib

from celery import current_app


def task(name: str):
    """The registered task `name` (e.g. "review.tasks.find_near_duplicates"). A web process has not
    necessarily imported the tasks module (a worker imports them all when it starts), so it is imported by
    the name's module part; a name no task has is a KeyError at once, not a message no worker takes."""
    if name not in current_app.tasks:
        importlib.import_module(name.rpartition(".")[0])
    return current_app.tasks[name]


def send(name: str, *args, **options):
    """Send the task `name` with `args` (options as `apply_async` takes them: queue, task_id); its result."""
    return task(name).apply_async(args, **options)

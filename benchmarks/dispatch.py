"""Sending benchmarks' Celery tasks (default queue). Imports point one way: tasks.py imports services
and the material pipeline (tasks call the verbs); the verbs send tasks through these functions,
which reach tasks.py only when they send."""


def send_release_formats(release_id: int) -> None:
    from .tasks import write_release_formats

    write_release_formats.delay(release_id)


def send_scene_processing(scene_id: int) -> None:
    """Viewer files and top views for a scene whose scan was just stored."""
    from .tasks import process_scene

    process_scene.delay(scene_id)

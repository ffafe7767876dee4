from django.apps import AppConfig


def harness_prompt(sender, family, kind, **kwargs) -> dict | None:
    """The prompt a release's lmms-eval task sends (benchmarks/harness.py): the family's latest main
    template, its scene intro for what the task shows, and M3-Verse's answer-count sentences."""
    from .prompting.prompts import M3VERSE_ANSWER_COUNT, latest_template

    template = latest_template(family)
    if template is None:
        return None
    answer = {"prompt": template.text, "scene_intro": template.scene_intro.get(kind, "")}
    if "{answer_count}" in template.text:
        answer["answer_count"] = M3VERSE_ANSWER_COUNT
    return answer


class ModelevalConfig(AppConfig):
    name = "modeleval"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from benchmarks.releases.harness import harness_prompt as asked
        from core.jobs import on_cancel

        from .services import RUN_JOB, stop_cancelled_run

        # a release's lmms-eval task carries the family's prompt (benchmarks does not import modeleval)
        asked.connect(harness_prompt, weak=False, dispatch_uid="modeleval-harness-prompt")
        on_cancel(RUN_JOB, stop_cancelled_run)  # cancelling a run's job cancels the run

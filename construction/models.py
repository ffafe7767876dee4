"""A benchmark's construction pipeline as data (construction/pipeline.py runs it)."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark


class PipelineStage(models.Model):
    """One step of a benchmark's construction pipeline (generate -> filter -> balance -> release), as
    data an admin composes: its kind names the runner (construction.pipeline.STAGE_RUNNERS), `params` what
    the runner is given. Each run is a core Job; the latest one is kept for the manage page."""

    class Kind(models.TextChoices):
        GENERATE = "generate", "Generate items from scene metadata"
        FILTER_DUPLICATES = "filter_duplicates", "Find near duplicates"
        BALANCE = "balance", "Balance answers"
        LLM_FILTER = "llm_filter", "Filter with a language model"
        RELEASE = "release", "Export a release"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="pipeline_stages")
    position = models.PositiveIntegerField(help_text="Order in the pipeline, from 1.")
    kind = models.CharField(max_length=40, choices=Kind.choices)
    name = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True, help_text="What the stage's runner is given.")
    version = models.PositiveIntegerField(default=1, help_text="Bumped on every edit (optimistic locking).")
    last_job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                 help_text="The stage's latest run.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # the table it had in review, kept when the model moved here (review 0007, construction 0001)
        db_table = "review_pipelinestage"
        ordering = ["benchmark", "position"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "position"], name="pipeline_stage_position_unique")
        ]

    def __str__(self):
        return f"{self.benchmark.slug} #{self.position} {self.name or self.kind}"

"""Model registry, runs and predictions."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark, Item
from benchmarks.status import StatusTransitions


class ModelSpec(models.Model):
    class Adapter(models.TextChoices):
        RANDOM_BASELINE = "random_baseline", "Seeded random answer (baseline)"

    name = models.CharField(max_length=200, unique=True)
    adapter = models.CharField(max_length=30, choices=Adapter.choices)
    seed = models.IntegerField(default=0, help_text="Seed for sampling; same seed, same answers.")
    config = models.JSONField(default=dict, blank=True, help_text="Adapter settings (checkpoint, endpoint...).")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Run(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SCORING = "scoring", "Scoring"
        FINISHED = "finished", "Finished"
        FAILED = "failed", "Failed"

    TRANSITIONS = {
        "queued": {"running", "failed"},
        "running": {"scoring", "failed"},
        "scoring": {"finished", "failed"},
    }

    model = models.ForeignKey(ModelSpec, on_delete=models.PROTECT, related_name="runs")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="runs")
    items = models.ManyToManyField(Item, related_name="runs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    batch_size = models.PositiveIntegerField(default=8)
    total = models.PositiveIntegerField(default=0)
    scores = models.JSONField(default=dict, blank=True, help_text="Output of scoring.score for this run.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]


class Prediction(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="predictions")
    variant = models.CharField(max_length=30, default="", blank=True, help_text="Protocol variant, e.g. 'flip'.")
    repeat = models.PositiveIntegerField(default=0)
    output = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Retries and redeliveries must never write a second prediction.
            models.UniqueConstraint(
                fields=["run", "item", "variant", "repeat"], name="one_prediction_per_run_item_variant_repeat"
            )
        ]

"""Refinement: every edit of a change or an item is a revision; every verdict is a decision row;
independent answers measure consensus; near-duplicate runs list similar pairs for a reviewer."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from benchmarks.models import Benchmark, ContextChange, Item


class ChangeRevision(models.Model):
    change = models.ForeignKey(ContextChange, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(help_text="1 is the raw text; each edit adds one.")
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["change", "number"]
        constraints = [models.UniqueConstraint(fields=["change", "number"], name="revision_number_unique")]


class ReviewDecision(models.Model):
    class Action(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"

    change = models.ForeignKey(ContextChange, on_delete=models.CASCADE, related_name="decisions")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=10, choices=Action.choices)
    criteria = models.JSONField(default=list, blank=True, help_text="Criteria failed, for a rejection.")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]


class ItemRevision(models.Model):
    """A snapshot of an item's question, answers and tags; number 1 is the text as first written."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(help_text="1 is the original; each edit adds one.")
    question = models.TextField()
    answers = models.JSONField(default=list)
    tags = models.JSONField(default=dict, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    note = models.CharField(max_length=200, blank=True, help_text="Why it changed, e.g. 'adjudicated'.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item", "number"]
        constraints = [models.UniqueConstraint(fields=["item", "number"], name="item_revision_number_unique")]


class ItemDecision(models.Model):
    """A verdict on an item: in review (approve/reject) or in bulk filtering of drafts (keep/drop)."""

    class Action(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        KEEP = "keep", "Keep (filtering)"
        DROP = "drop", "Drop (filtering)"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="decisions")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=10, choices=Action.choices)
    criteria = models.JSONField(default=list, blank=True, help_text="Criteria failed, for a rejection or a drop.")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class IndependentAnswer(models.Model):
    """One person's answer to an item, given without seeing the gold (for consensus)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="independent_answers")
    answerer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    answer = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "created_at"]
        constraints = [models.UniqueConstraint(fields=["item", "answerer"], name="one_answer_per_answerer")]


class DedupRun(models.Model):
    """One near-duplicate search over a benchmark's changes and questions, run as its core.Job (kind
    `dedup`, key `dedup:<run>`): the job's status, message and finish time are the run's (`run.job.status`);
    the row keeps what the search is and what it found."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="dedup_runs")
    threshold = models.FloatField(default=0.8, help_text="Cosine similarity above which a pair is listed.")
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="The search as a job: its status, progress and report (core/jobs.py); "
                                      "made with the run (its key names the run's id).")
    n_texts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]


class DuplicatePair(models.Model):
    """Two texts of the same kind above the threshold; a reviewer keeps one (or both)."""

    class Kind(models.TextChoices):
        CHANGE = "change", "Context change"
        QUESTION = "question", "Question"

    class Resolution(models.TextChoices):
        PENDING = "pending", "Pending"
        KEPT_FIRST = "kept_first", "Kept the first"
        KEPT_SECOND = "kept_second", "Kept the second"
        KEPT_BOTH = "kept_both", "Not duplicates"

    run = models.ForeignKey(DedupRun, on_delete=models.CASCADE, related_name="pairs")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    first_id = models.PositiveIntegerField(help_text="Change or item id (the smaller).")
    second_id = models.PositiveIntegerField()
    first_text = models.TextField()
    second_text = models.TextField()
    similarity = models.FloatField()
    resolution = models.CharField(max_length=20, choices=Resolution.choices, default=Resolution.PENDING)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-similarity"]
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "first_id", "second_id"], name="duplicate_pair_once")
        ]


class TextEmbedding(models.Model):
    """A cached sentence embedding of one text, so a repeated near-duplicate search encodes only
    texts it has not seen. Keyed by the encoder's name and version: new weights never reuse old
    vectors."""

    encoder = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64, help_text="Of the text (UTF-8).")
    vector = models.BinaryField(help_text="float32, unit length.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["encoder", "sha256"], name="text_embedding_once")]


class Polish(models.Model):
    """A model's grammar pass over one change at one revision, applied as a new revision that a
    reviewer accepts or reverts. One per (change, revision polished): a repeated task never polishes
    the same text twice."""

    class Status(models.TextChoices):
        APPLIED = "applied", "Applied, waiting for a reviewer"
        SKIPPED = "skipped", "Not applied (nothing to correct, or not a plausible correction)"
        ACCEPTED = "accepted", "Accepted"
        REVERTED = "reverted", "Reverted"

    change = models.ForeignKey(ContextChange, on_delete=models.CASCADE, related_name="polishes")
    source_number = models.PositiveIntegerField(help_text="The revision polished; 0 is the raw text.")
    source_text = models.TextField()
    revision = models.ForeignKey(ChangeRevision, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                 help_text="The revision the model wrote, if applied.")
    model = models.ForeignKey("modeleval.ModelSpec", null=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.APPLIED)
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["change", "source_number"], name="polish_once_per_revision")]

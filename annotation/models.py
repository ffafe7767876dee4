"""Crowd authoring: campaigns, leased assignments with their server-side drafts, qualification
attempts and model-drafted raw items. Who a worker is on their platform lives in crowd."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark, ChangeType, ContextChange, Item, Scene
from core.status import StatusTransitions
from core.validation import validate_http_url
from scoring.engine import get_family


def default_question_types() -> dict[str, list[str]]:
    """A campaign's question-type taxonomy starts as Hypo3D's (a fact of scoring's family record)."""
    return {fine: list(coarse) for fine, coarse in get_family("hypo3d").fine_question_types.items()}


class Campaign(models.Model):
    class Kind(models.TextChoices):
        CONTEXT_CHANGE = "context_change", "Context change (N descriptions of one change type)"
        WORLD_FRAME = "world_frame", "World-frame anchor"
        QUESTION_ANSWER = "question_answer", "Question and answer on an approved change"
        CHOICE_IMAGE = "choice_image", "Multiple-choice item on an image"
        CHOICE_VIDEO = "choice_video", "Multiple-choice item on paired before/after videos"
        ANSWER_ONLY = "answer_only", "Independent answer to an existing question"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="campaigns")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=30, choices=Kind.choices, default=Kind.CONTEXT_CHANGE)
    # only context-change campaigns take one (annotation/families.py); "" for the other kinds
    change_type = models.CharField(max_length=20, choices=ChangeType.choices, default=ChangeType.MOVEMENT, blank=True)
    scenes = models.ManyToManyField(Scene, related_name="campaigns", help_text="The pool of scenes to assign.")
    guidelines = models.TextField(blank=True, help_text="Markdown shown before the first assignment.")
    min_words = models.PositiveIntegerField(default=10, help_text="Minimum words per description.")
    descriptions_per_assignment = models.PositiveIntegerField(
        default=5, help_text="How many descriptions (each changing a different object) one assignment asks for."
    )
    lease_minutes = models.PositiveIntegerField(
        default=30, help_text="How long an assignment is held without a heartbeat or autosave."
    )
    max_assignments_per_worker = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cap on assignments one worker may hold or submit; empty for no cap."
    )
    assignments_per_scene = models.PositiveIntegerField(
        null=True, blank=True, help_text="Quota of open or submitted assignments per scene; empty for no quota."
    )
    pay_cents = models.PositiveIntegerField(default=100, help_text="Payment in US cents per pay unit.")
    pay_unit = models.PositiveIntegerField(
        default=5, help_text="Accepted descriptions per pay unit ($1.00 per five in Hypo3D)."
    )
    question_types = models.JSONField(
        default=default_question_types, blank=True,
        help_text="Question-type taxonomy for question and choice campaigns: {fine type: [coarse types]}.",
    )
    quiz = models.JSONField(
        default=list, blank=True,
        help_text='Qualification quiz gating entry: [{"question": str, "choices": [str, ...], "answer": index}].',
    )
    quiz_max_attempts = models.PositiveIntegerField(default=2, help_text="Attempts a worker gets at the quiz.")
    completion_url = models.CharField(
        max_length=500, blank=True, validators=[validate_http_url],
        help_text="Where a worker returns with their code (an http(s) URL), with {code} in it; empty for the "
                  "platform's default.",
    )
    return_code = models.CharField(
        max_length=100, blank=True,
        help_text="The platform's code for a participant who gives the work back (Prolific: the completion code "
                  "whose action is 'returned'); empty: a worker who gives a scene back just leaves.",
    )
    return_url = models.CharField(
        max_length=500, blank=True, validators=[validate_http_url],
        help_text="Where a worker who gives the work back goes (an http(s) URL, {code} replaced by the return code); "
                  "empty: the platform's completion URL with the return code.",
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Assignment(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        LEASED = "leased", "Leased"
        SUBMITTED = "submitted", "Submitted"
        EXPIRED = "expired", "Expired"
        RELEASED = "released", "Released by the worker"

    TRANSITIONS = {"leased": {"submitted", "expired", "released"}}

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="assignments")
    change = models.ForeignKey(
        ContextChange, null=True, blank=True, on_delete=models.CASCADE, related_name="crowd_assignments",
        help_text="The approved change a question-and-answer assignment writes on.",
    )
    item = models.ForeignKey(
        Item, null=True, blank=True, on_delete=models.CASCADE, related_name="crowd_assignments",
        help_text="The existing question an answer-only assignment answers.",
    )
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.LEASED)
    lease_expires_at = models.DateTimeField(help_text="Renewed by every heartbeat and autosave.")
    completion_code = models.CharField(max_length=40, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="What the submission created (row ids).")
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # A worker holds at most one open lease per campaign: re-entry resumes it.
            models.UniqueConstraint(
                fields=["campaign", "worker"],
                condition=models.Q(status="leased"),
                name="one_open_lease_per_worker_campaign",
            )
        ]
        indexes = [models.Index(fields=["campaign", "status", "lease_expires_at"])]


class AssignmentDraft(models.Model):
    """Server-side draft, so a closed tab, a reload or another device loses nothing."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    descriptions = models.JSONField(
        default=list, help_text="Descriptions the server has checked and accepted into this assignment."
    )
    text = models.TextField(blank=True, help_text="The description being written, saved by autosave.")
    content = models.JSONField(default=dict, blank=True, help_text="The form being filled, for the other kinds.")
    revision = models.PositiveIntegerField(default=0, help_text="Bumped on every save.")
    updated_at = models.DateTimeField(auto_now=True)


class CrowdAnswer(models.Model):
    """An answer-only campaign's independent answer to an existing item, kept for consensus."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="crowd_answer")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="crowd_answers")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="crowd_answers")
    answer = models.JSONField(help_text="Open text, or the chosen letters for a choice item.")
    created_at = models.DateTimeField(auto_now_add=True)


class QuizAttempt(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="quiz_attempts")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quiz_attempts")
    answers = models.JSONField(help_text="The chosen index per quiz question.")
    passed = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)


class DraftingPrompt(models.Model):
    """Admin-editable prompt for model-drafted raw items, in the style of Hypo3D's templates: the
    object list, the change, examples, rules and a JSON output format."""

    class Target(models.TextChoices):
        CHANGES = "changes", "Raw context changes (per scene)"
        QUESTIONS = "questions", "Raw questions with answers (per approved change)"

    name = models.CharField(max_length=200, unique=True)
    target = models.CharField(max_length=20, choices=Target.choices)
    change_type = models.CharField(
        max_length=20, choices=ChangeType.choices, blank=True,
        help_text="For change templates: the type drafted. For question templates: the change type it suits.",
    )
    question_type = models.CharField(max_length=100, blank=True, help_text="For question templates: fine type.")
    text = models.TextField(
        help_text="Placeholders: {objects}, {caption}, {change}, {change_type}, {question_type}, {count}, {examples}."
    )
    examples = models.TextField(blank=True, help_text="Example outputs shown to the model, one per line.")
    count = models.PositiveIntegerField(default=4, help_text="How many the model is asked for per call.")
    is_active = models.BooleanField(default=True)

    def __str__(self):
        return self.name


class DraftRequest(models.Model):
    """One model call for one template on one scene (changes) or change (questions), run as its
    core.Job (kind `drafting`, key `draft:<request>`): the job's status and message are the request's
    (`request.job.status`). Keyed, so a retried or redelivered task never drafts twice."""

    template = models.ForeignKey(DraftingPrompt, on_delete=models.CASCADE, related_name="requests")
    model = models.ForeignKey("modeleval.ModelSpec", on_delete=models.CASCADE, related_name="+")
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="+")
    change = models.ForeignKey(ContextChange, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    prompt = models.TextField(blank=True)
    output = models.TextField(blank=True, help_text="The model's raw output.")
    created = models.JSONField(default=dict, blank=True, help_text="Ids of the raw rows it produced.")
    created_at = models.DateTimeField(auto_now_add=True)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="Its status, message and report (core/jobs.py); made with the request "
                                      "(its key names the request's id).")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["template", "model", "scene"], condition=models.Q(change__isnull=True),
                                    name="draft_once_per_scene"),
            models.UniqueConstraint(fields=["template", "model", "change"], condition=models.Q(change__isnull=False),
                                    name="draft_once_per_change"),
        ]

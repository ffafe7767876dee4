"""Human baseline: a study design over approved items, each participant's plan of items, timed
sessions, one row per response."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark, Item
from core.status import StatusTransitions


class Study(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="studies")
    name = models.CharField(max_length=200)
    items = models.ManyToManyField(Item, through="StudyItem", related_name="studies")
    seconds_per_item = models.PositiveIntegerField(default=120, help_text="Time limit for one item.")
    seconds_per_session = models.PositiveIntegerField(default=1800, help_text="Time limit for a session.")
    is_open = models.BooleanField(default=True)
    sample_seed = models.BigIntegerField(
        help_text="Seed of the random draws (stratified sample, familiarisation pick, per-participant order)."
    )
    stratify_by = models.CharField(
        max_length=100,
        blank=True,
        help_text="Item tag the scored sample was stratified by; blank: items picked.",
    )
    per_stratum = models.PositiveIntegerField(
        null=True, blank=True, help_text="Scored items drawn for each value of the stratifying tag."
    )
    participants_per_item = models.PositiveIntegerField(
        default=3,
        help_text="Independent participants wanted per scored item; a full item is given to no one else.",
    )
    items_per_session = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Scored items in one session (least-filled first); blank: all of them.",
    )
    attention_failures_allowed = models.PositiveIntegerField(
        default=0, help_text="A participant failing more attention checks than this is excluded from results."
    )
    allow_going_back = models.BooleanField(
        default=False, help_text="Whether a participant may change an earlier answer while the session lasts."
    )
    shuffle_items = models.BooleanField(
        default=False, help_text="Show the scored items in a per-participant random order (else study order)."
    )
    shuffle_choices = models.BooleanField(
        default=True, help_text="Show the options of choice items in a per-participant random order."
    )
    offer_not_sure = models.BooleanField(
        default=False, help_text="Add a 'Not sure' option to choice items that have none (scored as wrong)."
    )
    circular_variants = models.BooleanField(
        default=False,
        help_text="CircularEval: scored choice items are shown with their options rotated, each participant "
        "getting the least-shown rotation (instead of a shuffle).",
    )
    flip_images = models.BooleanField(
        default=False,
        help_text="FlipEval: scored image items tagged flip: swap/same are also shown on the mirrored image "
        "(left and right answers swapped where the tag says so).",
    )
    scene_state = models.CharField(
        max_length=10, choices=[("imagined", "Imagined (the scene before its change)"),
                                ("changed", "Changed (the change's after-state)")], default="imagined",
        help_text="Participants see the scene before its change and imagine it (imagined, the papers'), or the "
                  "change's after-state, the changed scene built from its geometry (changed; not in any paper).",
    )
    instructions = models.TextField(
        blank=True, help_text="Markdown shown before the session starts (what to do, how answers are given)."
    )
    consent_text = models.TextField(
        blank=True,
        help_text="Markdown a participant agrees to before the clock starts; blank: the standard consent "
        "statement is shown on the page (API clients then start without a consent step).",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    places_check = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                     help_text="The latest check of its places against Prolific, as its job.")
    platform = models.CharField(
        max_length=20, blank=True, default="", choices=[("", "Automatic"), ("prolific", "Prolific"),
                                                         ("generic", "Another platform (MTurk, CloudResearch)")],
        help_text="The crowd platform it recruits on: its links take that platform's parameters only. Automatic: "
                  "Prolific when it is published there or PROLIFIC_API_TOKEN is set, else any platform's link.",
    )

    class Meta:
        verbose_name_plural = "studies"

    def __str__(self):
        return self.name


class ItemRole(models.TextChoices):
    SCORED = "scored", "Scored"
    FAMILIARISATION = "familiarisation", "Familiarisation (feedback, not scored)"
    ATTENTION = "attention", "Attention check (not scored; failing excludes)"


class StudyItem(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE)
    item = models.ForeignKey(Item, on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=20, choices=ItemRole.choices, default=ItemRole.SCORED)
    stratum = models.CharField(max_length=200, blank=True, help_text="Value of the stratifying tag, if any.")

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["study", "item"], name="study_item_unique")]


class EvalSession(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        FINISHED = "finished", "Finished"

    TRANSITIONS = {"active": {"finished"}}

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="sessions")
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="eval_sessions"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    started_at = models.DateTimeField(help_text="Arrival: the instructions and consent page was first shown.")
    consented_at = models.DateTimeField(
        null=True, blank=True, help_text="When the participant agreed to take part; the session's clock starts here."
    )
    deadline = models.DateTimeField(
        help_text="Server-owned end of the session: consent + the session's time (before consent, the latest "
        "moment the session can still start and end)."
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=40, blank=True)
    flagged = models.CharField(
        max_length=200, blank=True, default="",
        help_text="Why the session holds no place and is left out of the human row (an id someone else took, a "
                  "submission Prolific does not know); empty: it counts.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "participant"], name="one_session_per_participant")
        ]


class SessionItem(models.Model):
    """One entry of a participant's plan, fixed when the session starts: which item, when, and
    in which order its options are shown."""

    session = models.ForeignKey(EvalSession, on_delete=models.CASCADE, related_name="plan")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    role = models.CharField(max_length=20, choices=ItemRole.choices)
    choice_order = models.JSONField(
        default=list,
        blank=True,
        help_text="Canonical option index shown at each position (empty: no choices).",
    )
    variant = models.CharField(
        max_length=30, default="", blank=True,
        help_text="Protocol variant shown (benchmarks.protocols): '' as is, 'k' options rotated by k, 'flip' "
        "the mirrored image, 'flip-k' both.",
    )

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "item"], name="session_item_unique"),
            models.UniqueConstraint(fields=["session", "position"], name="session_position_unique"),
        ]


class Response(models.Model):
    session = models.ForeignKey(EvalSession, on_delete=models.CASCADE, related_name="responses")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="human_responses")
    shown_at = models.DateTimeField()
    deadline = models.DateTimeField(help_text="Server-owned end of this item.")
    answered_at = models.DateTimeField(null=True, blank=True)
    answer_text = models.TextField(
        blank=True, help_text="As given: option letters in the order shown, 'Not sure', or an open answer."
    )
    timed_out = models.BooleanField(default=False)
    client_latency_ms = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The page's own measure (performance.now()); data, never trusted for time.",
    )
    focus_losses = models.PositiveIntegerField(
        default=0, help_text="Times the page lost focus while the item was shown, as the page reports it."
    )
    revised_at = models.DateTimeField(
        null=True, blank=True, help_text="Last change of the answer after going back."
    )
    onset_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When everything the item shows was on screen, as the page reported it (server time, accepted "
                  "only within a bound after serving); the item's clock runs from here.",
    )
    load_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Serving to onset: how long the stimuli took to load and show."
    )
    late_onset = models.BooleanField(
        default=False, help_text="The onset came later than the stimulus needs to load (onset.onset_allowance): "
                                 "the question was on the page meanwhile, so the answer is left out of the human row.",
    )

    class Meta:
        ordering = ["shown_at"]
        constraints = [models.UniqueConstraint(fields=["session", "item"], name="one_response_per_item")]

    @property
    def latency_ms(self):
        """Response time from stimulus onset (from serving when the page never reported one)."""
        if self.answered_at is None:
            return None
        return int((self.answered_at - (self.onset_at or self.shown_at)).total_seconds() * 1000)


class StudyInvitation(models.Model):
    """An evaluator (an account, or an e-mail address an account has or will have) the admin invited to
    a study: evaluators who are not crowd participants see and start only the studies they were invited
    to (crowd participants only those they entered by the study's own link)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="study_invitations")
    email = models.EmailField(blank=True, help_text="Invites whichever account has this address (case ignored).")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], condition=models.Q(user__isnull=False),
                                    name="invite_user_once"),
            models.UniqueConstraint(fields=["study", "email"], condition=~models.Q(email=""),
                                    name="invite_email_once"),
            models.CheckConstraint(condition=models.Q(user__isnull=False) | ~models.Q(email=""),
                                   name="invite_names_someone"),
        ]

    def __str__(self):
        return f"{self.study}: {self.user or self.email}"

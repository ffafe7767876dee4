"""Model registry, prompt templates, runs and predictions."""

from django.conf import settings
from django.db import models

from benchmarks.models import Benchmark, Family, Item
from core.status import StatusTransitions


class ModelSpec(models.Model):
    class Adapter(models.TextChoices):
        RANDOM_BASELINE = "random_baseline", "Seeded random answer (baseline)"
        OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible endpoint (vLLM, hosted API)"
        HF_LOCAL = "hf_local", "Local Hugging Face transformers checkpoint"
        RANDOM_PLUS_PLUS = "random_plus_plus", "Random++: one seeded guess per question, same under every choice order"
        RECORDED_OUTPUTS = "recorded_outputs", "Recorded outputs: a file of model outputs produced elsewhere"
        POINT_CLOUD_PYTHON = "point_cloud_python", "A point-cloud model: a Python class named in config (module:Class)"

    # Chance guessers, not models: results and item analysis show them apart.
    BASELINE_ADAPTERS = (Adapter.RANDOM_BASELINE, Adapter.RANDOM_PLUS_PLUS)

    class Modality(models.TextChoices):
        """What a model is shown: its runs' visual input unless a run chooses another (visual_inputs.py)."""

        CAPTION_ONLY = "caption_only", "Scene caption (text only)"
        TOP_VIEW_PLAIN = "top_view_plain", "Plain top-view map"
        TOP_VIEW_SEMANTIC = "top_view_semantic", "Semantic top-view map"
        MULTI_VIEW = "multi_view", "N camera views from around the room (config n_views)"
        EGOCENTRIC = "egocentric", "N camera views turning at the room's centre (config n_views)"
        POINT_CLOUD = "point_cloud", "The scan's points (xyz, rgb, instance)"
        IMAGE = "image", "The scene's images"
        VIDEO_FRAMES = "video_frames", "N frames sampled from each of the scene's videos"

    name = models.CharField(max_length=200, unique=True)
    adapter = models.CharField(max_length=30, choices=Adapter.choices)
    modality = models.CharField(
        max_length=30, choices=Modality.choices, default=Modality.CAPTION_ONLY, help_text="What the model is shown."
    )
    withhold_stimulus = models.BooleanField(
        default=False, help_text="Vision-blind control: the same model and prompt with no image."
    )
    family = models.CharField(max_length=20, choices=Family.choices, blank=True,
                              help_text="Benchmark family this model is meant for (blank: any).")
    seed = models.IntegerField(default=0, help_text="Seed for sampling; same seed, same answers.")
    max_new_tokens = models.PositiveIntegerField(default=128)
    temperature = models.FloatField(default=0.0)
    config = models.JSONField(
        default=dict, blank=True,
        help_text="Adapter settings: endpoint, model, api_key_env, timeout_s, max_retries, latency_ms, "
        "checkpoint, n_frames, frame_size, n_views; recorded outputs: benchmark, file, digest, outputs; point-cloud "
        "models: class (module:Class), options (its keyword arguments).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class RecordedOutput(models.Model):
    """One output of a recorded-outputs model, read from a file of outputs produced elsewhere (a
    VLMEvalKit result, an lmms-eval log, a family's own output file) and keyed to its item."""

    model = models.ForeignKey(ModelSpec, on_delete=models.CASCADE, related_name="recorded_outputs")
    item_key = models.CharField(max_length=100, help_text="The item's scoring id (its benchmark id, else release id).")
    variant = models.CharField(max_length=30, default="", blank=True, help_text="Protocol variant, e.g. 'flip'.")
    repeat = models.PositiveIntegerField(default=0)
    output = models.TextField(blank=True, help_text="The output as recorded.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model", "item_key", "variant", "repeat"],
                                    name="one_recorded_output_per_item_variant_repeat")
        ]


class PromptTemplate(models.Model):
    """A prompt as data: one per family and condition, versioned; runs pin the version they used."""

    family = models.CharField(max_length=20, choices=Family.choices)
    condition = models.SlugField(max_length=50, help_text="e.g. 'main', 'no-world-frame', 'no-cot'.")
    version = models.PositiveIntegerField(default=1)
    text = models.TextField(help_text="Python format string with {world_frame}, {change}, {question}, {choices}.")
    scene_intro = models.JSONField(
        default=dict, blank=True, help_text="Per modality: how the scene is introduced ({modality: sentence})."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["family", "condition", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["family", "condition", "version"], name="prompt_version_unique")
        ]

    def __str__(self):
        return f"{self.family}/{self.condition} v{self.version}"


class Run(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SCORING = "scoring", "Scoring"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"
        FAILED = "failed", "Failed"

    TRANSITIONS = {
        Status.QUEUED: {Status.RUNNING, Status.FAILED, Status.CANCELLED},
        Status.RUNNING: {Status.SCORING, Status.FAILED, Status.CANCELLED},
        Status.SCORING: {Status.FINISHED, Status.FAILED},
        # back to queued when resuming must first render the view sets it is missing
        Status.CANCELLED: {Status.RUNNING, Status.QUEUED},
        Status.FAILED: {Status.RUNNING, Status.QUEUED},
    }

    model = models.ForeignKey(ModelSpec, on_delete=models.PROTECT, related_name="runs")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="runs")
    prompt_template = models.ForeignKey(PromptTemplate, null=True, blank=True, on_delete=models.PROTECT)
    items = models.ManyToManyField(Item, related_name="runs")
    repeats = models.PositiveIntegerField(default=1, help_text="Independent repeats per item (CausalSpatial: 5).")
    protocol = models.JSONField(
        default=dict, blank=True,
        help_text='Variants per item (benchmarks.protocols): {"circular": every rotation of the options, '
        '"flip": the mirrored image}; empty: vanilla.',
    )
    subset = models.JSONField(
        default=dict, blank=True,
        help_text='Items by tags, e.g. {"level": ["L1_single", "L2_objects"]}: an item is run when, for every '
        "tag named, its value is one of those listed; empty: every approved item.",
    )
    prompt_templates = models.JSONField(
        default=dict, blank=True,
        help_text='A prompt per tag value: {"by": "level", "templates": {"L1_single": {"id", "condition", '
        '"version"}}}; items whose value is not listed get `prompt_template`.',
    )
    examples = models.JSONField(
        default=list, blank=True, help_text="In-context examples [{question, answer}] put before each prompt."
    )
    judge_model = models.ForeignKey(
        ModelSpec, null=True, blank=True, on_delete=models.PROTECT, related_name="judged_runs",
        help_text="3DSRBench: an OpenAI-compatible model that reads the choice when the rules cannot.",
    )
    visual_input = models.CharField(
        max_length=30, help_text="What the model is shown, e.g. top_view_plain, multi_view:4, point_cloud "
        "(visual_inputs.py); the model's modality unless the launch chose another.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    batch_size = models.PositiveIntegerField(default=8)
    total = models.PositiveIntegerField(default=0, help_text="Predictions expected: item variants x repeats.")
    scores = models.JSONField(default=dict, blank=True, help_text="Output of scoring.score for this run.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    # after created_by: the field's name shadows django.conf.settings in this class body
    settings = models.JSONField(
        default=dict, blank=True,
        help_text="Generation settings sent with every request (modeleval.generation): temperature, top_p, "
        "max_tokens, seed, stop, reasoning_effort, thinking_budget, enable_thinking; the model's defaults otherwise.",
    )
    recipe = models.JSONField(
        default=dict, blank=True, help_text='The recipe run this is (modeleval.recipes): {"name", "version", "entry", '
        '"settings"}, its settings being the recipe\'s defaults; empty for a run launched on its own.',
    )
    inputs = models.JSONField(
        default=dict, blank=True,
        help_text='What the run adds to or makes of its visual input (modeleval.run_inputs): {"frames_per_video": N} '
        'or {"fps": F} (video frames sampled per video), {"extra_frames": source} (per-item frames imported from '
        'elsewhere, sent after the scene\'s), {"chain": {...}} (captions -> summary -> answer, stored and reused).',
    )
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="Its current attempt (launch or resume): progress and report (core/jobs.py).")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]


class Prediction(models.Model):
    class Extraction(models.TextChoices):
        RULE = "rule", "Read by the family's rules"
        JUDGE = "judge", "Read by a judge"
        FAILED = "failed", "No answer could be read"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="predictions")
    variant = models.CharField(max_length=30, default="", blank=True, help_text="Protocol variant, e.g. 'flip'.")
    repeat = models.PositiveIntegerField(default=0)
    seed = models.BigIntegerField(
        null=True, blank=True, help_text="The sampling seed sent for this repeat, derived from the run's seed, the "
        "item, its variant and the repeat (modeleval.generation.repeat_seed); none where nothing is sampled.")
    visual_input = models.CharField(max_length=30, help_text="What the model was shown (the run's visual input).")
    prompt_sha256 = models.CharField(max_length=64, blank=True, help_text="Hash of the exact prompt sent.")
    output = models.TextField(blank=True, help_text="The raw model output.")
    error = models.TextField(blank=True, help_text="Why inference failed for this item (the run goes on).")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # Written by scoring (scoring.score(rows=True)); the prompt's template version is the run's.
    extracted = models.TextField(blank=True, help_text="The answer read from the output, as scored.")
    extraction = models.CharField(
        max_length=10, choices=Extraction.choices, blank=True,
        help_text="How the answer was read; blank until the run is scored or when inference failed.",
    )
    judge_rating = models.FloatField(
        null=True, blank=True, help_text="Hypo3D: the judge model's rating of the output, 1-5 (modeleval.secondary_"
        "metrics), asked before scoring; its run scores (s - 1) / 4 x 100 as `judge`.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Retries and redeliveries must never write a second prediction.
            models.UniqueConstraint(
                fields=["run", "item", "variant", "repeat"], name="one_prediction_per_run_item_variant_repeat"
            )
        ]


def item_frame_path(frame, filename):
    return f"item_frames/{frame.source}/{frame.item_id}/{filename}"


class ItemFrame(models.Model):
    """A frame produced elsewhere for one item (CausalSpatial's world-model frames: the first frames of
    a video generated from the item's image and motion), imported under a source name; a run with
    `inputs.extra_frames = source` sends them, in `index` order, after the scene's pictures."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="extra_frames")
    source = models.SlugField(max_length=50, help_text="What produced the frames, e.g. 'cow'.")
    index = models.PositiveIntegerField()
    file = models.FileField(upload_to=item_frame_path, max_length=300)
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "source", "index"]
        constraints = [models.UniqueConstraint(fields=["item", "source", "index"], name="one_item_frame_per_index")]


class ChainOutput(models.Model):
    """A stored step of a chained run (modeleval.chains): one clip's caption (`index` = the clip) or a
    video's summary (`index` = -1) by the captioning model, keyed by that model, the hash of the step
    prompts and sampling, the scene and its state (the video), so every reasoning model reuses it."""

    model = models.ForeignKey(ModelSpec, on_delete=models.CASCADE, related_name="chain_outputs")
    prompt_sha256 = models.CharField(max_length=64, help_text="Hash of the step prompts and clip sampling.")
    scene = models.ForeignKey("benchmarks.Scene", on_delete=models.CASCADE, related_name="chain_outputs")
    state = models.CharField(max_length=30, help_text="The video's state, e.g. before or after.")
    index = models.IntegerField(help_text="The clip (from 0); -1 for the video's summary.")
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "prompt_sha256", "scene", "state", "index"],
                                               name="one_chain_output_per_step")]

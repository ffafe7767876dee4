"""The data every stage works on: benchmarks, scenes and their files, objects, world frames,
context changes, items and releases."""

import uuid

from django.conf import settings
from django.db import models

from core.status import StatusTransitions


class Family(models.TextChoices):
    HYPO3D = "hypo3d", "Hypo3D"
    SRBENCH3D = "3dsrbench", "3DSRBench"
    CAUSALSPATIAL = "causalspatial", "CausalSpatial"
    SPATIAL457 = "spatial457", "Spatial457"
    M3VERSE = "m3verse", "M3-Verse"


class Benchmark(models.Model):
    name = models.CharField(max_length=200, unique=True, help_text="Display name, e.g. 'Hypo3D demo'.")
    slug = models.SlugField(max_length=100, unique=True, help_text="URL-safe short name.")
    family = models.CharField(
        max_length=20, choices=Family.choices, help_text="Which benchmark family's rules and scorer apply."
    )
    description = models.TextField(blank=True, help_text="What the benchmark measures.")
    license = models.CharField(
        max_length=50, blank=True,
        help_text="The data's license as the Hugging Face Hub names it (e.g. cc-by-4.0); written into dataset cards.",
    )
    citation = models.TextField(blank=True, help_text="BibTeX to cite the benchmark; written into dataset cards.")
    allow_self_approval = models.BooleanField(
        default=False,
        help_text="A reviewer's own question is approved at once; otherwise it waits (draft) for a second reviewer.",
    )
    public = models.BooleanField(
        default=False,
        help_text="Its results page, leaderboard and paper tables are readable by anyone, signed out too; its "
                  "items, gold answers, participants, releases and studies stay private.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Scene(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="scenes")
    external_id = models.CharField(max_length=100, help_text="Id in the source dataset, e.g. scene0000_00.")
    caption = models.TextField(blank=True, help_text="Short scene caption (text input for LLMs).")
    meta = models.JSONField(default=dict, blank=True,
                            help_text="Scan facts: alignment {source, matrix}, source_format, scene_type.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "external_id"], name="scene_unique_per_benchmark")
        ]
        ordering = ["external_id"]

    def __str__(self):
        return self.external_id


class AssetRole(models.TextChoices):
    POINT_CLOUD = "point_cloud", "Point cloud (source)"
    VIEWER_POINTS = "viewer_points", "Point cloud (viewer binary)"
    TOPVIEW_PLAIN = "topview_plain", "Top-view map (plain)"
    TOPVIEW_SEMANTIC = "topview_semantic", "Top-view map (semantic)"
    IMAGE = "image", "Image"
    IMAGE_FLIPPED = "image_flipped", "Image (mirrored twin, FlipEval)"
    THUMBNAIL = "thumbnail", "Thumbnail"
    VIDEO = "video", "Video"
    VIDEO_POSTER = "video_poster", "Video poster frame"
    VIDEO_FRAMES = "video_frames", "Frames sampled from a video (zip of PNGs; meta: video, set)"
    SCENE_META = "scene_meta", "Scene metadata (JSON: object states, operation log)"
    RENDER = "render", "Rendered camera view (meta: set, index, pose, intrinsics)"
    EXPORT = "export", "Export file"


def asset_upload_to(asset, filename):
    """`assets/<scenes/<id>|misc>/<role>/<random>/<filename>`: the random folder makes a file's name
    unguessable (release files were `misc/export/<slug>-<version>.jsonl`) while the file keeps its
    own name. Reading a file is still checked (benchmarks.media); names stored before keep theirs."""
    scene_part = f"scenes/{asset.scene_id}" if asset.scene_id else "misc"
    return f"assets/{scene_part}/{asset.role}/{uuid.uuid4().hex}/{filename}"


class Asset(models.Model):
    scene = models.ForeignKey(Scene, null=True, blank=True, on_delete=models.CASCADE, related_name="assets")
    role = models.CharField(max_length=30, choices=AssetRole.choices, help_text="What the file is for.")
    file = models.FileField(upload_to=asset_upload_to, max_length=500, help_text="File on the configured storage.")
    size = models.BigIntegerField(help_text="Size in bytes.")
    sha256 = models.CharField(max_length=64, help_text="Hex SHA-256 of the file's bytes.")
    meta = models.JSONField(default=dict, blank=True, help_text="Role-specific data, e.g. map bounds and labels.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["scene", "role"])]

    def __str__(self):
        return f"{self.role}: {self.file.name}"


class SceneObject(models.Model):
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="scene_objects")
    instance_id = models.PositiveIntegerField(help_text="Instance id within the scene (as in the point cloud).")
    label = models.CharField(max_length=100, help_text="Object class label, e.g. 'desk'.")
    center_x = models.FloatField()
    center_y = models.FloatField()
    center_z = models.FloatField()
    size_x = models.FloatField()
    size_y = models.FloatField()
    size_z = models.FloatField()
    yaw = models.FloatField(default=0.0, help_text="Rotation about Z in radians.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scene", "instance_id"], name="object_instance_unique_per_scene")
        ]
        ordering = ["instance_id"]

    def __str__(self):
        return f"{self.label} #{self.instance_id}"

    @property
    def center(self):
        return (self.center_x, self.center_y, self.center_z)

    @property
    def size(self):
        return (self.size_x, self.size_y, self.size_z)


def posed_frame_upload_to(frame, filename):
    return f"posed_frames/{frame.scene_id}/{uuid.uuid4().hex}/{filename}"


class PosedFrame(models.Model):
    """A colour frame of the scan's RGB-D capture with its camera (ScanNet .sens or its export, a 3RScan
    sequence; scenes/rgbd_frames.py), shown to 3D-VLMs as `multi_view`/`egocentric` input
    in place of renders. Not an Asset: releases leave it out, being the source dataset's own files."""

    class Source(models.TextChoices):
        SENS = "sens", "ScanNet .sens"
        SCANNET_EXPORT = "scannet_export", "ScanNet exported color/pose folders"
        RSCAN_SEQUENCE = "3rscan_sequence", "3RScan sequence"

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="posed_frames")
    index = models.PositiveIntegerField(help_text="The frame's number in the source sequence.")
    timestamp = models.BigIntegerField(null=True, blank=True,
                                       help_text="Colour timestamp as the source gives it (.sens: microseconds).")
    pose = models.JSONField(help_text="Camera-to-world 4x4 (rows) as the source gives it: OpenCV axes, the scan's "
                                      "own frame (Scene.meta alignment maps it to the aligned frame).")
    intrinsics = models.JSONField(help_text="The colour camera: {width, height, fx, fy, cx, cy}.")
    source = models.CharField(max_length=20, choices=Source.choices)
    file = models.FileField(upload_to=posed_frame_upload_to, max_length=300, help_text="The JPEG as the source stores it.")
    sha256 = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["scene", "index"]
        constraints = [models.UniqueConstraint(fields=["scene", "index"], name="one_posed_frame_per_index")]

    def __str__(self):
        return f"{self.scene_id} frame {self.index}"


class Side(models.TextChoices):
    FRONT = "front", "Front"
    BACK = "back", "Back"
    LEFT = "left", "Left"
    RIGHT = "right", "Right"


class WorldFrame(StatusTransitions, models.Model):
    """Anchor-based orientation: 'The desk is to the left of the scene.' A crowd frame arrives
    submitted and reaches prompts only once a reviewer approves it (review/frames.py), which
    supersedes the scene's other approved frames; imported and staff frames arrive approved."""

    class Status(models.TextChoices):
        SUBMITTED = "submitted", "Submitted (crowd, unreviewed)"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        SUPERSEDED = "superseded", "Superseded by another approved frame"

    # A reviewer may decide any frame again (review/frames.py review_frame); only approving supersedes.
    TRANSITIONS = {
        Status.SUBMITTED: {Status.APPROVED, Status.REJECTED},
        Status.APPROVED: {Status.REJECTED, Status.SUPERSEDED},
        Status.REJECTED: {Status.APPROVED},
        Status.SUPERSEDED: {Status.APPROVED, Status.REJECTED},
    }

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="world_frames")
    anchor = models.ForeignKey(SceneObject, on_delete=models.CASCADE, related_name="anchored_frames")
    side = models.CharField(max_length=10, choices=Side.choices)
    text = models.TextField(help_text="The orientation sentence shown to annotators, evaluators and models.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.APPROVED)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.text


class ChangeType(models.TextChoices):
    MOVEMENT = "movement", "Movement"
    REMOVAL = "removal", "Removal"
    ATTRIBUTE = "attribute", "Attribute"
    ADDITION = "addition", "Addition"
    REPLACEMENT = "replacement", "Replacement"


class ContextChange(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        SUBMITTED = "submitted", "Submitted (raw)"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    TRANSITIONS = {
        "submitted": {"approved", "rejected"},
        # A rejected change goes back to its author, who may revise and resubmit it.
        "rejected": {"approved", "submitted"},
        "approved": {"rejected"},
    }

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="changes")
    change_type = models.CharField(max_length=20, choices=ChangeType.choices)
    raw_text = models.TextField(help_text="The author's text; never overwritten.")
    refined_text = models.TextField(blank=True, help_text="The reviewer's refined text (c').")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.SUBMITTED)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="authored_changes"
    )
    provenance = models.JSONField(default=dict, blank=True, help_text="Where it came from (campaign, assignment).")
    edit = models.JSONField(
        null=True, blank=True,
        help_text="The change as geometry: per object a transform or removal, boxes added, in the scene's "
                  "aligned coordinates and its approved world frame; schema in annotation/change_geometry.py, "
                  "checked against the text on every write (annotation/change_edits.py).",
    )
    version = models.PositiveIntegerField(default=1, help_text="Bumped on every save; stale writes get 409.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.text[:60]

    @property
    def text(self):
        return self.refined_text or self.raw_text


class AnswerFormat(models.TextChoices):
    OPEN = "open", "Open-ended"
    SINGLE = "single", "Single choice"
    MULTI = "multi", "Multiple choice"


class Item(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    class Consensus(models.TextChoices):
        UNMEASURED = "unmeasured", "Not measured"
        REACHED = "reached", "Reached"
        FLAGGED = "flagged", "No consensus (flagged)"
        ADJUDICATED = "adjudicated", "Adjudicated by a reviewer"

    # approved -> draft: sent back for review (review.services.send_to_rereview, from the item analysis)
    TRANSITIONS = {"draft": {"approved", "rejected"}, "approved": {"rejected", "draft"}, "rejected": {"approved"}}

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="items")
    scene = models.ForeignKey(Scene, null=True, blank=True, on_delete=models.CASCADE, related_name="items")
    change = models.ForeignKey(
        ContextChange, null=True, blank=True, on_delete=models.CASCADE, related_name="items"
    )
    complement_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="complements",
        help_text="The item this one complements: 3DSRBench's same question on another image with the "
                  "opposite answer, or the balance stage's opposite-relation rewrite (review/complements.py).",
    )
    external_id = models.CharField(
        max_length=100, blank=True,
        help_text="The benchmark's own id (qid, question_id, id, question_index): the scoring key when set.",
    )
    source_index = models.CharField(
        max_length=40, blank=True,
        help_text="The row's `index` in the file it came from (VLMEvalKit TSVs); result files key by it.",
    )
    question = models.TextField()
    answer_format = models.CharField(max_length=10, choices=AnswerFormat.choices, default=AnswerFormat.OPEN)
    choices = models.JSONField(default=list, blank=True, help_text="Option texts in canonical order (A, B, ...).")
    answers = models.JSONField(
        default=list, help_text="Gold: acceptable open answers, or the correct letter(s) for choice items."
    )
    tags = models.JSONField(default=dict, blank=True, help_text="e.g. {'change_type': 'movement', ...}.")
    overlays = models.JSONField(
        default=list, blank=True,
        help_text="Marks drawn on the item's images (benchmarks/overlays.py): arrows, start boxes and "
                  "bounding boxes in coordinates normalised to the image (0-1), with the image's index "
                  "and a colour; humans and models are shown them alike.",
    )
    unchanged_answers = models.JSONField(
        default=list, blank=True,
        help_text="Hypo3D Tables 3-4: the acceptable answers on the scene without the context change (the "
                  "'w/o change' condition is scored against them); the tag change_effect says whether the "
                  "change affects the answer ('affects') or is irrelevant to it ('irrelevant').",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    provenance = models.JSONField(default=dict, blank=True, help_text="Who wrote it, from which change or file.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="authored_items"
    )
    version = models.PositiveIntegerField(default=1, help_text="Bumped on every save; stale writes get 409.")
    consensus = models.CharField(
        max_length=20, choices=Consensus.choices, default=Consensus.UNMEASURED,
        help_text="Whether independent answerers agreed; flagged items stay out of releases.",
    )
    agreement = models.FloatField(
        null=True, blank=True, help_text="Share of answerer pairs giving the same answer (0-1), once measured."
    )
    origin_id = models.CharField(
        max_length=100, blank=True, help_text="The item's id in the release it was imported from, kept on re-export."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # Re-importing a file updates items in place: a benchmark id names one item.
            models.UniqueConstraint(
                fields=["benchmark", "external_id"], condition=~models.Q(external_id=""),
                name="item_external_id_unique_per_benchmark",
            )
        ]

    def __str__(self):
        return self.question[:60]

    @property
    def release_id(self) -> str:
        return self.origin_id or str(self.pk)

    @property
    def scoring_id(self) -> str:
        """The id every scorer row of this item carries: the benchmark's own id, so its suffixes
        (3DSRBench `-1`, `-flip`) reach the scorer; the release id for items authored here."""
        return self.external_id or self.release_id


class Release(StatusTransitions, models.Model):
    class Status(models.TextChoices):
        EXPORTING = "exporting", "Exporting"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    TRANSITIONS = {"exporting": {"ready", "failed"}, "failed": {"exporting"}}

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="releases")
    version = models.CharField(max_length=30, help_text="Semantic version, e.g. 1.0.0.")
    notes = models.TextField(blank=True)
    items = models.ManyToManyField(Item, related_name="releases")
    items_file = models.ForeignKey(Asset, null=True, on_delete=models.SET_NULL, related_name="+")
    manifest_file = models.ForeignKey(Asset, null=True, on_delete=models.SET_NULL, related_name="+")
    files = models.ManyToManyField(
        Asset, related_name="+", blank=True, help_text="The formats beside the JSONL and the manifest (JSON, CSV, ...), written by the export's job."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.EXPORTING)
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="The export: its progress and report (core/jobs.py).")
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The release this one is compared with (the benchmark's latest before it).",
    )
    diff = models.JSONField(default=dict, blank=True, help_text="Item ids added, removed, changed vs previous.")
    card = models.JSONField(default=dict, blank=True, help_text="Dataset card: counts, word statistics, agreement.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "version"], name="release_version_unique_per_benchmark")
        ]
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.benchmark.slug} v{self.version}"


class Upload(StatusTransitions, models.Model):
    """A browser upload straight to storage, before its bytes are checked.

    Kept apart from Asset so that every Asset row points at verified bytes: pages, exports and
    model runs read assets without filtering out half-finished uploads.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the bytes"
        COMPLETE = "complete", "Verified, asset created"
        FAILED = "failed", "Refused, object deleted"

    TRANSITIONS = {"pending": {"complete", "failed"}}

    scene = models.ForeignKey(Scene, null=True, blank=True, on_delete=models.CASCADE, related_name="uploads")
    role = models.CharField(max_length=30, choices=AssetRole.choices)
    filename = models.CharField(max_length=255, help_text="The file's name as the uploader gave it.")
    key = models.CharField(max_length=500, unique=True, help_text="Object name on the configured storage.")
    size = models.BigIntegerField(help_text="Size in bytes the uploader announced.")
    sha256 = models.CharField(max_length=64, help_text="Hex SHA-256 the uploader announced.")
    meta = models.JSONField(default=dict, blank=True, help_text="Copied onto the asset, e.g. {'which': 'before'}.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True, help_text="Why the upload was refused.")
    asset = models.OneToOneField(Asset, null=True, blank=True, on_delete=models.SET_NULL, related_name="upload")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(help_text="The upload URL stops working after this.")
    job = models.ForeignKey("core.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="The check of a large upload, as its job; empty when it was checked at once.")

    def __str__(self):
        return f"upload {self.pk} ({self.status}): {self.key}"

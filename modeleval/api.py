from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark
from core.api import error, validated
from core.errors import DomainError
from core.idempotency import idempotent
from core.permissions import IsAdmin

from . import recipes, services
from .analysis import labels
from .clients import secrets as model_secrets
from .models import ModelSpec
from .prompting import generation
from .prompting.item_frames import import_item_frames


class LaunchRunSerializer(serializers.Serializer):
    model = serializers.IntegerField(help_text="ModelSpec id.")
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    batch_size = serializers.IntegerField(default=8)
    repeats = serializers.IntegerField(default=1, help_text="Independent repeats per item.")
    condition = serializers.SlugField(default="main", help_text="Prompt template condition, e.g. 'no-cot'.")
    protocol = serializers.JSONField(
        default=dict, help_text='{"circular": every rotation of the options, "flip": the mirrored image}.'
    )
    subset = serializers.JSONField(
        default=dict, help_text='Items by tags, e.g. {"level": ["L1_single", "L2_objects"]}; empty: all approved.'
    )
    prompts = serializers.JSONField(
        default=dict, help_text='A prompt template per tag value: {"by": "level", "templates": {"L1_single": '
        '"<condition>"}}; other items get `condition`.'
    )
    settings = serializers.JSONField(
        default=dict, help_text="Generation settings: temperature, top_p, max_tokens, seed, stop, reasoning_effort, "
        "thinking_budget, enable_thinking; one the model cannot honour is refused."
    )
    examples = serializers.JSONField(default=list, help_text="In-context examples: [{question, answer}].")
    judge_model = serializers.IntegerField(
        required=False, allow_null=True, default=None,
        help_text="3DSRBench: an OpenAI-compatible ModelSpec id that reads choices the rules cannot.",
    )
    visual_input = serializers.CharField(
        required=False, allow_blank=True, default="",
        help_text="What the model is shown: caption_only, top_view_plain, top_view_semantic, multi_view:N, "
        "egocentric:N, point_cloud, image or video_frames; blank: the model's modality.",
    )
    inputs = serializers.JSONField(
        default=dict, help_text='{"frames_per_video": N} or {"fps": F} (video frames per video), {"extra_frames": '
        'source} (imported item frames), {"chain": {caption_model, clips | clip_length, clip_frames, ...}} '
        "(captions -> summary -> answer, stored and reused): modeleval.prompting.run_inputs.",
    )


class ModelSpecSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelSpec
        fields = ["id", "name", "adapter", "modality", "withhold_stimulus", "family", "seed", "max_new_tokens",
                  "temperature", "config"]

    def validate(self, attrs):
        adapter = attrs.get("adapter", getattr(self.instance, "adapter", ""))
        config = attrs.get("config", getattr(self.instance, "config", {}))
        try:
            model_secrets.check_model_config(adapter, config)
        except DomainError as exc:
            raise serializers.ValidationError(exc.as_dict()) from None
        return attrs


class RunSummarySerializer(serializers.Serializer):
    inference_errors = serializers.IntegerField()
    extraction = serializers.JSONField(allow_null=True, help_text="Answers read by rule, by judge, or not.")


class InferenceFailureSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    external_id = serializers.CharField(help_text="The item's id in its source dataset (may be empty).")
    variant = serializers.CharField()
    repeat = serializers.IntegerField()
    error = serializers.CharField(help_text="Why: e.g. the endpoint's status, its message and the tries made.")


class RunProgressSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    status = serializers.CharField()
    job = serializers.IntegerField(allow_null=True, help_text="Its current attempt's core.Job: /api/v1/jobs/<id>/.")
    done = serializers.IntegerField(help_text="Predictions written.")
    total = serializers.IntegerField(help_text="Predictions the run makes.")
    errors = serializers.IntegerField(help_text="Predictions whose inference failed.")
    failures = InferenceFailureSerializer(many=True, help_text="The first 20 of them: which and why.")
    scores = serializers.JSONField(allow_null=True, help_text="The overall metrics once scored.")
    summary = RunSummarySerializer(allow_null=True)


class LaunchedRunSerializer(RunProgressSerializer):
    warnings = serializers.ListField(child=serializers.CharField(),
                                     help_text="What may make the run not what was meant (repeats at temperature 0).")


class RunDetailSerializer(RunProgressSerializer):
    model = serializers.CharField()
    visual_input = serializers.CharField(help_text="What the model is shown, e.g. multi_view:4.")
    result = serializers.JSONField(allow_null=True, help_text="The whole scorer output once scored.")


class ModelList(APIView):
    """The model registry."""

    permission_classes = [IsAdmin]
    serializer_class = ModelSpecSerializer

    @extend_schema(responses=ModelSpecSerializer(many=True), operation_id="models_list")
    def get(self, request):
        return Response(ModelSpecSerializer(ModelSpec.objects.order_by("name"), many=True).data)

    @extend_schema(request=ModelSpecSerializer, responses={201: ModelSpecSerializer})
    @idempotent
    def post(self, request):
        data = ModelSpecSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(ModelSpecSerializer(data.save()).data, status=201)


class RunList(APIView):
    permission_classes = [IsAdmin]
    serializer_class = LaunchRunSerializer

    @extend_schema(request=LaunchRunSerializer, responses={201: LaunchedRunSerializer, 503: error(503)})
    @idempotent
    def post(self, request):
        v = validated(LaunchRunSerializer, request)
        run = services.launch_run(v["model"], v["benchmark"], request.user, v["batch_size"], v["repeats"],
                                  v["condition"], v["protocol"], subset=v["subset"], prompts=v["prompts"],
                                  settings=v["settings"], examples=v["examples"], judge_model=v["judge_model"],
                                  visual_input=v["visual_input"], inputs=v["inputs"])
        run.refresh_from_db()
        warnings = generation.launch_warnings(run.model, run.repeats, run.settings)
        return Response({**services.run_progress(run), "warnings": warnings}, status=201)


class RecipeLaunchSerializer(serializers.Serializer):
    recipe = serializers.JSONField(help_text="A shipped recipe's name, or a recipe object (modeleval.recipes).")
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    models = serializers.ListField(child=serializers.IntegerField(), help_text="ModelSpec ids: every run for each.")
    batch_size = serializers.IntegerField(default=8)
    judge_model = serializers.IntegerField(required=False, allow_null=True, default=None, help_text=(
        "A registered OpenAI-compatible model rating Hypo3D answers 1-5 (Table 10; recipes with judge: true)."))


class LaunchedRecipeSerializer(serializers.Serializer):
    runs = serializers.JSONField(help_text="[{run, label, status, recipe}] in launch order.")
    warnings = serializers.ListField(child=serializers.CharField())


class RecipeSerializer(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.IntegerField()
    family = serializers.CharField()
    title = serializers.CharField()
    source = serializers.CharField(help_text="Where its settings and prompt texts come from.")
    prompts = serializers.JSONField(help_text="{condition: {text, scene_intro}}, the papers' texts verbatim.")
    defaults = serializers.JSONField(required=False)
    model_settings = serializers.JSONField(required=False, help_text="[{match, provider, settings}] per model.")
    baselines = serializers.ListField(child=serializers.CharField(), required=False)
    runs = serializers.JSONField(help_text="[{key, condition, visual_inputs, subset, settings, ...}].")


class RecipeList(APIView):
    """`GET /api/v1/recipes/`: the shipped recipes (the papers' protocols as data);
    `POST /api/v1/recipes/launch/` launches every run of one for each model, all or none."""

    permission_classes = [IsAdmin]

    @extend_schema(responses={200: RecipeSerializer(many=True)}, operation_id="recipes_list")
    def get(self, request):
        return Response(recipes.shipped())


class RecipeLaunch(APIView):
    permission_classes = [IsAdmin]
    serializer_class = RecipeLaunchSerializer

    @extend_schema(request=RecipeLaunchSerializer, responses={201: LaunchedRecipeSerializer, 503: error(503)})
    @idempotent
    def post(self, request):
        v = validated(RecipeLaunchSerializer, request)
        runs = recipes.launch_recipe(v["recipe"], v["benchmark"], v["models"], request.user, v["batch_size"],
                                     v["judge_model"])
        for run in runs:
            run.refresh_from_db()
        return Response({
            "runs": [{"run": run.pk, "label": labels.run_label(run), "status": run.status, "recipe": run.recipe}
                     for run in runs],
            "warnings": [f"run {run.pk}: {warning}" for run in runs
                         for warning in generation.launch_warnings(run.model, run.repeats, run.settings)],
        }, status=201)


class ItemFramesSerializer(serializers.Serializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    source = serializers.CharField(help_text="What produced the frames, e.g. cow.")
    item = serializers.CharField(help_text="The item's benchmark id (or #row id).")
    files = serializers.ListField(child=serializers.FileField(), help_text="The item's frames, in the order sent.")


class ItemFrames(APIView):
    """`POST /api/v1/item-frames/` (multipart): one item's frames produced elsewhere (CausalSpatial's
    world-model frames), sent by runs with {"extra_frames": source}; replaces its frames of that source."""

    permission_classes = [IsAdmin]
    parser_classes = [MultiPartParser, FormParser]
    serializer_class = ItemFramesSerializer

    @extend_schema(request={"multipart/form-data": ItemFramesSerializer}, responses={201: dict})
    def post(self, request):
        v = validated(ItemFramesSerializer, request)
        files = [(upload.name, upload.read()) for upload in v["files"]]
        done = import_item_frames(v["benchmark"], v["source"], {v["item"]: files})
        return Response(done, status=201)


class RunDetail(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(responses=RunDetailSerializer)
    def get(self, request, pk):
        run = services.run_for_staff(pk)
        return Response({**services.run_progress(run), "model": run.model.name, "visual_input": run.visual_input,
                         "result": run.scores or None})


class RunCancel(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(request=None, responses={200: RunProgressSerializer, 409: error(409)})
    def post(self, request, pk):
        return Response(services.run_progress(services.cancel_run(pk, request.user)))


class RunResume(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(request=None, responses={200: RunProgressSerializer, 409: error(409), 503: error(503)})
    def post(self, request, pk):
        return Response(services.run_progress(services.resume_run(pk)))

import dataclasses
import hashlib
import json

from django.core.cache import cache
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.api import SceneViewerSerializer
from benchmarks.models import Benchmark
from core.api import error, validated
from core.idempotency import idempotent
from core.permissions import IsAdmin
from core.plain_views import PageFastPathView
from scenes.viewer import scene_viewer_data

from .models import ItemRole
from .services import design, onset, results, sessions, stimuli
from .sql import ShownItem

# A scene and its files do not change while a study runs, and every participant's item on the same
# scene shows them again: cache them briefly (well inside the life of a signed storage URL).
SCENE_CACHE_S = 60


def scene_stimulus(item, mirrored: bool = False, changed: bool = False) -> dict:
    """The viewer data of the item's scene and its images/videos (mirrored on a flipped variant), as
    item_view shows them; `changed` (a study's scene_state): the scene as the item's change left it
    (stimuli.changed_scene). The images carry the item's own marks, so items on one scene share the
    cached stimulus only when they draw the same marks."""
    if item.scene_id is None:
        return {"scene": None, **stimuli.stimulus_files(item)}
    marks = hashlib.sha256(json.dumps(item.overlays or [], sort_keys=True).encode()).hexdigest()[:16]
    after = f":after{item.change_id}:{item.change.updated_at.timestamp()}" if changed and item.change_id else ""
    key = (f"humaneval:stimulus:{item.scene_id}:{item.scene.created_at.timestamp()}:{int(mirrored)}"  # ids are reused
           f":{marks}{after}")
    stimulus = cache.get(key)
    if stimulus is None:
        viewer = scene_viewer_data(item.scene)
        if after:
            viewer = stimuli.changed_scene(viewer, item)
        stimulus = {"scene": viewer, **stimuli.stimulus_files(item, mirrored)}
        cache.set(key, stimulus, SCENE_CACHE_S)
    return stimulus


def _changed(session) -> bool:
    return session.study.scene_state == "changed"


# The viewer streams a large point file by ranges; fetching one ahead whole would cost more than it saves.
PRELOAD_POINTS_MAX_BYTES = 64 * 2**20


def preload_urls(session) -> list[str]:
    """The next item's stimulus files, for the page to fetch while the current one is answered (as jsPsych's
    preload plugin does), so the next clock starts on files already here. The URLs are the ones the next
    item's view will name (scene_stimulus, cached per scene). The participant may read them
    (stimuli.shows_asset allows the next item's stimulus)."""
    entry = stimuli.following_entry(session.pk)
    if entry is None or entry.item.scene_id is None:
        return []
    shown = scene_stimulus(entry.item, stimuli.shows_mirrored_image(entry), _changed(session))
    scene = shown["scene"] or {}
    urls = [scene.get("topview_plain_url"), scene.get("topview_semantic_url"), *(i["url"] for i in shown["images"])]
    if shown["videos"]:
        urls += [shown["videos"]["before"], shown["videos"]["after"]]
    if scene.get("points_url") and stimuli.viewer_points_bytes(entry.item.scene_id) <= PRELOAD_POINTS_MAX_BYTES:
        urls.append(scene["points_url"])
    return list(dict.fromkeys(url for url in urls if url))


def item_view(session, entry, response) -> dict:
    """One item as the participant's page may see it: every piece of context the model's prompt
    carries (stimuli.item_context, scene_stimulus), options in the order shown, never the gold."""
    item = entry.item
    return {
        "id": item.pk,
        "number": entry.position + 1,
        "practice": entry.role == ItemRole.FAMILIARISATION,
        **stimuli.item_context(session.study.benchmark.family, entry),
        "not_sure_option": sessions.offers_not_sure(session.study, item),
        "shown_at": response.shown_at.isoformat(),
        "deadline": response.deadline.isoformat(),
        **scene_stimulus(item, stimuli.shows_mirrored_image(entry), _changed(session)),
    }


def session_state(session, n_items: int, on_screen: ShownItem | None, feedback=None) -> dict:
    """What the participant's page may know: the item on screen, the clocks, and feedback on a
    familiarisation answer once it is stored."""
    state = {
        "session": session.pk,
        "status": session.status,
        "server_now": timezone.now().isoformat(),
        "session_deadline": session.deadline.isoformat(),
        "completion_code": session.completion_code or None,
        "n_items": n_items,
        "allow_going_back": session.study.allow_going_back,
        "answered": sessions.answered_items(session) if session.study.allow_going_back else [],
        "feedback": feedback,
        "item": None,
        "preload": [],
    }
    if on_screen is not None:
        state["item"] = item_view(session, on_screen.entry, on_screen.response)
        state["preload"] = preload_urls(session)
    return state


class ImageSerializer(serializers.Serializer):
    url = serializers.CharField()
    overlays = serializers.JSONField(help_text="Arrows and marks drawn over the image.")


class VideoPairSerializer(serializers.Serializer):
    before = serializers.CharField()
    after = serializers.CharField()
    fps = serializers.FloatField(allow_null=True)


class ItemViewSerializer(serializers.Serializer):
    """One item as the participant sees it (item_view): never the gold."""

    id = serializers.IntegerField()
    number = serializers.IntegerField(help_text="Its place in the session, from 1.")
    practice = serializers.BooleanField(help_text="A familiarisation item (feedback after answering).")
    question = serializers.CharField(allow_blank=True)
    answer_format = serializers.CharField()
    choices = serializers.ListField(child=serializers.CharField(allow_blank=True), help_text="As shown.")
    context_change = serializers.CharField(allow_null=True, allow_blank=True)
    answer_hint = serializers.CharField(allow_blank=True)
    answer_count_note = serializers.CharField(allow_blank=True)
    not_sure_option = serializers.BooleanField()
    shown_at = serializers.DateTimeField()
    deadline = serializers.DateTimeField()
    scene = SceneViewerSerializer(allow_null=True)
    images = ImageSerializer(many=True)
    videos = VideoPairSerializer(allow_null=True)
    world_frame = serializers.ListField(child=serializers.CharField())


class AnsweredItemSerializer(ItemViewSerializer):
    your_answer = serializers.CharField(allow_blank=True)


class AnsweredRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()


class FeedbackSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    correct = serializers.BooleanField(allow_null=True, help_text="Null: withheld (another study grades the item).")
    answer = serializers.CharField(allow_blank=True, help_text="The right answer as shown (blank when withheld).")


class SessionStateSerializer(serializers.Serializer):
    """What the participant's page may know (session_state)."""

    session = serializers.IntegerField()
    status = serializers.CharField()
    server_now = serializers.DateTimeField()
    session_deadline = serializers.DateTimeField()
    completion_code = serializers.CharField(allow_null=True)
    n_items = serializers.IntegerField()
    allow_going_back = serializers.BooleanField()
    answered = AnsweredRefSerializer(many=True, help_text="Items one may go back to (when the study allows).")
    feedback = FeedbackSerializer(allow_null=True, help_text="After a familiarisation answer.")
    item = ItemViewSerializer(allow_null=True, help_text="The open item; null when done or after feedback.")
    preload = serializers.ListField(child=serializers.CharField(),
                                    help_text="The next item's stimulus files, to fetch while this one is answered.")


class StudyCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    design = serializers.JSONField(help_text="The design as recorded (humaneval.services.design.study_design).")


def design_field(option: dataclasses.Field) -> serializers.Field:
    """The serializer field of one StudyDesign option: its JSON type and default (the design itself
    checks the value, so the API and the page refuse the same things with the same words)."""
    required = option.default is dataclasses.MISSING
    default = {} if required else {"default": option.default}
    if option.type is bool:
        return serializers.BooleanField(**default)
    if option.type is str:
        return serializers.CharField(allow_blank=True, **default)
    if option.type == tuple[int, ...]:
        return serializers.ListField(child=serializers.IntegerField(), **({} if required else {"default": list}))
    return serializers.IntegerField(allow_null=option.default is None and not required, **default)


class StudyCreateSerializer(serializers.Serializer):
    """The benchmark and the options of a StudyDesign, one field each."""

    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())

    def get_fields(self):
        options = {option.name: design_field(option) for option in dataclasses.fields(design.StudyDesign)}
        return {**super().get_fields(), **options}


class StudyCreate(APIView):
    permission_classes = [IsAdmin]
    serializer_class = StudyCreateSerializer

    @extend_schema(request=StudyCreateSerializer, responses={201: StudyCreatedSerializer})
    @idempotent
    def post(self, request):
        options = dict(validated(StudyCreateSerializer, request))
        benchmark = options.pop("benchmark")
        study = design.create_study(benchmark, design.StudyDesign(**options), request.user)
        return Response(
            {"id": study.pk, "name": study.name, "design": design.study_design(study)}, status=201
        )


@extend_schema_serializer(component_name="SessionAnswer")
class AnswerSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    answer = serializers.CharField(allow_blank=True)
    client_latency_ms = serializers.IntegerField(required=False, allow_null=True, default=None)
    focus_losses = serializers.IntegerField(required=False, default=0)


def current_state(participant, session_id: int) -> dict:
    current = sessions.current_item(session_id, participant)
    return session_state(current.session, current.n_items, current.on_screen)


def answer_state(participant, session_id: int, answer: dict) -> dict:
    """Store a checked answer (AnswerSerializer). After a familiarisation item the state carries
    feedback and no next item, so the next clock starts only when the participant moves on."""
    stored = sessions.answer_and_show_next(
        session_id, participant, answer["item"], answer["answer"], answer["client_latency_ms"],
        answer["focus_losses"],
    )
    answered = stored.answered
    session, entry = answered.session, answered.entry
    if entry.role == ItemRole.FAMILIARISATION:
        feedback = results.feedback(session.study.benchmark.family, entry, answered.response)
        return session_state(session, answered.n_items, None, feedback)
    return session_state(session, answered.n_items, stored.next_item)


class SessionCurrent(PageFastPathView):
    """The participant's current item (its clock starts when first shown); the page's GET takes the
    fast path (core.plain_views)."""

    page_method = "GET"

    def respond(self, user, data, pk):
        return current_state(user, pk), 200

    @extend_schema(responses=SessionStateSerializer, operation_id="sessions_current_retrieve")
    def get(self, request, pk):
        return self.respond_through_drf(request, pk=pk)


class SessionAnswer(PageFastPathView):
    """Store an answer (answer_state); the page's POST takes the fast path (core.plain_views)."""

    page_method = "POST"
    serializer_class = AnswerSerializer

    def respond(self, user, data, pk):
        return answer_state(user, pk, data), 201

    @extend_schema(request=AnswerSerializer, responses={201: SessionStateSerializer, 409: error(409)},
                   operation_id="sessions_answer_create")
    def post(self, request, pk):
        return self.respond_through_drf(request, pk=pk)


class SessionAnsweredItem(APIView):
    """Going back (when the study allows): an answered item with the participant's own answer."""

    @extend_schema(responses=AnsweredItemSerializer)
    def get(self, request, pk, item_id):
        answered = sessions.answered_item(pk, request.user, item_id)
        view = item_view(answered.session, answered.entry, answered.response)
        return Response({**view, "your_answer": answered.response.answer_text})


class OnsetSerializer(serializers.Serializer):
    item = serializers.IntegerField(min_value=1, help_text="The item on screen.")
    load_ms = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, allow_null=True,
                                       help_text="The page's own measure of the load (data only).")


class OnsetAnswerSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    onset_at = serializers.DateTimeField()
    load_ms = serializers.IntegerField()
    deadline = serializers.DateTimeField(help_text="The item's deadline, now counted from onset.")
    server_now = serializers.DateTimeField()


class SessionOnset(APIView):
    """The page says everything the item shows is on screen: its clock runs from now (onset.report_onset)."""

    @extend_schema(request=OnsetSerializer, responses={200: OnsetAnswerSerializer, 409: error(409)})
    def post(self, request, pk):
        data = validated(OnsetSerializer, request)
        response = onset.report_onset(pk, request.user, data["item"], data.get("load_ms"))
        return Response({"item": response.item_id, "onset_at": response.onset_at.isoformat(),
                         "load_ms": response.load_ms, "deadline": response.deadline.isoformat(),
                         "server_now": timezone.now().isoformat()})

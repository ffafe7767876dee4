import io

from django.shortcuts import get_object_or_404, redirect
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.generics import ListAPIView, RetrieveAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import error, validated
from core.errors import DomainError
from core.idempotency import idempotent
from core.jobs import job_state
from core.jobs_api import JobSerializer
from core.labels import words
from core.permissions import IsAdmin, IsReviewer

from . import media, uploads
from .models import Asset, Benchmark, Item, Release
from .releases import life


class SceneObjectBoxSerializer(serializers.Serializer):
    instance_id = serializers.IntegerField()
    label = serializers.CharField()
    center = serializers.ListField(child=serializers.FloatField(), help_text="x, y, z")
    size = serializers.ListField(child=serializers.FloatField(), help_text="x, y, z")
    yaw = serializers.FloatField()


class WorldFrameAnchorSerializer(serializers.Serializer):
    anchor_instance_id = serializers.IntegerField()
    side = serializers.CharField()


class SceneViewerSerializer(serializers.Serializer):
    """A scene as the viewer draws it (scenes.viewer.scene_viewer_data): a missing file's URL is null."""

    scene_id = serializers.IntegerField()
    external_id = serializers.CharField()
    caption = serializers.CharField(allow_blank=True)
    points_url = serializers.CharField(allow_null=True)
    topview_plain_url = serializers.CharField(allow_null=True)
    topview_semantic_url = serializers.CharField(allow_null=True)
    map = serializers.JSONField(allow_null=True, help_text="The plain top view's size, bounds and labels.")
    world_frames = serializers.ListField(child=serializers.CharField())
    world_frame = WorldFrameAnchorSerializer(allow_null=True, help_text="The latest, for the compass.")
    objects = SceneObjectBoxSerializer(many=True)


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "benchmark", "scene", "change", "question", "answer_format", "choices", "answers",
                  "unchanged_answers", "tags", "overlays", "status", "provenance", "version", "consensus", "agreement"]


class ItemList(ListAPIView):
    """Items with their gold answers: reviewers and admins only."""

    permission_classes = [IsReviewer]
    serializer_class = ItemSerializer
    queryset = Item.objects.all()


class ItemDetail(RetrieveAPIView):
    permission_classes = [IsReviewer]
    serializer_class = ItemSerializer
    queryset = Item.objects.all()

    def permission_denied(self, request, message=None, code=None):
        message = "Gold answers are only visible to reviewers and admins."
        super().permission_denied(request, message=message, code=code)


class ReleaseSerializer(serializers.ModelSerializer):
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    items_url = serializers.SerializerMethodField()
    manifest_url = serializers.SerializerMethodField()
    n_items = serializers.SerializerMethodField()
    require_consensus = serializers.BooleanField(
        default=False, write_only=True,
        help_text="Release only items whose answerers agreed or that a reviewer adjudicated (said in the card).",
    )

    progress = serializers.SerializerMethodField(help_text="Percent of its export job done (the items, then each file).")

    class Meta:
        model = Release
        fields = ["id", "benchmark", "version", "notes", "created_at", "n_items", "items_url", "manifest_url",
                  "status", "progress", "job", "require_consensus"]
        read_only_fields = ["created_at", "status", "progress", "job"]
        validators = []  # uniqueness is the service's job: it answers 409, not 400

    def get_progress(self, release) -> int:
        if release.status == Release.Status.READY:
            return 100
        job = release.job
        return 100 * job.done // job.total if job is not None and job.total else 0

    def get_items_url(self, release) -> str | None:
        return release.items_file.file.url if release.items_file else None

    def get_manifest_url(self, release) -> str | None:
        return release.manifest_file.file.url if release.manifest_file else None

    def get_n_items(self, release) -> int:
        return release.items.count()


class ReleaseList(APIView):
    permission_classes = [IsAdmin]
    serializer_class = ReleaseSerializer

    @extend_schema(responses=ReleaseSerializer(many=True), operation_id="releases_list")
    def get(self, request):
        return Response(ReleaseSerializer(Release.objects.select_related("benchmark", "job")[:100], many=True).data)

    @extend_schema(request=ReleaseSerializer, responses={201: ReleaseSerializer, 409: error(409), 503: error(503)},
                   description="Export a release: 201 with the release `exporting` and its `job`, which freezes the "
                               "items and writes every file (follow it at /api/v1/jobs/<job>/).")
    @idempotent
    def post(self, request):
        v = validated(ReleaseSerializer, request)
        release = life.export_release(v["benchmark"], v["version"], request.user, v.get("notes", ""),
                                          require_consensus=v["require_consensus"])
        return Response(ReleaseSerializer(release).data, status=201)


class ReleaseFileSerializer(serializers.Serializer):
    label = serializers.CharField(help_text="The format in words, as the release page names it (lmms_eval: lmms-eval).")
    url = serializers.CharField()
    size = serializers.IntegerField()
    sha256 = serializers.CharField()


class ReleaseDetailSerializer(ReleaseSerializer):
    previous = serializers.SlugRelatedField(slug_field="version", read_only=True, allow_null=True)
    files = serializers.SerializerMethodField()

    class Meta(ReleaseSerializer.Meta):
        fields = [*ReleaseSerializer.Meta.fields, "previous", "diff", "card", "files"]

    @extend_schema_field(serializers.DictField(child=ReleaseFileSerializer(), help_text="Per format."))
    def get_files(self, release):
        return {fmt: {"label": words(fmt), "url": a.file.url, "size": a.size, "sha256": a.sha256}
                for fmt, a in life.release_files(release).items()}


class ReleaseDetail(APIView):
    """A release with its export progress, files per format, diff against the previous one and card."""

    permission_classes = [IsAdmin]
    serializer_class = ReleaseDetailSerializer

    def get(self, request, pk):
        release = get_object_or_404(Release.objects.select_related("benchmark", "previous", "job"), pk=pk)
        return Response(ReleaseDetailSerializer(release).data)


# --- uploads straight to storage, signed downloads (rules in benchmarks/uploads.py) -----------------


class AssetSerializer(serializers.ModelSerializer):
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = Asset
        fields = ["id", "scene", "role", "size", "sha256", "meta", "created_at", "download_url"]

    def get_download_url(self, asset) -> str:
        return f"/api/v1/assets/{asset.pk}/download/"


class UploadRequestSerializer(serializers.Serializer):
    """What the upload announces (checked by benchmarks.uploads.start_upload)."""

    role = serializers.CharField(help_text="The asset's role (benchmarks.models.AssetRole).")
    filename = serializers.CharField()
    size = serializers.IntegerField(min_value=1, help_text="Bytes.")
    sha256 = serializers.CharField(help_text="64 hexadecimal digits.")
    scene = serializers.IntegerField(required=False, allow_null=True)
    meta = serializers.JSONField(required=False, allow_null=True, help_text="A JSON object.")


class UploadTargetSerializer(serializers.Serializer):
    method = serializers.CharField(help_text="PUT")
    url = serializers.CharField(help_text="Where to send the bytes (presigned S3, or signed same-origin).")
    headers = serializers.DictField(child=serializers.CharField())
    expires_at = serializers.DateTimeField()


class UploadStartedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    key = serializers.CharField()
    upload = UploadTargetSerializer()


class UploadList(APIView):
    """Announce a file (scene, role, filename, size, sha256); answers where to PUT its bytes."""

    permission_classes = [IsAdmin]

    @extend_schema(request=UploadRequestSerializer, responses={201: UploadStartedSerializer})
    def post(self, request):
        d = request.data
        if not isinstance(d, dict):
            raise DomainError("Expected a JSON object.")
        upload = uploads.start_upload(request.user, role=d.get("role"), filename=d.get("filename"),
                                      size=d.get("size"), sha256=d.get("sha256"), scene_id=d.get("scene"),
                                      meta=d.get("meta"))
        return Response({"id": upload.pk, "status": upload.status, "key": upload.key,
                         "upload": uploads.upload_target(upload)}, status=201)


class UploadComplete(APIView):
    """Check the stored bytes against the announced size and sha256: up to 64 MiB now, answering the new
    asset (201); a larger file by a task, answering its job (202), whose report names the asset."""

    permission_classes = [IsAdmin]

    @extend_schema(request=None, responses={201: AssetSerializer, 202: JobSerializer, 409: error(409)})
    def post(self, request, pk):
        done = uploads.finish_upload(pk, request.user)
        if isinstance(done, Asset):
            return Response(AssetSerializer(done).data, status=201)
        return Response(JobSerializer(job_state(done)).data, status=202)


class UploadContent(APIView):
    """The signed same-origin PUT target on local storage; the token in the URL is the credential."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        request={"application/octet-stream": OpenApiTypes.BINARY},
        parameters=[OpenApiParameter("token", str, required=True, description="From the upload's `url`.")],
        responses={204: None, 403: error(403, "The token is not valid, expired, or for another upload."),
                   409: error(409)},
    )
    def put(self, request, pk):
        uploads.receive_local_upload(pk, request.query_params.get("token"), request.stream or io.BytesIO())
        return Response(status=204)


class AssetDetail(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(responses=AssetSerializer)
    def get(self, request, pk):
        return Response(AssetSerializer(get_object_or_404(Asset, pk=pk)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        uploads.delete_asset(get_object_or_404(Asset, pk=pk))
        return Response(status=204)


class AssetDownload(APIView):
    """302 to a short-lived signed URL for the asset's bytes (gold-bearing files: reviewers only).
    The viewer names this URL for a point file on a bucket (uploads.lasting_url): it reads octree
    nodes through it by range (fetch keeps `Range` across the redirect), so a page left open past
    the signature's life still loads them. The browser may keep the redirect for half that life."""

    @extend_schema(responses={302: OpenApiResponse(description="`Location` is the signed URL.")})
    def get(self, request, pk):
        response = redirect(uploads.download_url(request.user, get_object_or_404(Asset, pk=pk)))
        response["Cache-Control"] = f"private, max-age={uploads.download_redirect_max_age()}"
        return response


class AssetFile(APIView):
    """The signed same-origin download on local storage: the token in the URL names the file and the
    user it was made for; a file that states answers is served only to that user signed in."""

    permission_classes = []  # signed out too: the token is checked (uploads.local_download)

    @extend_schema(
        parameters=[OpenApiParameter("token", str, required=True, description="From the redirect."),
                    OpenApiParameter("Range", str, OpenApiParameter.HEADER, description="bytes=start-end")],
        responses={(200, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The file."),
                   (206, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="The range asked for."),
                   416: OpenApiResponse(description="The range is outside the file."),
                   403: error(403, "The token is not valid, has expired or is for another file.")},
    )
    def get(self, request, pk):
        asset = uploads.local_download(pk, request.query_params.get("token"), request.user)
        return media.ranged_file_response(request, asset.file.open("rb"), asset.size,
                                          asset.file.name.rsplit("/", 1)[-1])

"""Importing material over the API (the rules in this app's modules; the layouts in docs/IMPORT.md)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark
from core.api import error
from core.errors import DomainError
from core.permissions import IsAdmin

from . import services


def _named(request, key: str, name: str | None = None) -> services.NamedFile | None:
    upload = request.FILES.get(key)
    return services.NamedFile(name or upload.name, upload.read()) if upload else None


class ScanImportSerializer(serializers.Serializer):
    scene_id = serializers.CharField()
    ply = serializers.FileField(required=False, help_text="The PLY (or give `archive`).")
    aggregation = serializers.FileField(required=False, help_text="ScanNet aggregation JSON (with segments).")
    segments = serializers.FileField(required=False, help_text="ScanNet segments JSON.")
    boxes = serializers.FileField(required=False, help_text="Oriented boxes JSON (instead of aggregation).")
    meta = serializers.FileField(required=False, help_text="ScanNet sceneXXXX_YY.txt: its axisAlignment is applied.")
    archive = serializers.FileField(required=False, help_text="Instead of the files: a .zip of a ScanNet or 3RScan "
                                                              "scan folder.")
    format = serializers.ChoiceField(["scannet", "3rscan", "las"], required=False, help_text="Of the archive.")
    no_align = serializers.BooleanField(required=False, help_text="Keep the scan's own frame.")
    caption = serializers.CharField(required=False, allow_blank=True)
    world_frame = serializers.CharField(required=False, allow_blank=True)


class ScanImportedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    objects = serializers.IntegerField(help_text="Objects found in the scan.")


class ScanImport(APIView):
    """Multipart: scene_id, ply, aggregation + segments or boxes, meta (ScanNet .txt), no_align, caption,
    world_frame; or scene_id + `archive` (a .zip of a ScanNet or 3RScan scan folder) [+ format]."""

    permission_classes = [IsAdmin]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": ScanImportSerializer},
                   responses={201: ScanImportedSerializer, 503: error(503)})
    def post(self, request, slug):
        benchmark = get_object_or_404(Benchmark, slug=slug)
        ply, archive = _named(request, "ply"), _named(request, "archive")
        if ply is None and archive is None:
            raise DomainError("Attach the PLY file (or a .zip of the scan folder as `archive`).", field="ply")
        common = {"align": str(request.data.get("no_align", "")).lower() not in ("1", "true", "on", "yes"),
                  "caption": request.data.get("caption", ""), "world_frame": request.data.get("world_frame", "")}
        if archive is not None:
            scene = services.import_scan_files(
                benchmark, request.data.get("scene_id", ""), services.files_from_zip(archive.name, archive.content),
                format=request.data.get("format") or None, **common)
        else:
            scene = services.import_scan(
                benchmark, request.data.get("scene_id", ""), ply, aggregation=_named(request, "aggregation"),
                segments=_named(request, "segments"), boxes=_named(request, "boxes"), meta=_named(request, "meta"),
                **common,
            )
        return Response({"id": scene.pk, "external_id": scene.external_id,
                         "objects": scene.scene_objects.count()}, status=201)


class ImageSetImportSerializer(serializers.Serializer):
    archive = serializers.FileField(required=False, help_text="A .zip of images and an items file.")
    files = serializers.ListField(child=serializers.FileField(), required=False, help_text="Images.")
    items = serializers.FileField(required=False, help_text="The items file (JSON, JSONL, CSV or TSV).")
    flip = serializers.BooleanField(required=False, help_text="Also store each image's mirrored twin.")


class ImageSetImportedSerializer(serializers.Serializer):
    images = serializers.IntegerField()
    flipped = serializers.IntegerField()
    items = serializers.IntegerField()
    changes = serializers.IntegerField()
    skipped = serializers.ListField(child=serializers.CharField(), help_text="Files that were not images.")


class ImageSetImport(APIView):
    """Multipart: `archive` (a .zip of images and items file) or several `files` plus `items`; `flip`."""

    permission_classes = [IsAdmin]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": ImageSetImportSerializer},
                   responses={201: ImageSetImportedSerializer})
    def post(self, request, slug):
        benchmark = get_object_or_404(Benchmark, slug=slug)
        archive = _named(request, "archive")
        if archive is not None:
            files = services.files_from_zip(archive.name, archive.content)
        else:
            files = [services.NamedFile(f.name, f.read()) for f in request.FILES.getlist("files")]
            items = request.FILES.get("items")
            if items is not None:
                suffix = items.name.rsplit(".", 1)[-1].lower()
                files.append(services.NamedFile(f"items.{suffix}", items.read()))
        flip = str(request.data.get("flip", "")).lower() in ("1", "true", "on", "yes")
        report = services.import_image_set(benchmark, files, flip=flip, author=request.user)
        return Response({"images": report.images, "flipped": report.flipped, "items": report.items,
                         "changes": report.changes, "skipped": report.skipped}, status=201)


class PairedVideoImportSerializer(serializers.Serializer):
    scene_id = serializers.CharField()
    before = serializers.FileField()
    after = serializers.FileField()
    objects_before = serializers.FileField(required=False)
    objects_after = serializers.FileField(required=False)
    operations = serializers.FileField(required=False)


class ImportedSceneSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()


class PairedVideosImportedSerializer(serializers.Serializer):
    scenes = ImportedSceneSerializer(many=True)


class PairedVideoImport(APIView):
    """Multipart: scene_id, before, after, objects_before, objects_after, operations."""

    permission_classes = [IsAdmin]
    parser_classes = [MultiPartParser, FormParser]
    FILES = {"before": "before.mp4", "after": "after.mp4", "objects_before": "objects_before.json",
             "objects_after": "objects_after.json", "operations": "operations.json"}

    @extend_schema(request={"multipart/form-data": PairedVideoImportSerializer},
                   responses={201: PairedVideosImportedSerializer})
    def post(self, request, slug):
        benchmark = get_object_or_404(Benchmark, slug=slug)
        scene_id = str(request.data.get("scene_id", "")).strip()
        if not scene_id or "/" in scene_id:
            raise DomainError("Give the scene id (no '/').", field="scene_id")
        files = [_named(request, key, f"{scene_id}/{name}") for key, name in self.FILES.items()]
        scenes = services.import_paired_videos(benchmark, [f for f in files if f is not None])
        return Response({"scenes": [{"id": s.pk, "external_id": s.external_id} for s in scenes]}, status=201)

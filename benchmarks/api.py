from django.shortcuts import get_object_or_404
from rest_framework import serializers
from rest_framework.generics import ListAPIView, RetrieveAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from . import services
from .models import Benchmark, Item, Release
from .permissions import IsAdmin, IsReviewer


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "benchmark", "scene", "change", "question", "answer_format", "choices", "answers", "tags",
                  "status", "provenance", "version", "consensus", "agreement"]


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

    class Meta:
        model = Release
        fields = ["id", "benchmark", "version", "notes", "created_at", "n_items", "items_url", "manifest_url",
                  "status", "progress"]
        read_only_fields = ["created_at", "status", "progress"]
        validators = []  # uniqueness is the service's job: it answers 409, not 400

    def get_items_url(self, release):
        return release.items_file.file.url if release.items_file else None

    def get_manifest_url(self, release):
        return release.manifest_file.file.url if release.manifest_file else None

    def get_n_items(self, release):
        return release.items.count()


class ReleaseList(APIView):
    permission_classes = [IsAdmin]
    serializer_class = ReleaseSerializer

    def get(self, request):
        return Response(ReleaseSerializer(Release.objects.select_related("benchmark")[:100], many=True).data)

    def post(self, request):
        data = ReleaseSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = services.export_release(v["benchmark"], v["version"], request.user, v.get("notes", ""))
        return Response(ReleaseSerializer(release).data, status=201)


class ReleaseDetailSerializer(ReleaseSerializer):
    previous = serializers.SlugRelatedField(slug_field="version", read_only=True)
    files = serializers.SerializerMethodField()

    class Meta(ReleaseSerializer.Meta):
        fields = [*ReleaseSerializer.Meta.fields, "previous", "diff", "card", "files"]

    def get_files(self, release):
        return {fmt: {"url": a.file.url, "size": a.size, "sha256": a.sha256}
                for fmt, a in services.release_files(release).items()}


class ReleaseDetail(APIView):
    """A release with its export progress, files per format, diff against the previous one and card."""

    permission_classes = [IsAdmin]
    serializer_class = ReleaseDetailSerializer

    def get(self, request, pk):
        release = get_object_or_404(Release.objects.select_related("benchmark", "previous"), pk=pk)
        return Response(ReleaseDetailSerializer(release).data)

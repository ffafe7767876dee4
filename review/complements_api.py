"""POST /api/v1/items/<id>/complement/: 3DSRBench's complementary image for an item, written as a
draft beside it (review/complements.py). JSON {"scene": id, "answers": [...]} names a scene holding
the image; a multipart form sends the picture as `image` (and `answers` as a JSON list)."""

import json

from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Item
from core.errors import DomainError
from core.permissions import IsReviewer

from . import complements


class ComplementSerializer(serializers.ModelSerializer):
    scene = serializers.CharField(source="scene.external_id")

    class Meta:
        model = Item
        fields = ["id", "scene", "question", "choices", "answers", "tags", "status", "complement_of", "provenance"]


class ComplementaryImage(APIView):
    permission_classes = [IsReviewer]
    parser_classes = [JSONParser, MultiPartParser, FormParser]
    serializer_class = ComplementSerializer

    def post(self, request, pk):
        answers = request.data.get("answers")
        if isinstance(answers, str):
            try:
                answers = json.loads(answers)
            except json.JSONDecodeError:
                answers = [answers]
        upload = request.FILES.get("image")
        item = complements.add_complementary_image(
            pk, request.user, scene_id=request.data.get("scene") if upload is None else None,
            image=_read(upload) if upload is not None else None, answers=answers,
        )
        return Response(ComplementSerializer(item).data, status=201)


def _read(upload) -> bytes:
    if upload.size > complements.MAX_IMAGE_BYTES:
        raise DomainError("The image is larger than 20 MB.", field="image")
    return upload.read()

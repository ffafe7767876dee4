from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Benchmark
from benchmarks.permissions import IsAdmin

from . import services


class LaunchRunSerializer(serializers.Serializer):
    model = serializers.IntegerField(help_text="ModelSpec id.")
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    batch_size = serializers.IntegerField(default=8)


class RunList(APIView):
    permission_classes = [IsAdmin]
    serializer_class = LaunchRunSerializer

    def post(self, request):
        data = LaunchRunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        run = services.launch_run(v["model"], v["benchmark"], request.user, v["batch_size"])
        run.refresh_from_db()
        return Response(services.run_progress(run), status=201)


class RunDetail(APIView):
    permission_classes = [IsAdmin]

    def get(self, request, pk):
        run = services.run_for_staff(pk)
        return Response({**services.run_progress(run), "model": run.model.name, "result": run.scores or None})

"""Import ScanRefer object captions into a benchmark's scenes (Hypo3D's LLM scene text, Table 15)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from core.errors import DomainError
from scenes.object_captions import import_object_captions, read_scanrefer


class Command(BaseCommand):
    help = ("import_object_captions --benchmark SLUG FILE: a ScanRefer JSON list ({scene_id, description, ...}); "
            "each scene named gets its descriptions (Scene.meta object_captions), which runs with inputs "
            '{"object_captions": N} sample N of as a caption model\'s scene text.')

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--benchmark", required=True, help="Benchmark slug.")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        try:
            done = import_object_captions(benchmark, read_scanrefer(Path(options["file"]).read_bytes()))
        except OSError as exc:
            raise CommandError(f"Cannot read {options['file']}: {exc.strerror}") from None
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(json.dumps(done))

"""Import frames produced elsewhere for a benchmark's items (CausalSpatial's world-model frames)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from core.errors import DomainError

from ...prompting.item_frames import frames_in_folder, import_item_frames


class Command(BaseCommand):
    help = ("import_item_frames --benchmark SLUG --source NAME FOLDER: FOLDER holds one folder per item, named by "
            "its benchmark id, with the item's frames (PNG/JPEG, sent in name order); a run with "
            '{"extra_frames": NAME} in its inputs sends them after the scene\'s pictures. All or nothing; an '
            "item's frames of that source are replaced.")

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument("--benchmark", required=True, help="Benchmark slug.")
        parser.add_argument("--source", required=True, help="What produced the frames, e.g. cow.")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        folder = Path(options["folder"])
        if not folder.is_dir():
            raise CommandError(f"{folder} is not a folder.")
        try:
            done = import_item_frames(benchmark, options["source"], frames_in_folder(folder))
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(json.dumps(done))

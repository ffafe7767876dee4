"""Import item files of a benchmark's family; each file is reported on its own, all or nothing."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import import_item_file
from benchmarks.models import Benchmark


class Command(BaseCommand):
    help = "import_items --benchmark SLUG FILE [FILE ...]  (formats: docs/IMPORT.md)"

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("files", nargs="+")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        failed = 0
        for path in map(Path, options["files"]):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.stdout.write(json.dumps({"file": str(path), "items": 0, "errors": [f"cannot read: {exc}"]}))
                failed += 1
                continue
            report = import_item_file(benchmark, path.name, text)
            failed += not report.ok
            self.stdout.write(json.dumps({"file": report.file, "items": report.items, "changes": report.changes,
                                          "errors": report.errors}))
        if failed:
            raise CommandError(f"{failed} file(s) not imported; nothing was written for them.")

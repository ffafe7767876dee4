"""Import item files of a benchmark's family; each file is reported on its own, all or nothing.

Re-importing a file is safe: items are matched by the benchmark's own id and updated in place or
left alone, never duplicated."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import ImportReport, import_item_file
from benchmarks.models import Benchmark


class Command(BaseCommand):
    help = "import_items --benchmark SLUG [--create-missing-scenes] FILE [FILE ...]  (formats: docs/IMPORT.md)"

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--create-missing-scenes", action="store_true",
                            help="Create a bare scene for every scene id the files name that does not exist yet.")
        parser.add_argument("files", nargs="+")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        failed = 0
        for path in map(Path, options["files"]):
            try:
                content = path.read_bytes()
            except OSError as exc:
                report = ImportReport(file=str(path), errors=[f"{path}: cannot read ({exc.strerror or exc})"])
            else:
                report = import_item_file(benchmark, path.name, content,
                                          create_missing_scenes=options["create_missing_scenes"])
            failed += not report.ok
            self.stdout.write(json.dumps(report.as_line()))
        if failed:
            raise CommandError(f"{failed} file(s) not imported; nothing was written for them.")

"""Score files of predictions, in the shapes their tools publish, against a benchmark's or a release's items."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark, Release
from scoring.predfiles import PredictionFileError

from ... import services
from ...runs import run_scoring


def read_files(paths: list[str]) -> list[tuple[str, bytes]]:
    files = []
    for path in map(Path, paths):
        try:
            files.append((path.name, path.read_bytes()))
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
    return files


class Command(BaseCommand):
    help = (
        "score_predictions (--benchmark SLUG | --release SLUG@VERSION) --pred FILE [--pred FILE]... [--by TAG]... "
        "[--profile NAME] [--allow-partial]. Prints what `python -m scoring` prints for the items' gold lines "
        "and these predictions keyed by scoring id. Files: the scorer's JSONL lines, VLMEvalKit results "
        "(.xlsx/.tsv/.csv with index and prediction), lmms-eval sample logs, CausalSpatial output lines, "
        "Hypo3D prediction files; several files are repeats 0, 1, ..."
    )

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--benchmark", help="Benchmark slug: its approved items.")
        target.add_argument("--release", help="e.g. hypo3d-demo@1.0.0: the release's items.")
        parser.add_argument("--pred", required=True, action="append", help="A predictions file (repeatable).")
        parser.add_argument("--by", action="append", default=[], metavar="TAG",
                            help="Also report per value of this tag (repeatable).")
        parser.add_argument("--profile", help="Scoring profile (default: the family's official evaluation).")
        parser.add_argument("--no-sbert", action="store_true", help="hypo3d: skip SBERT, as python -m scoring.")
        parser.add_argument("--allow-partial", action="store_true",
                            help="Exit 0 even when records were left out (unknown ids, invalid or duplicate lines).")

    def handle(self, *args, **options):
        if options["release"]:
            slug, _, version = options["release"].partition("@")
            release = Release.objects.filter(benchmark__slug=slug, version=version).select_related("benchmark").first()
            if release is None:
                raise CommandError(f"No release {options['release']!r} (expected SLUG@VERSION).")
            family, items = release.benchmark.family, release.items.order_by("pk")
        else:
            benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
            if benchmark is None:
                raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
            family, items = benchmark.family, services.approved_items(benchmark)
        files = read_files(options["pred"])
        try:
            result = run_scoring.score_predictions(family, items, files, options["profile"], options["by"],
                                                sbert=False if options["no_sbert"] else None)
        except PredictionFileError as exc:
            raise CommandError(str(exc)) from None
        except ValueError as exc:  # an unknown profile
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(result))
        if result["n_dropped"] and not options["allow_partial"]:
            raise CommandError(f"{result['n_dropped']} record(s) left out (see 'errors'); "
                               "pass --allow-partial to accept a partial score")

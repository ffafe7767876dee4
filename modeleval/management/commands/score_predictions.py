"""Score a predictions file (JSONL, the scorer's prediction lines) against a release's items."""

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Release
from modeleval import services


class Command(BaseCommand):
    help = "score_predictions --release SLUG@VERSION --pred predictions.jsonl"

    def add_arguments(self, parser):
        parser.add_argument("--release", required=True, help="e.g. hypo3d-demo@1.0.0")
        parser.add_argument("--pred", required=True, help="JSONL: {\"id\": item id, \"output\": text, ...}")

    def handle(self, *args, **options):
        slug, _, version = options["release"].partition("@")
        release = Release.objects.filter(benchmark__slug=slug, version=version).select_related("benchmark").first()
        if release is None:
            raise CommandError(f"No release {options['release']!r} (expected SLUG@VERSION).")
        lines, errors = [], []
        try:
            with open(options["pred"], encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        lines.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        errors.append(f"line {number}: not JSON ({exc.msg})")
        except OSError as exc:
            raise CommandError(f"Cannot read {options['pred']}: {exc.strerror}") from None
        result = services.score_prediction_file(release.benchmark.family, release.items.all(), lines)
        result["errors"] = errors + result["errors"]
        self.stdout.write(json.dumps(result))

"""Decide every answered item's consensus again, reviewers' and answer-only campaigns' answers alike
(for answers collected before a rule changed; deciding is idempotent)."""

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from review.consensus import refresh_consensus


class Command(BaseCommand):
    help = "Recompute the consensus and agreement of a benchmark's answered items."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, slug, **options):
        benchmark = Benchmark.objects.filter(slug=slug).first()
        if benchmark is None:
            raise CommandError(f"No benchmark '{slug}'.")
        counts = refresh_consensus(benchmark)
        self.stdout.write(", ".join(f"{name}: {n}" for name, n in counts.items()))

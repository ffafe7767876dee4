"""Upload a release to the Hugging Face Hub as a dataset: the Parquet folder and its card
(benchmarks/releases/hub.py), in one commit. The token comes from the environment (HF_TOKEN), the Hub from
the HF_ENDPOINT setting."""

import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Release
from benchmarks.releases.hub import push_release
from core.errors import DomainError


class Command(BaseCommand):
    help = "push_release SLUG VERSION --repo ORG/NAME [--private]: the release as a Hugging Face dataset."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("version")
        parser.add_argument("--repo", required=True, help="The dataset repository, ORG/NAME (created when new).")
        parser.add_argument("--private", action="store_true", help="Create the repository private.")

    def handle(self, slug, version, repo, private, **options):
        release = Release.objects.filter(benchmark__slug=slug, version=version).select_related("benchmark").first()
        if release is None:
            raise CommandError(f"No release {version} of '{slug}' (export it first: export_release {slug} {version}).")
        try:
            url = push_release(release, repo, os.environ.get("HF_TOKEN"), settings.HF_ENDPOINT, private=private)
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from exc
        self.stdout.write(f"Pushed {slug} v{version} to {repo}: {url}")

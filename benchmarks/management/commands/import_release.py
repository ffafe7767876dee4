"""Rebuild a benchmark from an exported release folder (items.jsonl, manifest.json and the asset
files under assets/)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.releases import life
from core.errors import DomainError


class Command(BaseCommand):
    help = "Import an exported release into a new benchmark; it is exported again under the same version."

    def add_arguments(self, parser):
        parser.add_argument("folder", help="Folder holding items.jsonl and manifest.json.")
        parser.add_argument("--slug", default="", help="Slug of the new benchmark (default: the manifest's).")
        parser.add_argument("--name", default="")

    def handle(self, folder, slug, name, **options):
        folder = Path(folder)
        try:
            items, manifest = (folder / "items.jsonl").read_bytes(), (folder / "manifest.json").read_bytes()
        except OSError as exc:
            raise CommandError(str(exc)) from exc
        try:
            release = life.import_release(items, manifest, None, slug=slug, name=name,
                                              read_asset=lambda path: _read(folder / "assets" / path))
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from exc
        self.stdout.write(f"Imported {release.items.count()} items into {release.benchmark.slug} v{release.version}")


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None

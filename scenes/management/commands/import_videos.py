"""Import paired before/after videos, one folder per scene (or a .zip of them); see docs/IMPORT.md."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from scenes.services import (
    MaterialError,
    NamedFile,
    files_from_folder,
    files_from_zip,
    import_paired_videos,
)


def scene_files(source: Path) -> list[NamedFile]:
    """A scene folder (holding before.mp4) gives its own name to its files; a folder of scene
    folders or a .zip of them keeps the paths as they are."""
    if source.is_file():
        return files_from_zip(source.name, source.read_bytes())
    files = files_from_folder(source)
    if (source / "before.mp4").exists() or (source / "after.mp4").exists():
        return [NamedFile(f"{source.resolve().name}/{f.name}", f.content) for f in files]
    return files


class Command(BaseCommand):
    help = "import_videos --benchmark SLUG SCENE_FOLDER_OR_ZIP [...]"

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("sources", nargs="+")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        try:
            files = [f for source in options["sources"] for f in scene_files(Path(source))]
            scenes = import_paired_videos(benchmark, files)
        except MaterialError as exc:
            self.stdout.write(json.dumps({"errors": exc.errors}))
            raise CommandError("Videos not imported; nothing was written.") from None
        except OSError as exc:
            raise CommandError(f"cannot read: {exc}") from None
        self.stdout.write(json.dumps({"scenes": [s.external_id for s in scenes], "errors": []}))

"""Import an image set (folder or .zip: images + items file [+ overlays.json]); see docs/IMPORT.md."""

import json
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from core.errors import DomainError
from scenes.services import MaterialError, files_from_folder, files_from_zip, import_image_set


class Command(BaseCommand):
    help = "import_images --benchmark SLUG [--flip] FOLDER_OR_ZIP"

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--flip", action="store_true", help="Also store a mirrored twin per image (FlipEval).")
        parser.add_argument("source", help="A folder, or a .zip archive, of images and items.json(l)/items.tsv.")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        source = Path(options["source"])
        try:
            files = files_from_zip(source.name, source.read_bytes()) if source.is_file() else files_from_folder(source)
            report = import_image_set(benchmark, files, flip=options["flip"])
        except MaterialError as exc:
            self.stdout.write(json.dumps({"source": str(source), "errors": exc.errors}))
            raise CommandError("Image set not imported; nothing was written.") from None
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        except OSError as exc:
            raise CommandError(f"{source}: cannot read ({exc.strerror})") from None
        self.stdout.write(json.dumps({"source": str(source), **asdict(report), "errors": []}))

"""Import a scanned scene's posed colour frames from its RGB-D capture: a ScanNet .sens file, the
folders ScanNet's SensReader exports (color/, pose/, intrinsic/), or a 3RScan sequence folder, either
folder also as a .zip (docs/IMPORT.md). The scene's scan is imported first."""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from core.errors import DomainError
from scenes.rgbd_frames import DEFAULT_KEEP, import_sens, import_sequence
from scenes.services import MaterialError, files_from_folder, files_from_zip


class Command(BaseCommand):
    help = "import_posed_frames --benchmark SLUG --scene SCENE_ID (FILE.sens | FOLDER | FOLDER.zip) [--keep N]"

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--scene", required=True, help="The scene's id, e.g. scene0000_00 or a 3RScan uuid.")
        parser.add_argument("source", help="A ScanNet .sens file, a ScanNet export or 3RScan sequence folder, or "
                                           "a .zip of one.")
        parser.add_argument("--keep", type=int, default=DEFAULT_KEEP,
                            help=f"Frames kept, evenly spaced over the capture (default {DEFAULT_KEEP}).")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        source, scene_id, keep = Path(options["source"]), options["scene"], options["keep"]
        try:
            if source.is_dir():
                frames = import_sequence(benchmark, scene_id, files_from_folder(source), keep=keep)
            elif source.suffix.lower() == ".zip":
                if source.stat().st_size > settings.IMPORT_MAX_UNPACKED_BYTES:
                    raise CommandError(f"{source}: over IMPORT_MAX_UNPACKED_BYTES; unpack it and give the folder.")
                frames = import_sequence(benchmark, scene_id, files_from_zip(source.name, source.read_bytes()),
                                         keep=keep)
            else:
                frames = import_sens(benchmark, scene_id, source, keep=keep)
        except MaterialError as exc:
            self.stdout.write(json.dumps({"scene": scene_id, "errors": exc.errors}))
            raise CommandError("Posed frames not imported; nothing was written.") from None
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        except OSError as exc:
            raise CommandError(f"{source}: cannot read ({exc.strerror})") from None
        self.stdout.write(json.dumps({"scene": scene_id, "frames": len(frames),
                                      "source": frames[0].source, "errors": []}))

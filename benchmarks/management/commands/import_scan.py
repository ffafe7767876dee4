"""Import one 3D scan as a scene: PLY + ScanNet aggregation/segments or a boxes file (docs/IMPORT.md)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.errors import DomainError
from benchmarks.material import MaterialError, NamedFile, import_scan
from benchmarks.models import Benchmark


def named(path: str | None) -> NamedFile | None:
    if path is None:
        return None
    try:
        return NamedFile(Path(path).name, Path(path).read_bytes())
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror})") from None


class Command(BaseCommand):
    help = ("import_scan --benchmark SLUG --scene SCENE_ID PLY (--aggregation FILE --segments FILE | --boxes FILE) "
            "[--caption TEXT] [--world-frame TEXT]")

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--scene", required=True, help="Scene id, e.g. scene0000_00.")
        parser.add_argument("ply", help="PLY point cloud or mesh with vertex colours.")
        parser.add_argument("--aggregation", help="ScanNet *.aggregation.json")
        parser.add_argument("--segments", help="ScanNet *_vh_clean_2.0.010000.segs.json")
        parser.add_argument("--boxes", help="JSON list of {label, center, size[, yaw]} boxes")
        parser.add_argument("--caption", default="")
        parser.add_argument("--world-frame", default="", help="e.g. 'The desk was located at the left of the scene.'")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        try:
            scene = import_scan(
                benchmark, options["scene"], named(options["ply"]), aggregation=named(options["aggregation"]),
                segments=named(options["segments"]), boxes=named(options["boxes"]), caption=options["caption"],
                world_frame=options["world_frame"],
            )
        except MaterialError as exc:
            self.stdout.write(json.dumps({"scene": options["scene"], "errors": exc.errors}))
            raise CommandError("Scan not imported; nothing was written.") from None
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        self.stdout.write(json.dumps({"scene": scene.external_id, "id": scene.pk,
                                      "objects": scene.scene_objects.count(), "errors": []}))

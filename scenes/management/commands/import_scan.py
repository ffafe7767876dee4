"""Import one 3D scan as a scene: a ScanNet PLY + aggregation/segments (or a boxes file), or a scan
folder (ScanNet or 3RScan), aligned to the floor and walls unless --no-align (docs/IMPORT.md)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Benchmark
from core.errors import DomainError
from scenes.services import MaterialError, NamedFile, files_from_folder, import_scan, import_scan_files


def named(path: str | None) -> NamedFile | None:
    if path is None:
        return None
    try:
        return NamedFile(Path(path).name, Path(path).read_bytes())
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror})") from None


class Command(BaseCommand):
    help = ("import_scan --benchmark SLUG [--scene SCENE_ID] (PLY (--aggregation FILE --segments FILE | --boxes FILE) "
            "[--meta SCENE.txt] | FOLDER [--format scannet|3rscan|las]) [--no-align] [--caption TEXT] [--world-frame TEXT]")

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True)
        parser.add_argument("--scene", help="Scene id, e.g. scene0000_00 (default for a folder: the folder's name).")
        parser.add_argument("ply", help="PLY point cloud or mesh with vertex colours, a LAS/LAZ cloud, or a scan "
                                        "folder (ScanNet sceneXXXX_YY/, 3RScan <uuid>/, or a .las/.laz with boxes.json).")
        parser.add_argument("--aggregation", help="ScanNet *.aggregation.json")
        parser.add_argument("--segments", help="ScanNet *_vh_clean_2.0.010000.segs.json")
        parser.add_argument("--boxes", help="JSON list of {label, center, size[, yaw]} boxes")
        parser.add_argument("--meta", help="ScanNet sceneXXXX_YY.txt; its axisAlignment is applied when present")
        parser.add_argument("--format", choices=["scannet", "3rscan", "las"], help="for a folder: default from file names")
        parser.add_argument("--no-align", action="store_true",
                            help="keep the scan's own frame (no axisAlignment, no estimated alignment)")
        parser.add_argument("--caption", default="")
        parser.add_argument("--world-frame", default="", help="e.g. 'The desk was located at the left of the scene.'")

    def handle(self, *args, **options):
        benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
        source = Path(options["ply"])
        scene_id = options["scene"] or (source.resolve().name if source.is_dir() else None)
        if not scene_id:
            raise CommandError("Give --scene (the scene id) for a single file.")
        common = {"align": not options["no_align"], "caption": options["caption"],
                  "world_frame": options["world_frame"]}
        try:
            if source.is_dir():
                scene = import_scan_files(benchmark, scene_id, files_from_folder(source), format=options["format"],
                                          **common)
            else:
                scene = import_scan(
                    benchmark, scene_id, named(options["ply"]), aggregation=named(options["aggregation"]),
                    segments=named(options["segments"]), boxes=named(options["boxes"]), meta=named(options["meta"]),
                    **common,
                )
        except MaterialError as exc:
            self.stdout.write(json.dumps({"scene": scene_id, "errors": exc.errors}))
            raise CommandError("Scan not imported; nothing was written.") from None
        except DomainError as exc:
            raise CommandError(f"{exc.field}: {exc.message}") from None
        alignment = scene.meta.get("alignment", {})
        self.stdout.write(json.dumps({"scene": scene.external_id, "id": scene.pk,
                                      "objects": scene.scene_objects.count(), "format": scene.meta.get("source_format"),
                                      "alignment": alignment.get("source"), "errors": []}))

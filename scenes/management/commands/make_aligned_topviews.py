"""Make the aligned top views (Hypo3D Table 11) of scenes whose world frame was approved before the
platform made them on approval (scenes/aligned_topview.py)."""

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.models import Asset, Benchmark, Scene, WorldFrame
from scenes.aligned_topview import ROLES, approved_frames, is_current, made_here
from scenes.processing import build_aligned_topviews


class Command(BaseCommand):
    help = ("make_aligned_topviews [--benchmark SLUG] [--scene ID ...] [--again]: renders the plain and semantic "
            "top views turned into each scene's approved world frame (meta aligned: true), for scenes with an "
            "approved frame and a scan whose maps are missing or were made from another frame; --again renders "
            "them anew all the same. Re-running replaces, never duplicates.")

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", help="Benchmark slug (default: every benchmark).")
        parser.add_argument("--scene", action="append", default=[], help="A scene's external id (repeatable).")
        parser.add_argument("--again", action="store_true", help="Render even where current maps exist.")

    def handle(self, *args, **options):
        scenes = Scene.objects.filter(world_frames__status=WorldFrame.Status.APPROVED).distinct().order_by("pk")
        if options["benchmark"]:
            benchmark = Benchmark.objects.filter(slug=options["benchmark"]).first()
            if benchmark is None:
                raise CommandError(f"No benchmark with slug {options['benchmark']!r}.")
            scenes = scenes.filter(benchmark=benchmark)
        if options["scene"]:
            scenes = scenes.filter(external_id__in=options["scene"])
        # not_made: no scan to render from (or another frame was approved meanwhile: its task makes them)
        done = {"made": [], "current": [], "not_made": []}
        for scene in scenes:
            frame_ids = [f.pk for f in approved_frames(scene.pk)]
            current = {a.role for a in made_here(Asset.objects.filter(scene=scene)) if is_current(a, frame_ids)}
            if current == set(ROLES) and not options["again"]:
                done["current"].append(scene.external_id)
                continue
            made = build_aligned_topviews(scene)
            done["made" if made else "not_made"].append(scene.external_id)
        self.stdout.write(json.dumps(done))

"""Generate items from scene metadata in a family's published shape (then `import_items` loads them).

    generate_items --family spatial457 --scene-meta SCENES.json --out L3_2d_spatial.json [--level LEVEL]
    generate_items --family m3verse --scene-meta SCENE.json --states STATES.json --out items.jsonl

Spatial457: SCENES.json is CLEVR's scene JSON (one scene, a list, or {"scenes": [...]}); one level per
file, as published (`--level`, default L3_2d_spatial; `--per-template N`). M3-Verse: STATES.json holds
the two states' objects (`--scene-meta` alone may hold them too), ours or AI2-THOR's metadata; the rows carry
their provenance, so `import_items` brings them in as drafts for review. One JSON line reports what was written."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from construction.generators import m3verse, spatial457


class Command(BaseCommand):
    help = (
        "generate_items --family spatial457|m3verse --scene-meta FILE [--states FILE] --out FILE [--seed N]"
    )

    def add_arguments(self, parser):
        parser.add_argument("--family", required=True, choices=["spatial457", "m3verse"])
        parser.add_argument("--scene-meta", required=True, help="Scene metadata (JSON).")
        parser.add_argument("--states", help="M3-Verse: the two states' objects (JSON).")
        parser.add_argument("--out", required=True, help="The file to write.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--level", default="L3_2d_spatial", help=f"Spatial457: one of {', '.join(spatial457.LEVELS)}."
        )
        parser.add_argument(
            "--per-template", type=int, default=1, help="Spatial457: tries per template and scene."
        )
        parser.add_argument(
            "--templates-per-image", type=int, default=spatial457.TEMPLATES_PER_IMAGE,
            help="Spatial457: templates drawn per image (0: every template).",
        )
        parser.add_argument("--metadata", help="Spatial457: a vocabulary file (CLEVR's metadata.json shape; "
                            "Super-CLEVR's is used by itself for scenes of vehicles).")
        parser.add_argument("--scene-id", help="M3-Verse: the scene id, when the files do not carry one.")

    def handle(self, *args, **options):
        family, out = options["family"], Path(options["out"])
        try:
            meta = self._read(options["scene_meta"])
            if family == "spatial457":
                metadata = self._read(options["metadata"]) if options["metadata"] else None
                data = spatial457.generate(
                    meta,
                    options["level"],
                    per_template=options["per_template"],
                    seed=options["seed"],
                    metadata=metadata,
                    templates_per_image=options["templates_per_image"] or None,
                )
                out.write_text(json.dumps(data, indent=1), encoding="utf-8")
                count = len(data["questions"])
            else:
                states = self._states(meta, self._read(options["states"]) if options["states"] else None)
                if options["scene_id"]:
                    states["scene_id"] = options["scene_id"]
                rows = m3verse.generate(states, seed=options["seed"])
                out.write_text(m3verse.write_jsonl(rows), encoding="utf-8")
                count = len(rows)
        except (ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"Cannot generate: {exc}") from None
        self.stdout.write(json.dumps({"family": family, "out": str(out), "items": count}))

    @staticmethod
    def _states(meta, states) -> dict:
        """Both states in one file, or --scene-meta as state 0 and --states as state 1."""

        def both(data):
            return isinstance(data, dict) and ("states" in data or "state_0" in data or "before" in data)

        if states is None:
            states = {"states": meta} if m3verse.side_by_side(meta) else meta
        elif not both(states):
            states = {"states": [meta, states]}
        if not isinstance(states, dict):
            raise ValueError("expected {'scene_id', 'states': [objects_0, objects_1]}")
        states = dict(states)
        if isinstance(meta, dict) and meta.get("scene_id"):
            states.setdefault("scene_id", meta["scene_id"])
        return states

    @staticmethod
    def _read(path: str):
        try:
            return json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror or exc})") from None
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None

"""Object captions of scan scenes (ScanRefer: one description per annotated object), kept in the scene's
meta as `object_captions`. Hypo3D's LLM input is 30 of them, sampled and joined with ". " (Table 15 tries
30 / 50 / 100 / 200): a run with inputs {"object_captions": N} builds the caption model's scene text
from them (modeleval.prompting.run_inputs)."""

import json

from django.db import transaction

from benchmarks.models import Benchmark, Scene
from core.errors import DomainError


def read_scanrefer(data: bytes) -> dict[str, list[str]]:
    """{scene id: [descriptions in file order]} of a ScanRefer JSON list ({scene_id, description, ...})."""
    try:
        rows = json.loads(data)
    except ValueError as exc:
        raise DomainError(f"Not JSON: {exc}.", field="file") from None
    if not isinstance(rows, list) or not all(
            isinstance(row, dict) and isinstance(row.get("scene_id"), str)
            and isinstance(row.get("description"), str) for row in rows):
        raise DomainError("A ScanRefer file is a JSON list of {scene_id, description, ...}.", field="file")
    captions: dict[str, list[str]] = {}
    for row in rows:
        if row["description"].strip():
            captions.setdefault(row["scene_id"], []).append(row["description"].strip())
    return captions


@transaction.atomic
def import_object_captions(benchmark: Benchmark, captions: dict[str, list[str]]) -> dict:
    """Each scene of the benchmark named in `captions` gets them (replacing what it had); returns
    {scenes, captions, unknown} (unknown: scene ids the benchmark does not have)."""
    scenes = {scene.external_id: scene for scene in Scene.objects.select_for_update().filter(
        benchmark=benchmark, external_id__in=list(captions))}
    for scene_id, scene in scenes.items():
        scene.meta = {**(scene.meta or {}), "object_captions": captions[scene_id]}
        scene.save(update_fields=["meta"])
    if not scenes:
        raise DomainError(f"No scene of {benchmark.slug} is named in the file.", field="file")
    return {"scenes": len(scenes), "captions": sum(len(captions[s]) for s in scenes),
            "unknown": sorted(set(captions) - set(scenes))}

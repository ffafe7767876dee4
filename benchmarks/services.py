"""Verbs on the shared data: storing assets, listing what a scene offers, an item as a gold line. A
release's life (export, files, import) is in releases.py."""

import hashlib

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Q

from .models import Asset, Benchmark, Item, Scene


def store_asset(scene: Scene | None, role: str, filename: str, content: bytes, meta: dict | None = None) -> Asset:
    """Write bytes to the configured storage and record size and sha256 beside them."""
    asset = Asset(scene=scene, role=role, size=len(content), sha256=hashlib.sha256(content).hexdigest())
    asset.meta = meta or {}
    with transaction.atomic():
        asset.file.save(filename, ContentFile(content), save=False)
        try:
            asset.save()
        except BaseException:
            asset.file.storage.delete(asset.file.name)  # no row, so no orphan bytes either
            raise
    return asset


def delete_assets(assets: list[Asset]) -> None:
    """Delete the assets' rows now and their stored files once the transaction commits (rolled back, both
    stay)."""
    if not assets:
        return
    Asset.objects.filter(pk__in=[asset.pk for asset in assets]).delete()

    def delete_files():
        for asset in assets:
            asset.file.delete(save=False)

    transaction.on_commit(delete_files)


def set_results_public(benchmark: Benchmark, public: bool) -> Benchmark:
    """Open the benchmark's results (its page, leaderboard and paper tables) to anyone, signed out too, or
    close them again; nothing else of it is ever public (Benchmark.public)."""
    benchmark.public = public
    benchmark.save(update_fields=["public"])
    return benchmark


def shown_to_people(assets):
    """Leaves out a top view rotated into the world frame (meta `aligned: true`, Hypo3D Table 11's
    condition): only a model run asking for it is shown it; pages, studies and releases show the scene's
    own map. A key test, not JSON containment (PostgreSQL-only); a map without the mark is not aligned.
    Leaves out a change's after-state too (meta `after_state`, scenes/after_state.py): the scene as a
    change leaves it, reached only through selectors.after_state_assets."""
    return assets.filter(Q(meta__aligned=False) | Q(meta__aligned__isnull=True)).exclude(meta__has_key="after_state")


def scene_asset(scene: Scene, role: str) -> Asset | None:
    return shown_to_people(scene.assets.filter(role=role)).order_by("-id").first()


def not_sure_letter(item: Item) -> str | None:
    """The letter of the item's "Not sure" option: CausalSpatial's `not_sure` field as imported, or
    an option that reads "Not sure"; None when the item has none."""
    letter = (item.tags or {}).get("not_sure")
    if isinstance(letter, str) and len(letter) == 1 and letter.isalpha():
        return letter.upper()
    lowered = [str(c).strip().rstrip(".").lower() for c in item.choices or []]
    return chr(ord("A") + lowered.index("not sure")) if "not sure" in lowered else None


def gold_row(item: Item, row_id=None) -> dict:
    """An item as a gold line of the scorer (see docs/METRICS.md), keyed by the benchmark's own id."""
    answers = item.answers
    return {
        "id": str(row_id if row_id is not None else item.scoring_id),
        "answer_format": item.answer_format,
        "question": item.question,
        "choices": item.choices,
        "answer": answers[0] if item.answer_format == "single" and answers else answers,
        "not_sure": not_sure_letter(item),
        "tags": item.tags,
    }


def question_types_of(tags: dict) -> list[str]:
    """Question types are stored as a list, or as one string in older items."""
    types = (tags or {}).get("question_type") or []
    return [types] if isinstance(types, str) else list(types)

"""Verbs on the shared data: storing assets, listing what a scene offers, exporting releases."""

import hashlib
import json
import re

from django.core.files.base import ContentFile
from django.db import transaction

from .errors import Conflict, DomainError
from .models import Asset, AssetRole, Benchmark, Item, Release, Scene


def store_asset(scene: Scene | None, role: str, filename: str, content: bytes, meta: dict | None = None) -> Asset:
    """Write bytes to the configured storage and record size and sha256 beside them."""
    asset = Asset(scene=scene, role=role, size=len(content), sha256=hashlib.sha256(content).hexdigest())
    asset.meta = meta or {}
    with transaction.atomic():
        asset.file.save(filename, ContentFile(content), save=False)
        asset.save()
    return asset


def scene_asset(scene: Scene, role: str) -> Asset | None:
    return scene.assets.filter(role=role).order_by("-id").first()


def gold_row(item: Item, row_id=None) -> dict:
    """An item as a gold line of the scorer (see docs/METRICS.md)."""
    answers = item.answers
    return {
        "id": str(row_id if row_id is not None else item.pk),
        "answer_format": item.answer_format,
        "question": item.question,
        "choices": item.choices,
        "answer": answers[0] if item.answer_format == "single" and answers else answers,
        "not_sure": None,
        "tags": item.tags,
    }


VERSION_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")


def release_item_line(item: Item) -> dict:
    change = item.change
    frames = list(item.scene.world_frames.values_list("text", flat=True)) if item.scene else []
    return {
        "id": item.pk,
        "external_id": item.external_id or None,
        "scene_id": item.scene.external_id if item.scene else None,
        "world_frame": frames,
        "context_change": change.text if change else None,
        "context_change_raw": change.raw_text if change else None,
        "change_type": change.change_type if change else None,
        "question": item.question,
        "answer_format": item.answer_format,
        "choices": item.choices,
        "answers": item.answers,
        "tags": item.tags,
        "provenance": item.provenance,
    }


def export_release(benchmark: Benchmark, version: str, created_by, notes: str = "") -> Release:
    """Freeze the approved items as a versioned release: items JSONL plus an asset manifest."""
    version = (version or "").strip()
    if not VERSION_PATTERN.match(version):
        raise DomainError("Use a version like 1.0.0 (three numbers).", field="version")
    with transaction.atomic():
        if Release.objects.filter(benchmark=benchmark, version=version).exists():
            raise Conflict(f"Version {version} of this benchmark already exists.", field="version")
        items = list(
            Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED)
            .select_related("change", "scene")
            .prefetch_related("scene__world_frames")
            .order_by("pk")
        )
        if not items:
            raise DomainError("There are no approved items to release.", field="benchmark")
        lines = "".join(json.dumps(release_item_line(i), ensure_ascii=False) + "\n" for i in items)
        scene_ids = {i.scene_id for i in items if i.scene_id}
        assets = Asset.objects.filter(scene_id__in=scene_ids).exclude(role=AssetRole.EXPORT).select_related("scene")
        manifest = {
            "benchmark": benchmark.slug,
            "family": benchmark.family,
            "version": version,
            "n_items": len(items),
            "assets": [
                {"scene_id": a.scene.external_id, "role": a.role, "path": a.file.name, "size": a.size,
                 "sha256": a.sha256}
                for a in assets.order_by("scene_id", "role")
            ],
        }
        prefix = f"{benchmark.slug}-{version}"
        release = Release.objects.create(benchmark=benchmark, version=version, notes=notes, created_by=created_by)
        release.items.set(items)
        release.items_file = store_asset(None, AssetRole.EXPORT, f"{prefix}.jsonl", lines.encode())
        release.manifest_file = store_asset(
            None, AssetRole.EXPORT, f"{prefix}-manifest.json", json.dumps(manifest, indent=2).encode()
        )
        release.save(update_fields=["items_file", "manifest_file"])
    return release

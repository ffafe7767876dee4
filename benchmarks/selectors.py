"""What pages read of benchmarks, their scenes, changes, items and releases: querysets (lazy, so a
page's query count is the template's) and small typed results."""

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from .edit_digest import edit_digest
from .models import Asset, AssetRole, Benchmark, ContextChange, Item, Release, Scene


def benchmarks_by_name():
    return Benchmark.objects.order_by("name")


def public_benchmarks():
    """The benchmarks whose results anyone may read, signed out too (Benchmark.public), by name."""
    return benchmarks_by_name().filter(public=True)


def public_benchmark(slug: str) -> Benchmark | None:
    return public_benchmarks().filter(slug=slug).first()


@dataclass
class BenchmarkProgress:
    """How far a benchmark's pipeline has come, as the admin's home page counts it."""

    changes_waiting: int = 0
    questions_waiting: int = 0
    approved: int = 0
    flagged: int = 0
    release: Release | None = None  # the latest


def progress_by_benchmark(ids) -> dict[int, BenchmarkProgress]:
    """Benchmark id -> its progress, in three queries whatever the number of benchmarks."""
    progress = {pk: BenchmarkProgress() for pk in ids}
    waiting = (ContextChange.objects.filter(status=ContextChange.Status.SUBMITTED, scene__benchmark__in=ids)
               .values_list("scene__benchmark").annotate(n=Count("id")))
    for pk, n in waiting:
        progress[pk].changes_waiting = n
    item_rows = (Item.objects.filter(benchmark__in=ids).values("benchmark")
                 .annotate(draft=Count("id", filter=Q(status=Item.Status.DRAFT)),
                           approved=Count("id", filter=Q(status=Item.Status.APPROVED)),
                           flagged=Count("id", filter=Q(consensus=Item.Consensus.FLAGGED))))
    for row in item_rows:
        entry = progress[row["benchmark"]]
        entry.questions_waiting, entry.approved, entry.flagged = row["draft"], row["approved"], row["flagged"]
    for release in Release.objects.filter(benchmark__in=ids).order_by("benchmark_id", "-created_at"):
        if progress[release.benchmark_id].release is None:
            progress[release.benchmark_id].release = release
    return progress


@dataclass
class MaterialAndItems:
    """A benchmark's scenes and its items by where they came from: written here (crowd, reviewers, models),
    made by a generator, or imported (a published file, another HypoLab release)."""

    scenes: int = 0
    authored: int = 0
    generated: int = 0
    imported: int = 0

    @property
    def items(self) -> int:
        return self.authored + self.generated + self.imported


# A change's after-state: the roles built for it, and the meta key naming its change on each asset.
AFTER_STATE_ROLES = (AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC)
AFTER_STATE_KEY = "after_state"
GENERATED = Q(provenance__source="generated")
IMPORTED = Q(provenance__source="published") | Q(provenance__has_key="imported_from")


def material_and_items_by_benchmark(ids) -> dict[int, MaterialAndItems]:
    """Benchmark id -> its scenes and items by source, in two queries whatever the number of benchmarks."""
    counts = {pk: MaterialAndItems() for pk in ids}
    for pk, n in Scene.objects.filter(benchmark__in=ids).values_list("benchmark").annotate(n=Count("id")):
        counts[pk].scenes = n
    rows = (Item.objects.filter(benchmark__in=ids).values("benchmark")
            .annotate(total=Count("id"), generated=Count("id", filter=GENERATED),
                      imported=Count("id", filter=IMPORTED),
                      # a generator's item read back from a release: generated (counted once)
                      both=Count("id", filter=GENERATED & IMPORTED)))
    for row in rows:
        entry = counts[row["benchmark"]]
        entry.generated, entry.imported = row["generated"], row["imported"] - row["both"]
        entry.authored = row["total"] - entry.generated - entry.imported
    return counts


@dataclass
class ConsensusOverview:
    """The reviewer's home: items whose consensus is flagged, their benchmarks, and every benchmark
    (slug and name) for the per-benchmark consensus pages."""

    flagged: int
    flagged_benchmarks: list
    benchmarks: list[dict]


def consensus_overview() -> ConsensusOverview:
    return ConsensusOverview(
        flagged=Item.objects.filter(consensus=Item.Consensus.FLAGGED).count(),
        flagged_benchmarks=list(Benchmark.objects.filter(items__consensus=Item.Consensus.FLAGGED)
                                .annotate(n=Count("items")).order_by("name")),
        benchmarks=list(benchmarks_by_name().values("slug", "name")),
    )


@dataclass
class BenchmarkLists:
    """What the manage page lists of the benchmark itself (querysets: read when the page shows them)."""

    approved_items: QuerySet
    releases: QuerySet
    release_versions: QuerySet
    scenes: QuerySet


def manage_page_lists(benchmark) -> BenchmarkLists:
    return BenchmarkLists(
        approved_items=Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).select_related("change"),
        releases=Release.objects.filter(benchmark=benchmark),
        release_versions=Release.objects.filter(benchmark=benchmark).values_list("version", flat=True),
        scenes=scenes_of(benchmark),
    )


def protocols_for(benchmark) -> dict:
    """What the benchmark's items allow: rotated options need choice items, mirrored images items tagged
    `flip` (Hypo3D's open answers allow neither)."""
    items = Item.objects.filter(benchmark=benchmark)
    return {"circular": items.exclude(choices=[]).exists(), "flip": items.filter(tags__has_key="flip").exists()}


def approved_items_in_order(benchmark):
    return Item.objects.filter(benchmark=benchmark, status=Item.Status.APPROVED).order_by("pk")


def tags_of(items) -> list[str]:
    """Every tag name the items carry, sorted (one query)."""
    return sorted({tag for tags in items.values_list("tags", flat=True) for tag in (tags or {})})


def flagged_items(benchmark):
    return Item.objects.filter(benchmark=benchmark, consensus=Item.Consensus.FLAGGED)[:200]


def items_for_review():
    """Items with what the review page shows beside them, for a lookup by id."""
    return Item.objects.select_related("change", "scene", "author", "benchmark", "complement_of")


def complements_of(item):
    return item.complements.order_by("pk")


def changes_for_review():
    """Context changes with their scene, benchmark and author, for a lookup by id."""
    return ContextChange.objects.select_related("scene__benchmark", "author")


def recently_approved_changes():
    return (ContextChange.objects.filter(status=ContextChange.Status.APPROVED).select_related("scene__benchmark")
            .order_by("-updated_at")[:50])


def items_of_change(change):
    return change.items.order_by("pk")


def scenes_with_benchmark():
    """Scenes with their benchmark, for a lookup by id."""
    return Scene.objects.select_related("benchmark")


def scenes_of(benchmark):
    return benchmark.scenes.order_by("external_id")


def scene_ids_of(benchmark) -> set[int]:
    return set(benchmark.scenes.values_list("pk", flat=True))


def scenes_among(benchmark, ids) -> list:
    """The benchmark's scenes whose ids are among `ids` (others are ignored)."""
    return list(benchmark.scenes.filter(pk__in=ids))


def assets_of(scene) -> list:
    return list(scene.assets.order_by("role", "id"))


def objects_of(scene):
    return scene.scene_objects.order_by("instance_id")


def releases_with_links():
    """Releases with their benchmark, previous release and export job, for a lookup by id."""
    return Release.objects.select_related("benchmark", "previous", "job")


def current_after_state(change):
    """The change's after-state assets made from its edit as it is now (scenes/after_state.py builds them)."""
    return Asset.objects.filter(scene_id=change.scene_id, role__in=AFTER_STATE_ROLES,
                                **{f"meta__{AFTER_STATE_KEY}": change.pk}, meta__edit_digest=edit_digest(change.edit))


def after_state_assets(change) -> dict[str, object]:
    """The change's current after-state by role: its viewer file and plain and semantic top views, made
    from its edit as it is now; {} while there is none (not built yet, or an older edit's). The one way
    other stages reach them: people's pages and runs' default inputs leave them out
    (services.shown_to_people)."""
    if change is None or not change.edit:
        return {}
    return {asset.role: asset for asset in current_after_state(change).order_by("id")}

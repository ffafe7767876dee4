"""What pages and other stages read of review's records (decisions, answers, dedup runs, grammar passes),
its queues, and an item's gold read as yes/no or flipped for its complement."""

from dataclasses import dataclass

from benchmarks import overlays
from benchmarks.models import AnswerFormat, AssetRole, Benchmark, Item
from scenes.viewer import scene_viewer_data

from . import polish, services
from .models import DedupRun, ItemDecision, Polish


def benchmarks_with_filter_decisions():
    """Benchmarks with at least one item kept or dropped by filtering."""
    return Benchmark.objects.filter(
        items__decisions__action__in=[ItemDecision.Action.KEEP, ItemDecision.Action.DROP]).distinct()


def independent_answers_of(item):
    return item.independent_answers.select_related("answerer")


def dedup_runs():
    """Dedup runs with their benchmark and job, newest first (the model's order), for a list or a lookup by id."""
    return DedupRun.objects.select_related("benchmark", "job")


def recent_dedup_runs():
    return dedup_runs()[:5]


def pairs_of(run):
    return run.pairs.all()[:500]


def applied_polishes():
    return Polish.objects.filter(status=Polish.Status.APPLIED).select_related("change")[:50]


def running_polish_pass(benchmark):
    """The grammar pass (its job) queued or running over the benchmark, or None."""
    return polish.running_passes(benchmark).first()


def applied_polish_of(change):
    """The polish applied to the change, with its model, or None."""
    return change.polishes.filter(status=Polish.Status.APPLIED).select_related("model").first()


def filtering_drafts(user):
    """The first 200 drafts of the user's filtering queue, with their change."""
    return services.filtering_queue(user).select_related("change")[:200]


def drafts_waiting(user) -> int:
    return services.filtering_queue(user).count()


@dataclass
class ReviewQueues:
    """The reviewer's home: how much waits in each queue, the next few of each, and work sent back."""

    changes: int
    items: int
    next_changes: list
    next_items: list
    returned: int


def review_queues(user) -> ReviewQueues:
    changes, items = services.review_queue(user), services.filtering_queue(user)
    return ReviewQueues(changes=changes.count(), items=items.count(), next_changes=list(changes[:5]),
                        next_items=list(items[:5]), returned=len(services.returned_work(user)))


def item_stimulus(item) -> dict:
    """What the item shows, as the evaluator's page draws it (humaneval's stimulus, unmirrored): its
    images with their marks (the image's own overlays and the item's, in the image's pixels:
    benchmarks.overlays, the same shapes printed into the model's pixels), the before/after pair for the
    frame-locked player, and the 3D viewer's data only for a scene that has a scan."""
    if item.scene is None:
        return {"images": [], "videos": None, "viewer": None}
    assets = list(item.scene.assets.filter(role__in=[AssetRole.IMAGE, AssetRole.VIDEO]).order_by("id"))
    images = [{"url": a.file.url, "overlays": overlays.shown_overlays(a, index, item)}
              for index, a in enumerate(a for a in assets if a.role == AssetRole.IMAGE)]
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    pair = ({"before": videos["before"].file.url, "after": videos["after"].file.url,
             "fps": videos["before"].meta.get("fps")} if {"before", "after"} <= videos.keys() else None)
    viewer = scene_viewer_data(item.scene)
    return {"images": images, "videos": pair, "viewer": viewer if viewer.get("points_url") else None}


STIMULI_LISTED = 50  # drafts of the filtering page shown with their stimulus (the rest link to their page)


def stimuli_of(items) -> dict:
    """{item id: what it shows} (images with marks, the paired videos; a list page opens no 3D viewer)
    for the items that show an image or videos."""
    stimuli = {}
    for item in items:
        shown = item_stimulus(item)
        if shown["images"] or shown["videos"]:
            stimuli[item.pk] = {"images": shown["images"], "videos": shown["videos"]}
    return stimuli


def drafts_with_stimuli(user) -> tuple[list, dict]:
    """The filtering queue's first drafts, and what the first STIMULI_LISTED of them show (stimuli_of)."""
    drafts = list(filtering_drafts(user).select_related("scene"))
    return drafts, stimuli_of(drafts[:STIMULI_LISTED])


def stage_judged(items, stamp: str) -> set[int]:
    """The ids among `items` a stage has judged under `stamp` (its verdicts' notes start with it)."""
    return set(ItemDecision.objects.filter(item__in=items, reviewer=None, note__startswith=f"{stamp}:")
               .values_list("item_id", flat=True))


_YES_NO = {"yes": "no", "no": "yes"}


def yes_or_no(item: Item) -> str | None:
    """An item's gold answer when it is just yes or no ("yes" or "no"), else None."""
    said = {str(a).strip().rstrip(".").lower() for a in item.answers}
    return said.pop() if len(said) == 1 and next(iter(said)) in _YES_NO else None


def flipped_answers(item: Item) -> list[str] | None:
    """The gold answers of the complementary question: the other option of a two-option item, the
    other of yes/no; None for any other item."""
    if item.answer_format == AnswerFormat.SINGLE and len(item.choices) == 2 and item.answers in (["A"], ["B"]):
        return ["B"] if item.answers == ["A"] else ["A"]
    said = yes_or_no(item) if item.answer_format == AnswerFormat.OPEN else None
    return [_YES_NO[said]] if said else None

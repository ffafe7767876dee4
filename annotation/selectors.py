"""What pages and other stages read of campaigns, assignments and crowd answers: querysets and small typed
results."""

from typing import NamedTuple

from .models import Campaign, CrowdAnswer


def active_campaigns():
    return Campaign.objects.filter(is_active=True).select_related("benchmark").order_by("name")


def campaigns_of(benchmark):
    """The benchmark's campaigns, newest first."""
    return Campaign.objects.filter(benchmark=benchmark).order_by("-created_at")


def campaigns_with_benchmark():
    """Campaigns with their benchmark, for a lookup by id."""
    return Campaign.objects.select_related("benchmark")


def scene_ids_of(campaign) -> set[int]:
    return {s.pk for s in campaign.scenes.all()}


def is_first_assignment(assignment, worker) -> bool:
    """Whether the worker has no earlier assignment in the campaign (the page then shows the guidelines open)."""
    return not assignment.campaign.assignments.filter(worker=worker, pk__lt=assignment.pk).exists()


class CrowdAnswerRow(NamedTuple):
    item_id: int
    worker_id: int
    answer: str | list[str]  # open text, or the chosen letters of a choice item


def crowd_answers(item_ids) -> list[CrowdAnswerRow]:
    """Answer-only campaigns' answers to these items (ids, or a query of them), for consensus."""
    rows = CrowdAnswer.objects.filter(item_id__in=item_ids).order_by("item_id", "pk")
    return [CrowdAnswerRow(*row) for row in rows.values_list("item_id", "worker_id", "answer")]

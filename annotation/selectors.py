"""What pages read of campaigns and assignments: querysets and small typed results."""

from .models import Campaign


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

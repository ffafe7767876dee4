"""What staff and workers read of a campaign's work: progress by status and per worker, the
payment report at the campaign's rate, and a worker's own earnings (crowd.services does the pay)."""

import statistics

from django.db.models import Count

from benchmarks.models import ContextChange, Item
from crowd import services as crowd_services

from . import services
from .models import Assignment, Campaign


def _campaign_changes(campaign: Campaign):
    return ContextChange.objects.filter(provenance__campaign=campaign.pk)


def _work_by_author(campaign: Campaign, author=None) -> dict:
    """{author: (submitted units, accepted units)}: reviewed kinds count approved changes or items;
    world frames and independent answers have no review stage, so each submission counts. With
    `author`, that author's work only."""
    if campaign.kind in (Campaign.Kind.WORLD_FRAME, Campaign.Kind.ANSWER_ONLY):
        rows = campaign.assignments.filter(status=Assignment.Status.SUBMITTED)
        rows = (rows.filter(worker=author) if author is not None else rows).values_list("worker_id", "status")
        accepted = Assignment.Status.SUBMITTED
    else:
        produced = _campaign_changes(campaign) if campaign.kind == Campaign.Kind.CONTEXT_CHANGE else (
            Item.objects.filter(provenance__campaign=campaign.pk))
        produced = produced.filter(author=author) if author is not None else produced
        rows = produced.values_list("author_id", "status")
        accepted = "approved"
    work = {}
    for author_id, status in rows:
        submitted, approved = work.get(author_id, (0, 0))
        work[author_id] = (submitted + 1, approved + (status == accepted))
    return work


def campaign_progress(campaign: Campaign) -> dict:
    """Assignments by status, produced work by review outcome, and per-worker throughput."""
    services.expire_stale_leases(campaign)
    by_status = dict(campaign.assignments.values_list("status").annotate(n=Count("id")))
    changes = dict(_campaign_changes(campaign).values_list("status").annotate(n=Count("id")))
    items = dict(Item.objects.filter(provenance__campaign=campaign.pk).values_list("status").annotate(n=Count("id")))
    per_description = campaign.descriptions_per_assignment if campaign.kind == Campaign.Kind.CONTEXT_CHANGE else 1
    per_worker = {}
    submitted = campaign.assignments.filter(status=Assignment.Status.SUBMITTED).select_related(
        "worker__crowd_worker"
    )
    for assignment in submitted:
        crowd = getattr(assignment.worker, "crowd_worker", None)
        key = crowd.worker_id if crowd else assignment.worker.username
        seconds = (assignment.submitted_at - assignment.created_at).total_seconds()
        per_worker.setdefault(key, []).append(seconds / per_description)
    return {
        "assignments": {status: by_status.get(status, 0) for status in Assignment.Status.values},
        "descriptions": {status: changes.get(status, 0) for status in ContextChange.Status.values},
        "items": {status: items.get(status, 0) for status in Item.Status.values},
        "workers": [
            {"worker_id": key, "assignments": len(times), "descriptions": len(times) * per_description,
             "median_seconds_per_description": round(statistics.median(times), 1)}
            for key, times in sorted(per_worker.items())
        ],
    }


def payment_report(campaign: Campaign) -> list[dict]:
    """Pay per accepted unit (description, item, frame or answer) at the campaign's rate."""
    return crowd_services.payment_report(_work_by_author(campaign), campaign.pay_cents, campaign.pay_unit)


def worker_earnings(worker) -> list[dict]:
    """A worker's own view of their campaigns: each assignment's status and completion code, and the
    accepted units and amount so far at the campaign's rate (as the payment report counts them)."""
    assignments = (Assignment.objects.filter(worker=worker).select_related("campaign", "scene")
                   .order_by("-created_at"))
    campaigns: dict[int, dict] = {}
    for assignment in assignments:
        campaign = assignment.campaign
        entry = campaigns.setdefault(campaign.pk, {"campaign": campaign, "assignments": []})
        entry["assignments"].append(assignment)
    for entry in campaigns.values():
        campaign = entry["campaign"]
        submitted, accepted = _work_by_author(campaign, worker).get(worker.pk, (0, 0))
        entry.update(submitted_units=submitted, accepted_units=accepted,
                     amount_usd=crowd_services.amount_usd(campaign.pay_cents, campaign.pay_unit, accepted),
                     rate=f"${campaign.pay_cents / 100:.2f} per {campaign.pay_unit} accepted")
    return list(campaigns.values())


def payment_report_csv(campaign: Campaign) -> str:
    return crowd_services.payment_csv(payment_report(campaign))

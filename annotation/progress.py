"""What staff and workers read of a campaign's work: progress by status and per worker, the
payment report at the campaign's rate, and a worker's own earnings (crowd.services does the pay)."""

import statistics

from django.conf import settings
from django.core.cache import cache
from django.db.models import Case, CharField, Count, F, Value, When
from django.utils import timezone

from benchmarks.models import ContextChange, Item
from crowd import services as crowd_services

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


def progress_key(campaign_id: int) -> str:
    return f"annotation:campaign-progress:{campaign_id}"


def forget_progress(campaign_id) -> None:
    """A write to the campaign's assignments, changes or items: its dashboard counts again."""
    if campaign_id:
        cache.delete(progress_key(campaign_id))


def campaign_progress(campaign: Campaign) -> dict:
    """The dashboard's aggregates, cached until a write to the campaign's assignments, changes or items
    (annotation/apps.py connects forget_progress) or CAMPAIGN_PROGRESS_CACHE_S at most (writes by a bulk
    update send no signal). A read only: a lease past its expiry counts as expired without being written
    (beat's sweep writes it, annotation.tasks.expire_stale_leases)."""
    key = progress_key(campaign.pk)
    found = cache.get(key)
    if found is None:
        found = _campaign_progress(campaign)
        cache.set(key, found, settings.CAMPAIGN_PROGRESS_CACHE_S)
    return found


def _campaign_progress(campaign: Campaign) -> dict:
    """Assignments by status, produced work by review outcome, and per-worker throughput."""
    status_now = Case(
        When(status=Assignment.Status.LEASED, lease_expires_at__lt=timezone.now(), then=Value(Assignment.Status.EXPIRED)),
        default=F("status"), output_field=CharField())
    by_status = dict(campaign.assignments.annotate(now=status_now).values_list("now").annotate(n=Count("id")))
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

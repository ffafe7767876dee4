"""What annotation campaigns tell the crowd platforms and hear from them: a campaign described for
Prolific (crowd.prolific_services.Target) and the platform's word that a participant gave the work back
(crowd.signals.participant_left)."""

from django.conf import settings
from django.utils.html import escape

from crowd.prolific_services import Target

from . import progress
from .models import Assignment, Campaign


def release_leases_of(platform: str, worker_id: str, scope: str | None = None, **signal) -> int:
    """The platform says the participant gave the work back: their open leases in the campaign the
    submission entered (`scope`; every campaign when it is unknown) go back to the pool; a submission
    of a study or another campaign frees nothing here."""
    leases = Assignment.objects.filter(
        worker__crowd_worker__platform=platform, worker__crowd_worker__worker_id=worker_id,
        status=Assignment.Status.LEASED,
    )
    if scope is not None:
        room, _, pk = scope.partition(":")
        if room != "campaign" or not pk.isdigit():
            return 0
        leases = leases.filter(campaign_id=int(pk))
    return Assignment.move_all(leases, Assignment.Status.RELEASED)


def prolific_target(campaign_id: int) -> Target | None:
    """One place per assignment the pool offers; the reward is the campaign's pay for one assignment's
    worth of accepted units (more accepted work is paid as a bonus from the payment report)."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return None
    places = campaign.scenes.count() * (campaign.assignments_per_scene or 1)
    reward = round(campaign.pay_cents * campaign.descriptions_per_assignment / max(campaign.pay_unit, 1))

    def use_completion_code(code: str) -> None:
        campaign.completion_url = settings.PROLIFIC_COMPLETION_URL.format(code=code)
        campaign.save(update_fields=["completion_url"])

    return Target(
        name=campaign.name, description=f"<p>{escape(campaign.guidelines[:2000] or campaign.name)}</p>",
        entry_path=f"/crowd/campaigns/{campaign.pk}/", places=max(places, 1), reward_cents=reward,
        minutes=max(5, campaign.lease_minutes // 2), payment_rows=lambda: progress.payment_report(campaign),
        use_completion_code=use_completion_code, return_code=campaign.return_code,
    )

"""#44: a sync never outranks the event it stands for. When Prolific's RETURNED delivery fails, the
sync that learns the status by polling frees the work the delivery would have freed; Prolific's retry
of that delivery, arriving after the participant's next lease, frees nothing (the same status again).
A page answered just before a same-second event does not undo it: polling and webhooks go by one rule."""

import time

import pytest
from django.db.models import F

from annotation import services as annotation_services
from annotation.models import Assignment
from crowd import prolific_services
from crowd.models import PlatformSubmission
from crowd.prolific import ProlificClient
from tests.crowd import test_prolific_client as flow
from tests.crowd.test_prolific_client import enter, published

pytestmark = pytest.mark.django_db
fake, campaign = flow.fake, flow.campaign


def test_a_return_learned_by_sync_frees_the_work_and_the_late_delivery_frees_nothing_more(fake, campaign):
    study_id, _ = published(fake, campaign)
    _, submission = enter(fake, study_id, "PID1")
    lease = Assignment.objects.get()
    fake.set_submission_status(submission, "RETURNED")
    failed, fake.outbox = fake.outbox, []  # the delivery failed: nothing heard

    prolific_services.sync_submissions(f"campaign:{campaign.pk}")

    lease.refresh_from_db()
    assert lease.status == Assignment.Status.RELEASED
    assert PlatformSubmission.objects.get(submission_id=submission).status == "RETURNED"
    again = annotation_services.lease_assignment(campaign, lease.worker)  # the participant's next lease
    fake.outbox = failed
    assert fake.flush() == [200]  # Prolific's retry: acknowledged
    again.refresh_from_db()
    assert again.status == Assignment.Status.LEASED


def test_a_return_heard_first_is_not_freed_again_by_the_sync(fake, campaign):
    study_id, _ = published(fake, campaign)
    _, submission = enter(fake, study_id, "PID1")
    worker = Assignment.objects.get().worker
    fake.set_submission_status(submission, "RETURNED")
    assert fake.flush() == [200]
    assert Assignment.objects.get().status == Assignment.Status.RELEASED
    again = annotation_services.lease_assignment(campaign, worker)
    prolific_services.sync_submissions(f"campaign:{campaign.pk}")
    again.refresh_from_db()
    assert again.status == Assignment.Status.LEASED


class ReturnedWhilePolled(ProlificClient):
    """Prolific answers the page, then, in the same second, the participant returns and the delivery is
    heard before the sync records the page (the page still says ACTIVE)."""

    def __init__(self, fake, submission):
        super().__init__()
        self.fake, self.submission = fake, submission

    def submission_pages(self, study_id, page_size=100):
        for page in super().submission_pages(study_id, page_size):
            self.fake.set_submission_status(self.submission, "RETURNED")
            assert self.fake.flush() == [200]
            yield page


def test_a_page_answered_before_a_same_second_return_does_not_undo_it_or_free_twice(fake, campaign, monkeypatch):
    # One real second for all of it (the old fake's X-Timestamps ran ahead of the clock, so a sync never tied)
    frozen = int(time.time()) + 0.5
    monkeypatch.setattr(time, "time", lambda: frozen)
    study_id, _ = published(fake, campaign)
    _, submission = enter(fake, study_id, "PID1")
    worker = Assignment.objects.get().worker
    scope = f"campaign:{campaign.pk}"

    prolific_services.sync_submissions(scope, client=ReturnedWhilePolled(fake, submission))

    recorded = PlatformSubmission.objects.get(submission_id=submission)
    assert (recorded.status, recorded.status_at) == ("RETURNED", int(frozen))
    assert Assignment.objects.get().status == Assignment.Status.RELEASED
    again = annotation_services.lease_assignment(campaign, worker)  # the participant's next lease
    prolific_services.sync_submissions(scope)  # Prolific says RETURNED: already heard, nothing more to free
    again.refresh_from_db()
    assert again.status == Assignment.Status.LEASED


def test_a_sync_still_records_where_a_submission_entered_when_its_status_is_older(fake, campaign):
    study_id, code = published(fake, campaign)
    _, submission = enter(fake, study_id, "PID1")
    fake.complete(submission, code)
    fake.flush()
    PlatformSubmission.objects.filter(submission_id=submission).update(status_at=F("status_at") + 60, entered_code="")

    prolific_services.sync_submissions(f"campaign:{campaign.pk}")

    recorded = PlatformSubmission.objects.get(submission_id=submission)
    assert (recorded.status, recorded.entered_code, recorded.study_id) == ("AWAITING REVIEW", code, study_id)

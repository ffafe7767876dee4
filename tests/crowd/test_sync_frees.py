"""#44: a sync never outranks the event it stands for. When Prolific's RETURNED delivery fails, the
sync that learns the status by polling frees the work the delivery would have freed; Prolific's retry
of that delivery, arriving after the participant's next lease, frees nothing (the same status again)."""

import pytest

from annotation import services as annotation_services
from annotation.models import Assignment
from crowd import prolific_services
from crowd.models import PlatformSubmission
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

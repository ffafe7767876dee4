"""CloudResearch Connect and MTurk (../shared/CROWD-CONTRACTS.md §5): a Connect link enters with its
participantId and assignmentId and leaves through the campaign's completion URL (the redirect URL
Connect's wizard gives); MTurk is closing, so it is offered only for work made before it closed to new
customers, while its links keep working."""

from datetime import UTC, datetime

import pytest

from annotation import services as annotation_services
from annotation.models import Assignment, Campaign
from core import roles
from crowd.models import CrowdWorker, PlatformSubmission
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

CONNECT_COMPLETE = "https://connect.cloudresearch.com/participant/project/ABC123/complete"
TEXT = "The chair has been moved from the desk to the window next to the bookshelf."


def campaign(**options):
    benchmark = BenchmarkFactory()
    return annotation_services.create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)],
                                               descriptions_per_assignment=1, **options)


def test_a_connect_link_enters_and_its_completion_goes_to_connects_redirect(client):
    target = campaign(completion_url=CONNECT_COMPLETE)
    entry = client.post(f"/crowd/campaigns/{target.pk}/", {"participantId": "CR1", "assignmentId": "AS1",
                                                          "projectId": "P9"})
    assert entry.status_code == 302
    worker = CrowdWorker.objects.get()
    assert (worker.platform, worker.worker_id, worker.session_id) == ("generic", "CR1", "AS1")
    assert PlatformSubmission.objects.get().scope == f"campaign:{target.pk}"
    assignment = Assignment.objects.get()
    submitted = client.post(f"/api/v1/assignments/{assignment.pk}/submit/", {"text": TEXT},
                            content_type="application/json")
    assert submitted.status_code == 201 and submitted.json()["completion_url"] == CONNECT_COMPLETE


def test_mturk_is_offered_only_for_work_made_before_it_closed_to_new_customers(client):
    old, new = campaign(), campaign()
    Campaign.objects.filter(pk=old.pk).update(created_at=datetime(2026, 5, 1, tzinfo=UTC))
    client.force_login(UserFactory(role=roles.ADMIN))
    old_page = client.get(f"/campaigns/{old.pk}/dashboard/").content.decode()
    assert 'data-platform="mturk"' in old_page and "closes for good on 30 September 2026" in old_page
    new_page = client.get(f"/campaigns/{new.pk}/dashboard/").content.decode()
    assert 'data-platform="mturk"' not in new_page and 'data-platform="cloudresearch"' in new_page
    assert "participantId={{%PARTICIPANT_ID%}}&amp;assignmentId={{%ASSIGNMENT_ID%}}" in new_page
    client.logout()
    entered = client.post(f"/crowd/campaigns/{new.pk}/", {"workerId": "MT1", "assignmentId": "A1", "hitId": "H"})
    assert entered.status_code == 302  # an MTurk link already handed out still works

"""#33: a campaign dashboard reads cached counts, forgotten on a write to the campaign's assignments, changes
or items; its GET writes nothing (a lease past its expiry is counted as expired, not written)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import progress, services
from annotation.models import Assignment
from core import roles
from tests.annotation.test_annotation_crowd import make_campaign
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db
WRITES = ("INSERT", "UPDATE", "DELETE")


def test_dashboard_get_writes_nothing_and_counts_a_run_out_lease_as_expired(client):
    campaign = make_campaign(BenchmarkFactory(), scenes=2)
    progress.forget_progress(campaign.pk)  # nothing left in the shared cache by an earlier run
    lease = services.lease_assignment(campaign, UserFactory())
    Assignment.objects.filter(pk=lease.pk).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    client.force_login(UserFactory(role=roles.ADMIN))
    client.get("/accounts/login/")  # the session exists before the GET measured
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/campaigns/{campaign.pk}/dashboard/")
    assert response.status_code == 200
    writes = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)]
    assert writes == []
    assert response.context["progress"]["assignments"]["expired"] == 1
    assert response.context["progress"]["assignments"]["leased"] == 0
    assert Assignment.objects.get(pk=lease.pk).status == Assignment.Status.LEASED  # beat's sweep writes it


def test_counts_are_cached_and_a_write_forgets_them(django_assert_num_queries):
    campaign = make_campaign(BenchmarkFactory(), scenes=2)
    progress.forget_progress(campaign.pk)
    first = progress.campaign_progress(campaign)
    assert first["assignments"]["leased"] == 0
    with django_assert_num_queries(0):  # the second read is the cache's
        assert progress.campaign_progress(campaign) == first
    services.lease_assignment(campaign, UserFactory())  # a write to the campaign's assignments
    assert progress.campaign_progress(campaign)["assignments"]["leased"] == 1


def test_another_campaigns_write_keeps_the_cache(django_assert_num_queries):
    benchmark = BenchmarkFactory()
    campaign, other = make_campaign(benchmark), make_campaign(benchmark)
    progress.forget_progress(campaign.pk)
    progress.campaign_progress(campaign)
    services.lease_assignment(other, UserFactory())
    with django_assert_num_queries(0):
        progress.campaign_progress(campaign)

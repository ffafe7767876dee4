"""The run page's websocket: admins get the run's progress pushed; others are turned away."""

import pytest

from core import roles
from modeleval import services
from tests.factories import ItemFactory, UserFactory
from tests.websockets import connect, messages_around

pytestmark = pytest.mark.django_db(transaction=True)


def test_admin_receives_progress_pushed_by_the_service():
    item = ItemFactory()
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    run.refresh_from_db()
    connected, messages = messages_around(connect(UserFactory(role=roles.ADMIN), f"/ws/runs/{run.pk}/"),
                                          step=lambda: services.publish_progress(run))
    assert connected
    assert messages[0]["run"] == run.pk and messages[0]["total"] == 1
    assert messages[1]["run"] == run.pk


def test_non_admin_is_refused():
    item = ItemFactory()
    run = services.launch_run(services.ensure_baseline_model().pk, item.benchmark, None)
    connected, _ = messages_around(connect(UserFactory(role=roles.ANNOTATOR), f"/ws/runs/{run.pk}/"))
    assert not connected

"""review reacts to annotation through annotation's signals (annotation/signals.py, connected in
review/apps.py), so that annotation imports nothing of review: a submission's new texts are embedded
for near-duplicate search once the submission commits. (An answer-only campaign's answers reaching the
item's consensus: test_crowd_consensus.py.)"""

import pytest

from annotation import services
from benchmarks.models import ContextChange
from review import dispatch
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_submissions_changes_are_embedded_once_it_commits(settings, monkeypatch,
                                                             django_capture_on_commit_callbacks):
    settings.REVIEW_EMBED_ON_ARRIVAL = True
    sent = []
    monkeypatch.setattr(dispatch, "send_embedding", lambda change_ids, item_ids: sent.append((change_ids, item_ids)))
    benchmark = BenchmarkFactory()
    campaign = services.create_campaign(benchmark, "Moves", "movement", [SceneFactory(benchmark=benchmark)])
    worker = UserFactory()
    assignment = services.lease_assignment(campaign, worker)
    with django_capture_on_commit_callbacks(execute=True):
        services.submit_assignment(assignment.pk, worker,
                                   "The chair has been moved from the desk to the window next to the bookshelf.")
        assert sent == []  # not before the submission commits
    change_ids = list(ContextChange.objects.filter(author=worker).values_list("pk", flat=True))
    assert len(change_ids) == 1 and sent == [(change_ids, [])]

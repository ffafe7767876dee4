"""The quiz's attempt limit holds under concurrency (issue #34): two attempts sent at once under a
one-attempt limit store one; the other is refused."""

import threading
import time

import pytest
from django.db import connection

from annotation import services
from annotation.models import QuizAttempt
from core.errors import Forbidden
from tests.factories import SceneFactory, UserFactory

QUIZ = [{"question": "Which description is good?", "choices": ["Move it there.", "The chair moved from A to B."],
         "answer": 1}]


@pytest.mark.django_db(transaction=True)
def test_two_attempts_at_once_under_a_one_attempt_limit_store_one(monkeypatch):
    scene = SceneFactory()
    campaign = services.create_campaign(scene.benchmark, "Moves", "movement", [scene], quiz=QUIZ,
                                        quiz_max_attempts=1)
    worker = UserFactory(role="annotator")
    create = QuizAttempt.objects.create

    def slow_create(**fields):
        time.sleep(0.5)  # both attempts have counted before either is stored, unless they queue
        return create(**fields)

    monkeypatch.setattr(QuizAttempt.objects, "create", slow_create)
    start, outcomes = threading.Barrier(2), []

    def attempt(answer):
        start.wait()
        try:
            services.take_quiz(campaign, worker, [answer])
            outcomes.append("stored")
        except Forbidden:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(answer,)) for answer in (0, 0)]  # both wrong: none passes
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused", "stored"]
    assert QuizAttempt.objects.filter(campaign=campaign, worker=worker).count() == 1

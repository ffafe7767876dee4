"""Bounds on what crowd workers and reviewers type (issue #30): a sentence pasted 700 times earned a
completion code and a 20 KB reject note was kept. Each refusal names its rule."""

import pytest

from annotation.checks import MAX_DESCRIPTION_CHARS, check_description
from annotation.kinds import MAX_CHOICE_CHARS, _choices, submit_answer, submit_question
from core import roles
from core.errors import DomainError
from review.models import ReviewDecision
from review.services import MAX_NOTE_CHARS, reject_change
from tests.factories import ChangeFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db

ONE = "The chair has been moved from the desk to the window."


def refusal(call, *args) -> DomainError:
    with pytest.raises(DomainError) as caught:
        call(*args)
    return caught.value


def test_a_description_over_the_length_bound_is_refused_naming_the_rule():
    scene = SceneFactory()
    check_description(scene, ONE, "movement", 5)  # one sentence passes
    pasted = " ".join([ONE] * 700)
    error = refusal(check_description, scene, pasted, "movement", 5)
    assert error.field == "text" and f"at most {MAX_DESCRIPTION_CHARS} characters" in error.message


@pytest.mark.parametrize("text", [
    f"{ONE} {ONE}",  # one sentence twice, under the length bound
    "The chair has been moved from the desk, moved from the desk, moved from the desk to the window.",
])
def test_a_description_that_repeats_itself_is_refused_naming_the_rule(text):
    assert len(text) <= MAX_DESCRIPTION_CHARS
    error = refusal(check_description, SceneFactory(), text, "movement", 5)
    assert error.field == "text" and "repeats itself" in error.message


def test_questions_answers_and_choices_are_bounded_too():
    assert "at most 300 characters" in refusal(
        lambda: submit_question(None, None, {"question": "Where is the chair now? " + "x" * 400})).message
    repeated = refusal(lambda: submit_question(None, None, {"question": "Where is it? Where is it?"}))
    assert repeated.field == "question" and "repeats itself" in repeated.message
    assert f"at most {MAX_CHOICE_CHARS} characters" in refusal(
        _choices, {"choices": ["left", "y" * (MAX_CHOICE_CHARS + 1)]}, (2,)).message

    class OpenItem:
        choices = []

    class Assignment:
        item = OpenItem()

    long_word = refusal(lambda: submit_answer(Assignment(), None, {"answer": "z" * 5000}))
    assert long_word.field == "answer" and "at most 100 characters" in long_word.message


def test_a_reject_note_is_bounded():
    change = ChangeFactory()
    reviewer = UserFactory(role=roles.REVIEWER)
    error = refusal(reject_change, change.pk, reviewer, change.version, ["clear"], "n" * (MAX_NOTE_CHARS + 1))
    assert error.field == "note" and not ReviewDecision.objects.exists()
    reject_change(change.pk, reviewer, change.version, ["clear"], "Say where it went.")
    assert ReviewDecision.objects.get().note == "Say where it went."

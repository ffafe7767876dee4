"""Filters with the papers' criteria, through an OpenAI-compatible server on loopback: M3-Verse's
vision-free check as the paper words it (the model sees question, options and answer and says
"Filter out" or "Keep"), its difficulty filter (K answers; always right is too easy), and blind
answering kept to 2-option items with repeats and a threshold above chance."""

from types import SimpleNamespace

import pytest

from benchmarks.models import Item
from construction.stages import llm_filter
from core.errors import DomainError
from review.models import ItemDecision
from tests.construction.test_stage_llm_filter import choice_item, language_model
from tests.factories import BenchmarkFactory, ItemFactory

pytestmark = pytest.mark.django_db


def run(benchmark, **params):
    return llm_filter.llm_filter_stage(SimpleNamespace(benchmark=benchmark, params=params, pk=1),
                                       lambda *args: None)


def four_options(benchmark, n, question, answer="A"):
    return ItemFactory(benchmark=benchmark, change=None, scene=None, external_id=f"m{n}", question=question,
                       answer_format="single", choices=["Mug", "Apple", "Laptop", "Book"], answers=[answer],
                       tags={"state_type": "inter-states", "capabilities": ["reasoning"]}, status="draft")


def test_vision_free_keeps_what_the_model_says_needs_the_video_even_when_a_blind_guess_would_be_right(
        chat_servers):
    bench = BenchmarkFactory(family="m3verse")
    needs_video = four_options(bench, 1, "Which object moved to the counter after the change?")
    general = four_options(bench, 2, "Which object is used for typing?", answer="C")
    chat = chat_servers("Keep", "Filter out")
    report = run(bench, filter="vision_free", model=language_model(chat.url).pk)

    # the paper's prompt (Fig. 15): question, options and the answer, and a Keep / Filter out verdict
    assert report["prompt_version"] == "vision_free/v2"
    assert "Your task is to determine whether a question requires visual information" in chat.prompts[0]
    assert "Answer: A. Mug" in chat.prompts[0] and "respond with “Filter out”" in chat.prompts[0]
    assert report["kept"] == 1 and [d["item"] for d in report["dropped"]] == [general.pk]
    needs_video.refresh_from_db()
    assert needs_video.status == Item.Status.DRAFT  # a blind "A" would have been right: kept all the same
    assert Item.objects.get(pk=general.pk).status == Item.Status.REJECTED
    assert ItemDecision.objects.get(item=general).criteria == ["vision_free"]


def test_a_reply_that_is_neither_keep_nor_filter_out_is_undecided(chat_servers):
    bench = BenchmarkFactory(family="m3verse")
    item = four_options(bench, 1, "Which object moved?")
    report = run(bench, filter="vision_free", model=language_model(chat_servers("Maybe.").url).pk)
    assert report["undecided"] == [{"item": item.pk, "id": "m1", "reply": "Maybe."}] and not report["dropped"]


def test_the_difficulty_filter_drops_an_item_the_light_model_always_gets_right(chat_servers):
    bench = BenchmarkFactory(family="m3verse")
    easy = four_options(bench, 1, "Which object is on the table?")
    hard = four_options(bench, 2, "Which object moved farthest?")
    chat = chat_servers("A", "A", "A", "A", "B", "A")  # easy: 3 of 3 right; hard: 2 of 3
    model = language_model(chat.url)
    report = run(bench, filter="difficulty", model=model.pk, repeats=3)
    assert len(chat.prompts) == 6 and "Return ONLY the letter(s)" in chat.prompts[0]
    assert report["answers"] == 6 and report["kept"] == 1
    assert report["dropped"] == [{"item": easy.pk, "id": "m1", "reason": "too easy: answered right 3 of 3 times"}]
    assert Item.objects.get(pk=hard.pk).status == Item.Status.DRAFT
    again = run(bench, filter="difficulty", model=model.pk, repeats=3)
    assert again["asked"] == 0 and len(chat.prompts) == 6  # judged: not asked twice


def test_blind_answering_judges_two_option_items_over_repeats_above_chance(chat_servers):
    bench = BenchmarkFactory(family="3dsrbench")
    lucky = choice_item(bench, 1, "Which cup is closer to the camera?", "A", status="draft")
    guessable = choice_item(bench, 2, "Which cup holds the coffee?", "B", status="draft")
    four = ItemFactory(benchmark=bench, change=None, scene=None, external_id="q3", question="Which one?",
                       answer_format="single", choices=["a", "b", "c", "d"], answers=["A"],
                       tags={"subtype": "location_next_to"}, status="draft")
    chat = chat_servers("A", "B", "B", "A", "B", "B", "B", "B", "B", "B")
    report = run(bench, filter="blind_answer", model=language_model(chat.url).pk, repeats=5, threshold=0.8)
    assert [d["item"] for d in report["dropped"]] == [guessable.pk]  # 5 of 5 right; the lucky one 2 of 5
    assert report["skipped"] == [{"item": four.pk, "id": "q3", "reason": "blind answering judges 2-option items only"}]
    assert Item.objects.get(pk=lucky.pk).status == Item.Status.DRAFT
    with pytest.raises(DomainError) as error:
        llm_filter.checked_params({"filter": "blind_answer", "model": 1, "threshold": 0.5})
    assert error.value.field == "threshold"

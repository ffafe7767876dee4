"""Showing the options in another order, with the answer's letter moved with them, never changes a score."""

from hypothesis import given
from hypothesis import strategies as st

from scoring import score

TEXTS = ["left", "right", "above", "below", "No correct option is listed.", "Not sure", "the red mug", "yes"]
LETTERS = "ABCDEFGH"

OUTPUTS = {
    "3dsrbench": ["{0}", "({0})", "The answer is {0}.", "I pick {0}"],
    "causalspatial": ["{{'Reasoning': 'r', 'Answer': '({0})'}}", "Answer: {0}", '{{"Answer": "{0}. text"}}'],
    "m3verse": ["{0}", "{0}, {1}", "The answer is {0} and {1}", "({0})"],
}


@st.composite
def shown_twice(draw):
    family = draw(st.sampled_from(sorted(OUTPUTS)))
    n = draw(st.integers(2, 4 if family == "3dsrbench" else 6))
    choices = draw(st.permutations(TEXTS))[:n]
    answer = draw(st.integers(0, n - 1))
    gold = {
        "id": "q1",
        "answer_format": "single",
        "question": "?",
        "choices": choices,
        "answer": LETTERS[answer],
    }
    if family == "causalspatial":
        gold["not_sure"] = LETTERS[draw(st.integers(0, n - 1))]
    if family == "m3verse" and draw(st.booleans()):
        gold["answer_format"] = "multi"
        gold["answer"] = sorted(draw(st.sets(st.sampled_from(LETTERS[:n]), min_size=1)))
    picked = [draw(st.integers(0, n - 1)) for _ in range(2)]
    template = draw(st.sampled_from(OUTPUTS[family]))
    order = draw(st.permutations(range(n)))  # shown[i] = choices[order[i]]
    shown_letter = {canonical: LETTERS[i] for i, canonical in enumerate(order)}
    canonical_output = template.format(*(LETTERS[p] for p in picked))
    shown_output = template.format(*(shown_letter[p] for p in picked))
    return family, gold, canonical_output, shown_output, [choices[i] for i in order]


@given(shown_twice())
def test_a_permutation_of_choices_with_the_letter_permuted_accordingly_never_changes_a_score(case):
    family, gold, canonical_output, shown_output, shown = case
    as_gold = score(family, [gold], [{"id": "q1", "output": canonical_output}])
    as_shown = score(family, [gold], [{"id": "q1", "output": shown_output, "choices": shown}])
    assert as_shown["overall"] == as_gold["overall"]
    assert as_shown["errors"] == as_gold["errors"] == []

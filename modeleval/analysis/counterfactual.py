"""Hypo3D Tables 3-4 on the platform: a run whose prompt shows no context change (Fig. 13, the "w/o
change" condition) is scored against each item's answer on the unchanged scene
(benchmarks.counterfactual), and each such run is paired with the same model's run asked with the
change, in the same setting otherwise, for the table of accuracy with and without the change, the drop
and the flip rate on irrelevant changes (scoring.counterfactual)."""

from benchmarks.counterfactual import EFFECT_TAG, unchanged_reference
from scoring.counterfactual import PairedItem, counterfactual_scores

from ..models import Run
from .labels import main_value, run_label, run_setting

FAMILY = "hypo3d"


def shows_no_change(run: Run) -> bool:
    """A Hypo3D run whose prompt leaves the context change out (Fig. 13)."""
    template = run.prompt_template
    return run.benchmark.family == FAMILY and template is not None and "{change}" not in template.text


def scored_gold(run: Run, gold: list[dict], items: dict) -> list[dict]:
    """The run's gold lines, each answer the unchanged-scene one when the run shows no change."""
    if not shows_no_change(run):
        return gold
    by_id = {item.scoring_id: item for item in items.values()}
    return [{**line, "answer": unchanged_reference(by_id[line["id"]])} if line["id"] in by_id else line
            for line in gold]


def _outputs(run: Run) -> dict[int, str]:
    """Item -> output of the first repeat (an inference error: no output)."""
    return dict(run.predictions.filter(repeat=0, variant="", error="").values_list("item_id", "output"))


def _partner(run: Run, candidates: list[Run]) -> Run | None:
    """The same model's run asked with the change in this run's setting (the condition aside): the
    one with the main condition first, then the latest."""
    wanted = {k: v for k, v in run_setting(run).items() if k != "condition"}
    same = [other for other in candidates if other.model_id == run.model_id and not shows_no_change(other)
            and {k: v for k, v in run_setting(other).items() if k != "condition"} == wanted]
    return max(same, key=lambda other: (run_setting(other)["condition"] == main_value(other, "condition"),
                                        other.pk), default=None)


def counterfactual_tables(runs: list[Run]) -> list[dict]:
    """One row per "w/o change" run of finished Hypo3D runs with a partner: the groups of its
    counterfactual items (tag change_effect) scored with and without the change."""
    finished = [run for run in runs if run.status == Run.Status.FINISHED and run.benchmark.family == FAMILY]
    rows = []
    for run in finished:
        if not shows_no_change(run):
            continue
        partner = _partner(run, finished)
        if partner is None:
            continue
        before, after = _outputs(run), _outputs(partner)
        items = run.items.filter(**{f"tags__{EFFECT_TAG}__isnull": False}).order_by("pk")
        paired = [PairedItem(effect=item.tags[EFFECT_TAG], answers=tuple(item.answers),
                             unchanged_answers=tuple(unchanged_reference(item)),
                             with_change=after.get(item.pk), without_change=before.get(item.pk))
                  for item in items]
        scores = counterfactual_scores(paired)
        if scores:
            rows.append({"model": run.model.name, "without_change": {"run": run.pk, "name": run_label(run)},
                         "with_change": {"run": partner.pk, "name": run_label(partner)}, **scores})
    if not rows:
        return []
    return [{"key": "counterfactual", "title": "With and without the context change (Hypo3D Tables 3-4): EM on "
             "the unchanged and the changed scene, the drop, and answers that flip on an irrelevant change",
             "metrics": ["EM_without_change", "EM_with_change", "drop", "answer_changed", "flip_rate"],
             "rows": rows}]

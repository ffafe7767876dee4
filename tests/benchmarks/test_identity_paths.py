"""The benchmark's own ids on the paths around the scorer: a release of imported 3DSRBench rotations
scores circular and flip from their ids; a run over imported rotations does not rotate them again;
Spatial457 predictions keyed by a bare question_index find their item when one level holds it."""

import json

import pytest
from django.core.management import CommandError

from benchmarks.models import Item
from benchmarks.releases.life import export_release
from benchmarks.services import gold_row
from modeleval import services
from tests.factories import UserFactory
from tests.modeleval.test_recorded_outputs import (
    SPATIAL457,
    SPATIAL457_OUTPUTS,
    SRBENCH_COLUMNS,
    SRBENCH_OUTPUTS,
    command,
    imported,
    recorded,
    scoring_cli,
    srbench_rows,
)


def srbench_benchmark(tmp_path, slug):
    rows = srbench_rows()
    tsv = "\t".join(SRBENCH_COLUMNS) + "\n" + "".join("\t".join(row) + "\n" for row in rows)
    return imported(tmp_path, slug, "3dsrbench", "3DSRBench.tsv", tsv)


@recorded
def test_a_release_of_imported_rotations_scores_circular_and_flip_from_their_ids(tmp_path):
    benchmark = srbench_benchmark(tmp_path, "srbench-release")
    release = export_release(benchmark, "1.0.0", UserFactory(), inline=True)
    lines = [{"id": qid, "output": output} for qid, output in SRBENCH_OUTPUTS.items()]
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    gold = [gold_row(item) for item in release.items.order_by("pk")]
    code, expected = scoring_cli(tmp_path, "3dsrbench", gold, lines, "--by", "category")
    assert code == 0
    printed = command("score_predictions", "--release", f"{benchmark.slug}@1.0.0", "--pred", str(path),
                      "--by", "category")
    assert printed == expected
    overall = json.loads(printed)["overall"]
    assert overall["circular"] != overall["vanilla"] and overall["flip"] != overall["vanilla"]
    assert json.loads(printed)["by"]


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", [{"circular": True}, {"flip": True}])
def test_a_run_does_not_rotate_or_mirror_items_stored_with_their_rotations_again(tmp_path, protocol):
    """#45: the stored rows are the protocol's variants: asked as they are, never rotated or mirrored again."""
    benchmark = srbench_benchmark(tmp_path, "srbench-norotate")
    baseline = services.ensure_baseline_model()
    if protocol.get("flip"):
        baseline.modality = "image"
        baseline.save()
    run = services.launch_run(baseline.pk, benchmark, None, protocol=protocol)
    ids = list(run.items.values_list("external_id", flat=True))
    assert run.total == len(ids) and len(set(ids)) == len(ids)  # one prediction per stored row, no variant made
    if protocol.get("circular"):
        assert not any("-flip" in qid for qid in ids)  # the rotations, without the mirrored rows
    else:
        assert not any(qid[-2] == "-" and qid[-1].isdigit() for qid in ids)  # the mirrored rows, no rotations


@recorded
def test_spatial457_predictions_keyed_by_a_bare_question_index(tmp_path):
    benchmark = imported(tmp_path, "spatial-qi", "spatial457", "L2_objects.json", json.dumps(SPATIAL457))
    items = list(Item.objects.filter(benchmark=benchmark).order_by("pk"))
    bare = [{"id": item.tags["question_index"], "output": output}
            for item, output in zip(items, SPATIAL457_OUTPUTS, strict=True)]
    path = tmp_path / "bare.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in bare))
    keyed = [{"id": item.external_id, "output": output} for item, output in zip(items, SPATIAL457_OUTPUTS,
                                                                                strict=True)]
    code, expected = scoring_cli(tmp_path, "spatial457", [gold_row(i) for i in items], keyed)
    assert code == 0
    assert command("score_predictions", "--benchmark", benchmark.slug, "--pred", str(path)) == expected

    # a second level numbers its questions from 0 too: a bare index is then ambiguous, and named
    other = tmp_path / "L1_single.json"
    other.write_text(json.dumps({**SPATIAL457, "split": "L1_single"}))
    command("import_items", "--benchmark", benchmark.slug, str(other))
    with pytest.raises(CommandError):
        command("score_predictions", "--benchmark", benchmark.slug, "--pred", str(path))

"""A release written in its family's published shape comes back whole: export_release -> import_items of
that file into a new benchmark gives the same items, ids, answers, tags, scenes and images, and the
official scorer (`python -m scoring`) gives the same result on the copy's gold as on the release's."""

import io
import json

import pytest
from django.core.management import call_command

from benchmarks.models import AssetRole, Item, Release
from benchmarks.services import gold_row
from core import roles
from scoring.__main__ import main as scoring_main
from tests.benchmarks.test_import_published import (
    CAUSAL,
    CAUSAL_REAL,
    HYPO3D,
    M3VERSE,
    RED,
    SPATIAL457_L1,
    SPATIAL457_L2,
    SR_COLUMNS,
    b64,
    run,
    srbench_rows,
    tsv,
)
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def import_into(bench, tmp_path, name, content, *flags):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    lines, error = run("import_items", "--benchmark", bench.slug, *flags, str(path))
    assert error is None, lines
    return lines[0]


def hypo3d_benchmark(tmp_path):
    bench = BenchmarkFactory(family="hypo3d")
    import_into(bench, tmp_path, "hypo3d.json", json.dumps(HYPO3D), "--create-missing-scenes")
    # an item written on the platform (no benchmark id: its release id becomes its question_id)
    change = ChangeFactory(scene=bench.scenes.get(external_id="scene0000_00"), status="approved",
                           raw_text="The desk has been moved to the door.", refined_text="The desk now stands by the door.")
    ItemFactory(change=change, question="What is left of the desk now?", answers=["the door"],
                tags={"change_type": "movement", "question_type": ["Direction", "Semantic"]})
    return bench


def srbench_benchmark(tmp_path):
    bench = BenchmarkFactory(family="3dsrbench")
    rows = [[*row[:11], "uncommon" if row[1].startswith("QWERTY") else ""] for row in srbench_rows()]
    import_into(bench, tmp_path, "real.tsv", tsv([*SR_COLUMNS[:11], "viewpoint"], rows))
    return bench


def causal_benchmark(tmp_path):
    bench = BenchmarkFactory(family="causalspatial")
    import_into(bench, tmp_path, "causal.jsonl", "\n".join(json.dumps(r) for r in CAUSAL))
    real = [*CAUSAL_REAL, {"id": "real_1", "type": "occlusion", "question": "Is the box hidden behind the car?",
                           "options": ["Yes", "No", "Not sure"], "answer": "Yes", "not_sure": "Not sure"}]
    import_into(bench, tmp_path, "real_world.json", json.dumps(real))
    return bench


def spatial457_benchmark(tmp_path):
    bench = BenchmarkFactory(family="spatial457")
    import_into(bench, tmp_path, "L1_single.json", json.dumps(SPATIAL457_L1), "--create-missing-scenes")
    import_into(bench, tmp_path, "L2_objects.json", json.dumps(SPATIAL457_L2), "--create-missing-scenes")
    rows = [[0, "What is the colour of the bus?", "red", "L1_single", b64(RED)],
            [1, "How many buses are there?", "2", "L2_objects", "0"]]
    import_into(bench, tmp_path, "Spatial457.tsv", tsv(["index", "question", "answer", "category", "image"], rows))
    return bench


def m3verse_benchmark(tmp_path):
    bench = BenchmarkFactory(family="m3verse")
    import_into(bench, tmp_path, "m3verse.jsonl", "\n".join(json.dumps(r) for r in M3VERSE), "--create-missing-scenes")
    return bench


FAMILIES = {
    "hypo3d": (hypo3d_benchmark, "hypo3d.json"),
    "3dsrbench": (srbench_benchmark, "3dsrbench.tsv"),
    "causalspatial": (causal_benchmark, "causalspatial.json"),
    "spatial457": (spatial457_benchmark, "spatial457.tsv"),
    "m3verse": (m3verse_benchmark, "m3verse.jsonl"),
}


def snapshot(items) -> dict:
    """What a round trip must keep, by scoring id (the benchmark's own id, else the release id)."""
    return {
        item.scoring_id: {
            "question": item.question, "answer_format": item.answer_format, "choices": item.choices,
            "answers": item.answers, "tags": item.tags, "scene": item.scene.external_id if item.scene else None,
            "change": item.change.text if item.change else None,
            "change_type": item.change.change_type if item.change else None,
        }
        for item in items
    }


def images_by_scene(bench) -> dict:
    found = {}
    for scene in bench.scenes.all():
        for asset in scene.assets.filter(role__in=[AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED]):
            with asset.file.open("rb") as handle:
                found[(scene.external_id, asset.role)] = handle.read()
    return found


def score(family, gold_rows, tmp_path, capsys, name) -> dict:
    """`python -m scoring` on these gold rows, against predictions that get every other item right."""
    gold, pred = tmp_path / f"{name}-gold.jsonl", tmp_path / f"{name}-pred.jsonl"
    gold.write_text("".join(json.dumps(row) + "\n" for row in gold_rows))
    predictions = []
    for k, row in enumerate(sorted(gold_rows, key=lambda r: r["id"])):
        right = row["answer"] if isinstance(row["answer"], str) else ",".join(row["answer"])
        predictions.append({"id": row["id"], "output": right if k % 2 == 0 else "nothing of the kind"})
    pred.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    capsys.readouterr()
    assert scoring_main(["--family", family, "--gold", str(gold), "--pred", str(pred), "--no-sbert"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_published_shape_imports_back_to_the_same_items_and_score(family, tmp_path, capsys):
    build, file_name = FAMILIES[family]
    original = build(tmp_path)
    call_command("export_release", original.slug, "1.0.0", out=str(tmp_path / "release"))
    release = Release.objects.get(benchmark=original)
    assert "not_written" not in release.card
    published = tmp_path / "release" / file_name
    assert published.is_file()

    copy = BenchmarkFactory(family=family, slug=f"{original.slug}-copy")
    line = import_into(copy, tmp_path / "release", file_name, published.read_bytes(), "--create-missing-scenes")
    released = list(release.items.select_related("scene", "change"))
    assert line["created"] == len(released)
    copies = list(Item.objects.filter(benchmark=copy).select_related("scene", "change"))
    assert snapshot(copies) == snapshot(released)
    assert images_by_scene(copy) == images_by_scene(original)
    # the official scorer reads the copy's gold as it reads the release's
    assert (score(family, [gold_row(i) for i in copies], tmp_path, capsys, "copy")
            == score(family, [gold_row(i) for i in released], tmp_path, capsys, "release"))


def test_hypo3d_file_is_scene_keyed_with_changes_and_their_questions(tmp_path):
    bench = hypo3d_benchmark(tmp_path)
    call_command("export_release", bench.slug, "1.0.0", out=str(tmp_path))
    shape = json.loads((tmp_path / "hypo3d.json").read_text())
    assert set(shape) == {"scene0000_00", "0cac7578-8d6f-2d13-8c2d-bfa7a04f8af3"}
    guitar, lamp, desk = shape["scene0000_00"]
    assert guitar["context_change"] == HYPO3D["scene0000_00"][0]["context_change"]
    # the published words: metric_compute.py takes the second word
    assert guitar["change_type"] == "Object Movement" and lamp["change_type"] == "Object Removal"
    assert guitar["questions_answers"][0] == {"question_id": "00042", "question_type": "Direction Semantic",
                                              "question": "What item is directly in front of the guitar now?",
                                              "answer": "coffee table"}
    authored = Item.objects.get(benchmark=bench, external_id="")
    assert desk["context_change"] == "The desk now stands by the door."
    assert desk["questions_answers"][0]["question_id"] == str(authored.pk)


def test_3dsrbench_tsv_writes_each_image_once_and_flip_rows_on_the_mirrored_one(tmp_path):
    bench = srbench_benchmark(tmp_path)
    call_command("export_release", bench.slug, "1.0.0", out=str(tmp_path))
    header, *rows = [line.split("\t") for line in (tmp_path / "3dsrbench.tsv").read_text().splitlines()]
    assert header[:9] == ["index", "qid", "question", "A", "B", "C", "D", "answer", "category"]
    by_qid = {row[1]: dict(zip(header, row, strict=True)) for row in rows}
    assert by_qid["VIN6MS3J"]["index"] == "0" and by_qid["VIN6MS3J"]["image"] == b64(RED)
    assert by_qid["VIN6MS3J-1"]["image"] == "0"  # VLMEvalKit's reference to the row holding the image
    assert by_qid["VIN6MS3J-flip"]["image"] not in ("", "0", b64(RED))  # the mirrored twin, in full
    assert by_qid["VIN6MS3J-flip-1"]["image"] == by_qid["VIN6MS3J-flip"]["index"]
    assert by_qid["QWERTY12"]["C"] == "" and by_qid["QWERTY12"]["viewpoint"] == "uncommon"
    # The VLMEvalKit TSV of these two families is the published one.
    assert (tmp_path / "vlmevalkit.tsv").read_bytes() == (tmp_path / "3dsrbench.tsv").read_bytes()


def test_an_item_the_shape_cannot_hold_is_named_on_the_card_and_the_rest_is_written(tmp_path, client):
    bench = BenchmarkFactory(family="3dsrbench")
    ItemFactory(change__scene__benchmark=bench, answer_format="single", choices=["left", "right"], answers=["A"],
                tags={}, question="Is the cup left or right of the lamp?")
    out, err = tmp_path / "out", io.StringIO()
    call_command("export_release", bench.slug, "1.0.0", out=str(out), stderr=err)
    release = Release.objects.get(benchmark=bench)
    assert "subtype" in release.card["not_written"]["published"] and release.status == "ready"
    assert "published not written: Item " in err.getvalue()
    assert (out / "items.jsonl").is_file() and not (out / "3dsrbench.tsv").exists()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/releases/{release.pk}/").content.decode()
    assert "published not written: Item " in page and ">lmms-eval</a>" in page


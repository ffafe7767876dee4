"""A run says what it is: every model row of the results API carries its label (model x condition x
visual input x subset x differing settings), the best is chosen among comparable rows only, and runs
of one model that differ on one axis make an ablation table with the difference from the main one."""

import pytest

from core import roles
from modeleval import services
from modeleval.models import ModelSpec
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_condition_and_subset_rows_are_told_apart_and_ranked_among_their_own(client, chat_servers,
                                                                              django_capture_on_commit_callbacks):
    first = ItemFactory(tags={"change_type": "movement", "question_type": ["Direction", "Scale"]})
    benchmark = first.benchmark
    ItemFactory(change__scene__benchmark=benchmark, tags={"change_type": "removal", "question_type": ["Semantic"]})
    right = chat_servers(reply="window")  # the gold answer
    wrong = chat_servers(reply="sofa")
    models = [ModelSpec.objects.create(name=name, adapter="openai_compatible", modality="caption_only",
                                       config={"endpoint": endpoint.url, "model": name, "max_retries": 0})
              for name, endpoint in (("Right", right), ("Wrong", wrong))]
    direction = {"question_type": ["Direction"]}
    launches = [(models[0], "main", {}, {}), (models[1], "main", {}, {}), (models[0], "main", direction, {}),
                (models[0], "no-world-frame", direction, {}), (models[0], "main", {}, {"temperature": 0.7})]
    runs = []
    for model, condition, subset, settings in launches:
        with django_capture_on_commit_callbacks(execute=True):
            runs.append(services.launch_run(model.pk, benchmark, None, condition=condition, subset=subset,
                                            settings=settings))
    assert runs[2].items.count() == 1  # the list-valued tag selects its item

    client.force_login(UserFactory(role=roles.REVIEWER))
    data = client.get(f"/api/v1/benchmarks/{benchmark.slug}/results/").json()
    rows = {row["run"]: row for row in data["rows"] if row["kind"] == "model"}
    # the main condition and the model's own visual input go without saying; the rest as they differ (#46)
    assert rows[runs[0].pk]["name"] == f"Right (run {runs[0].pk})"
    assert rows[runs[2].pk]["name"] == f"Right · question_type=Direction (run {runs[2].pk})"
    assert rows[runs[3].pk]["name"] == f"Right · no-world-frame · question_type=Direction (run {runs[3].pk})"
    assert rows[runs[4].pk]["name"] == f"Right · temperature=0.7 (run {runs[4].pk})"
    assert len({row["name"] for row in rows.values()}) == 5
    assert rows[runs[3].pk]["setting"]["condition"] == "no-world-frame"

    main = data["tables"][0]
    best = {row["name"]: row["cells"][0][0]["best"] for row in main["rows"] if row["kind"] == "model"}
    # Right beats Wrong on the main setting; the rows of other settings have no rival of their own
    assert best[rows[runs[0].pk]["name"]] is True and best[rows[runs[1].pk]["name"]] is False
    assert not any(best[rows[run.pk]["name"]] for run in runs[2:])

    condition = next(table for table in data["ablations"] if table["axis"] == "condition")
    assert condition["fixed"] == {"subset": "question_type=Direction"}
    assert [(row["run"], row["value"], row["main"]) for row in condition["rows"]] == [
        (runs[2].pk, "main", True), (runs[3].pk, "no-world-frame", False)]
    em = condition["metrics"][0]
    assert condition["rows"][0]["difference"][em] == 0.0
    assert condition["rows"][1]["difference"][em] == round(
        condition["rows"][1]["overall"][em] - condition["rows"][0]["overall"][em], 2)
    settings = next(table for table in data["ablations"] if table["axis"] == "settings")
    assert [row["value"] for row in settings["rows"]] == ["defaults", "temperature=0.7"]

"""The item analysis page for reviewers (#31): per item, difficulty for humans and models, discrimination
and flags from every scored answer; filtered by flag, paged; a flagged approved item goes back to the
review queue (review.services.send_to_rereview). Random baselines are shown apart, never as models (#46)."""

import pytest

from benchmarks.models import Item
from core import roles
from modeleval import services as modeleval_services
from modeleval.models import ModelSpec, Prediction, Run
from modeleval.runs import run_scoring
from results.item_analysis import benchmark_item_analysis
from review import services as review_services
from tests.factories import UserFactory
from tests.results.test_human_row_comparisons import bench_and_run, human_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def analysed():
    # the model is right on q0..q3, wrong on q4, q5; two participants right on q0, q1 and q4 (q4: humans >> models)
    bench, items, run = bench_and_run(n_items=6, right=range(4))
    Run.objects.filter(pk=run.pk).update(model=ModelSpec.objects.create(name="Qwen2-VL", adapter="openai_compatible"))
    Item.objects.filter(pk__in=[item.pk for item in items]).update(status=Item.Status.APPROVED)
    human_study(bench, items, [{0, 1, 4}, {0, 1, 4}])
    return bench, {item.external_id: item for item in items}


def test_the_analysis_flags_items_from_human_and_model_answers(analysed):
    bench, items = analysed
    entries = {entry["id"]: entry for entry in benchmark_item_analysis(bench, "")["entries"]}
    assert entries["q0"]["flags"] == ["all_right"] and entries["q0"]["n_human"] == 2 and entries["q0"]["n_model"] == 1
    assert entries["q5"]["flags"] == ["none_right"]
    assert entries["q4"]["flags"] == ["humans_over_models"] and entries["q4"]["human_difficulty"] == 1.0
    assert entries["q2"]["flags"] == ["models_over_humans"] and entries["q2"]["item"] == items["q2"]
    flagged = benchmark_item_analysis(bench, "any")["entries"]
    assert {entry["id"] for entry in flagged} == {"q0", "q1", "q2", "q3", "q4", "q5"}
    assert [entry["id"] for entry in benchmark_item_analysis(bench, "none_right")["entries"]] == ["q5"]


def test_random_baselines_are_shown_apart_and_flag_nothing(client, analysed):
    bench, items = analysed
    # a random guesser wrong on every item: as a model it would flag q0, q1 "humans >> models" and unflag q0's
    # "all right"; as the baseline it is, it changes no flag
    baseline = Run.objects.create(model=modeleval_services.ensure_baseline_model(), benchmark=bench, total=6,
                                  status=Run.Status.SCORING)
    baseline.items.set(items.values())
    Prediction.objects.bulk_create(Prediction(run=baseline, item=item, output="door") for item in items.values())
    run_scoring.score_run(baseline.pk)
    entries = {entry["id"]: entry for entry in benchmark_item_analysis(bench, "")["entries"]}
    assert entries["q0"]["flags"] == ["all_right"] and entries["q1"]["flags"] == ["all_right"]
    assert entries["q0"]["n_model"] == 1 and entries["q0"]["model_difficulty"] == 1.0
    assert entries["q0"]["n_baseline"] == 1 and entries["q0"]["baseline_difficulty"] == 0.0
    assert benchmark_item_analysis(bench, "humans_over_models")["counts"]["humans_over_models"] == 1  # q4 only
    client.force_login(UserFactory(role=roles.REVIEWER))
    page = client.get(f"/review/item-analysis/{bench.slug}/", {"flag": ""}).content.decode()
    assert "<th>Baselines</th>" in page and "not models" in page


def test_reviewers_walk_the_flagged_items_and_send_one_back_to_review(client, analysed):
    bench, items = analysed
    url = f"/review/item-analysis/{bench.slug}/"
    client.force_login(UserFactory(role=roles.EVALUATOR))
    assert client.get(url).status_code == 403
    reviewer = UserFactory(role=roles.REVIEWER)
    client.force_login(reviewer)
    page = client.get(url, {"flag": "humans_over_models"}).content.decode()
    assert 'id="item-analysis-table"' in page and "humans ≫ models" in page and "q4" in page and ">q5<" not in page
    assert f'id="rereview-{items["q4"].pk}"' in page
    assert client.get(url, {"flag": "nope"}).status_code == 400
    assert f"/review/item-analysis/{bench.slug}/" in client.get("/").content.decode()  # from the reviewer's home

    sent = client.post(f"{url}{items['q4'].pk}/rereview/", {"flags": ["humans_over_models"], "filter": "any",
                                                            "page": "1"})
    assert sent.status_code == 302 and sent["Location"].startswith(f"{url}?flag=any&page=1")
    item = Item.objects.get(pk=items["q4"].pk)
    assert item.status == Item.Status.DRAFT
    assert item.provenance["rereview"][0]["flags"] == ["humans_over_models"]
    assert item.provenance["rereview"][0]["by"] == reviewer.username
    assert item in review_services.filtering_queue(UserFactory(role=roles.REVIEWER))
    assert "in the review queue" in client.get(url, {"flag": "any"}).content.decode()
    # a draft is already in the queue; a flag must be named
    again = client.post(f"{url}{items['q4'].pk}/rereview/", {"flags": ["humans_over_models"]})
    assert again.status_code == 400 and "approved" in again.content.decode()
    assert client.post(f"{url}{items['q0'].pk}/rereview/", {"flags": ["bogus"]}).status_code == 400
    assert Item.objects.get(pk=items["q0"].pk).status == Item.Status.APPROVED


def test_the_page_pages_its_items(client, analysed, monkeypatch):
    from frontend.pages import item_analysis

    bench, _ = analysed
    monkeypatch.setattr(item_analysis, "PER_PAGE", 4)
    client.force_login(UserFactory(role=roles.REVIEWER))
    first = client.get(f"/review/item-analysis/{bench.slug}/", {"flag": ""}).content.decode()
    assert "page 1 of 2" in first and first.count('id="analysis-') == 4
    second = client.get(f"/review/item-analysis/{bench.slug}/", {"flag": "", "page": "2"}).content.decode()
    assert second.count('id="analysis-') == 2

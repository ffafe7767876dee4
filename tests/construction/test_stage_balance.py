"""The balance stage (3DSRBench): per-type quotas keep a seeded sample that evens the answers and
reject the rest with the reason; complementary items ("higher" -> "lower", the answer flips) are
added beside the originals, as drafts for review, until each type's two-way answers are even; the
report shows the distribution before and after; a second run changes nothing."""

from types import SimpleNamespace

import pytest

from benchmarks.models import Item
from benchmarks.releases.life import releasable_items
from construction import pipeline
from construction.stages import balance
from construction.stages.balance import balance_stage, complementary
from core import roles
from core.errors import DomainError
from core.models import Job
from review.models import ItemDecision, ItemRevision
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


def srbench_item(benchmark, n, subtype, question, answer, choices=("yes", "no")):
    return ItemFactory(benchmark=benchmark, change=None, scene=None, external_id=f"q{n:07d}", question=question,
                       answer_format="single", choices=list(choices), answers=[answer],
                       tags={"category": subtype.split("_")[0], "subtype": subtype})


def stage(benchmark, **params):
    return SimpleNamespace(benchmark=benchmark, params=params, pk=7)


def run(stage_):
    reported = []
    report = balance_stage(stage_, lambda done, total, message: reported.append((done, total, message)))
    assert reported and reported[-1][0] == reported[-1][1]  # progress ends at its total
    return report


@pytest.fixture
def benchmark():
    """height: five yes to one no, every question rewritable; above: even; next_to: three yes and no
    rule to turn them; one four-option item."""
    bench = BenchmarkFactory(family="3dsrbench")
    for n in range(5):
        srbench_item(bench, n, "height_higher", f"Is the lamp {n} higher than the table?", "A")
    srbench_item(bench, 5, "height_higher", "Is the cup higher than the shelf?", "B")
    for n, answer in zip(range(6, 10), "ABAB", strict=True):
        srbench_item(bench, n, "location_above", f"Is the clock {n} above the door?", answer)
    for n in range(10, 13):
        srbench_item(bench, n, "location_next_to", f"Is the chair {n} next to the desk?", "A")
    srbench_item(bench, 13, "orientation_viewpoint", "From where is the car seen?", "C",
                 choices=("front", "back", "left", "right"))
    return bench


def test_complementary_questions_swap_one_relation_and_keep_its_case():
    assert complementary("Is the lamp higher than the table?") == ("Is the lamp lower than the table?",
                                                                  "higher -> lower")
    assert complementary("Which is closer to the camera, the car or the bike?") == (
        "Which is farther from the camera, the car or the bike?", "closer to -> farther from")
    assert complementary("Closer: the car or the bike?")[0] == "Farther: the car or the bike?"
    assert complementary("Is the dog in front of the car?") == ("Is the dog behind the car?", "in front of -> behind")
    assert complementary("Is the mug behind the laptop?")[0] == "Is the mug in front of the laptop?"
    assert complementary("Is the bike left of the tree, seen from the right?") is None  # two relations
    assert complementary("Is the cup on the table?") is None
    assert complementary("Is it brighter than usual?") is None  # "right" only as a whole word


def test_complementary_items_are_added_beside_the_originals_until_the_answers_are_even(benchmark):
    report = run(stage(benchmark, by="subtype"))

    assert report["distribution"]["before"] == {
        "height_higher": {"A": 5, "B": 1}, "location_above": {"A": 2, "B": 2},
        "location_next_to": {"A": 3}, "orientation_viewpoint": {"C": 1},
    }
    assert report["distribution"]["after"]["height_higher"] == {"A": 5, "B": 5}
    assert report["distribution"]["after"]["location_above"] == {"A": 2, "B": 2}
    assert report["uneven"] == {"location_next_to": {"A over B": 3}}  # no rule turns "next to"
    assert report["excluded"] == [] and report["items"] == {"before": 14, "after": 18}

    assert len(report["added"]) == 4
    for entry in report["added"]:
        original, complement = Item.objects.get(pk=entry["item"]), Item.objects.get(pk=entry["complement"])
        assert entry["rule"] == "higher -> lower" and original.answers == ["A"] and original.version == 1
        assert "higher than the table" in original.question and original.status == Item.Status.APPROVED
        assert complement.question == original.question.replace("higher", "lower") and complement.answers == ["B"]
        assert complement.status == Item.Status.DRAFT and complement.external_id == f"{original.external_id}~complement"
        assert complement.provenance == {"source": "generated", "generator": "balance", "version": "1", "stage": 7,
                                         "seed": 0, "rule": "higher -> lower", "complement_of": original.pk}
        assert complement.tags == original.tags and not ItemRevision.objects.filter(item=original).exists()


def test_open_yes_no_answers_flip_too():
    bench = BenchmarkFactory(family="hypo3d")
    for n in range(4):
        ItemFactory(benchmark=bench, change__scene__benchmark=bench, question=f"Is the chair {n} left of the desk now?",
                    answers=["Yes"], tags={"question_type": ["Direction"]})
    ItemFactory(benchmark=bench, change__scene__benchmark=bench, answers=["window"])

    report = run(stage(bench))

    assert report["distribution"]["before"] == {"(all)": {"(open)": 1, "yes": 4}}
    assert report["distribution"]["after"] == {"(all)": {"(open)": 1, "no": 4, "yes": 4}}
    flipped = Item.objects.filter(answers=["no"])
    assert flipped.count() == 4 and all("right of the desk" in item.question for item in flipped)
    assert Item.objects.filter(answers=["Yes"]).count() == 4  # the originals stay


def test_quotas_keep_an_evened_seeded_sample_and_reject_the_rest_from_releases(benchmark):
    report = run(stage(benchmark, by="subtype", quota=2, seed=3))

    after = report["distribution"]["after"]
    assert after["height_higher"] == {"A": 1, "B": 1}  # the one "no" is always kept: answers evened
    assert after["location_above"] == {"A": 1, "B": 1}
    assert after["location_next_to"] == {"A": 2} and after["orientation_viewpoint"] == {"C": 1}
    assert report["items"] == {"before": 14, "after": 7} and report["kept"] == 7
    assert len(report["excluded"]) == 7 and report["added"] == []

    excluded = Item.objects.filter(pk__in=[entry["item"] for entry in report["excluded"]])
    assert set(excluded.values_list("status", flat=True)) == {Item.Status.REJECTED}
    assert not set(releasable_items(benchmark)) & set(excluded)
    decision = ItemDecision.objects.get(item=report["excluded"][0]["item"])
    assert decision.action == ItemDecision.Action.DROP and decision.criteria == ["quota"]
    assert decision.reviewer is None
    assert decision.note == "balance stage 7: over the quota of 2 for subtype=height_higher (seed 3)"


def test_the_same_seed_keeps_the_same_items_and_another_seed_may_not(benchmark):
    def kept(seed):
        items = list(Item.objects.filter(tags__subtype="height_higher"))
        return frozenset(i.external_id for i in balance.evened_sample(items, 3, balance._rng(seed, "height", "quota")))

    assert kept(3) == kept(3) and "q0000005" in kept(3)  # the only "no" answer is always kept
    assert len({kept(seed) for seed in range(20)}) > 1


def test_a_second_run_changes_nothing(benchmark):
    first = run(stage(benchmark, by="subtype", quota=4))
    assert first["excluded"] and first["added"]
    versions = dict(Item.objects.values_list("pk", "version"))
    revisions, decisions = ItemRevision.objects.count(), ItemDecision.objects.count()

    second = run(stage(benchmark, by="subtype", quota=4))

    assert second["excluded"] == [] and second["added"] == []
    assert second["distribution"]["before"] == second["distribution"]["after"] == first["distribution"]["after"]
    assert dict(Item.objects.values_list("pk", "version")) == versions
    assert (ItemRevision.objects.count(), ItemDecision.objects.count()) == (revisions, decisions)


@pytest.mark.parametrize("params, field", [
    ({"quota": 0}, "quota"), ({"quota": "many"}, "quota"), ({"by": ""}, "by"), ({"by": 3}, "by"),
    ({"seed": -1}, "seed"), ({"rewrite": "yes"}, "rewrite"),
])
def test_bad_params_name_their_field(params, field):
    with pytest.raises(DomainError) as error:
        balance.checked_params(params)
    assert error.value.field == field


def test_the_pipeline_runs_it_as_a_job_whose_report_is_the_stages(benchmark, django_capture_on_commit_callbacks):
    admin = UserFactory(role=roles.ADMIN)
    balancing = pipeline.add_stage(benchmark, admin, "balance", {"by": "subtype", "quota": 2})
    with django_capture_on_commit_callbacks(execute=True):
        job = pipeline.run_stage(balancing, admin)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.done == job.total == 14
    assert job.report["distribution"]["after"]["height_higher"] == {"A": 1, "B": 1}
    assert len(job.report["excluded"]) == 7


def test_the_balance_stage_links_its_rewrites_to_their_originals():
    benchmark = BenchmarkFactory(family="3dsrbench")
    item = Item.objects.create(benchmark=benchmark, question="Is the cup higher than the plate?", choices=["yes", "no"],
                               answers=["A"], answer_format="single", status="approved")
    made = balance._complement(SimpleNamespace(pk=1), item, "Is the cup lower than the plate?", ["B"],
                               "higher -> lower", 0)
    assert made.complement_of == item and made.status == "draft"

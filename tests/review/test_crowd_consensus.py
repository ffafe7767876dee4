"""Consensus from crowd answers: answers collected by answer-only campaigns count in each item's
consensus and in Fleiss' kappa beside reviewers' independent answers, and a release may require
consensus (the items without it are left out, and the card and manifest say so)."""

import json

import pytest
from django.core.management import call_command

from annotation import services as annotation_services
from benchmarks.models import Item, Release
from benchmarks.releases.life import export_release
from core import roles
from review import consensus
from tests.factories import ItemFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def answer_campaign(scenes, per_item):
    benchmark = scenes[0].benchmark
    return annotation_services.create_campaign(benchmark, "answers", "movement", scenes, kind="answer_only",
                                               assignments_per_scene=per_item)


def crowd_answer(campaign, answers_by_item: dict[int, list]):
    """Each worker leases every item once and answers with their own entry of the item's list."""
    for index in range(len(next(iter(answers_by_item.values())))):
        worker = UserFactory(role=roles.ANNOTATOR)
        for _ in answers_by_item:
            assignment = annotation_services.lease_assignment(campaign, worker)
            annotation_services.submit_assignment(
                assignment.pk, worker, answer={"answer": answers_by_item[assignment.item_id][index]}
            )


@pytest.fixture
def answered():
    """Four items of one benchmark answered by the crowd (and one reviewer), one never answered."""
    scene = SceneFactory()
    agreed = ItemFactory(change__scene=scene, answers=["window"])
    split = ItemFactory(change__scene=scene, answers=["desk"])
    choice = ItemFactory(change__scene=scene, choices=["left", "right"], answers=["B"], answer_format="single")
    crowd_answer(answer_campaign([scene], 3), {
        agreed.pk: ["window", "The window.", "window"],
        split.pk: ["desk", "chair", "bookshelf"],
        choice.pk: [["B"], ["B"], ["A"]],
    })
    mixed = ItemFactory(change__scene__benchmark=scene.benchmark, answers=["2"])
    crowd_answer(answer_campaign([mixed.scene], 2), {mixed.pk: ["two", "2 chairs"]})
    consensus.record_independent_answer(mixed.pk, UserFactory(role=roles.REVIEWER), "2")
    unanswered = ItemFactory(change__scene__benchmark=scene.benchmark)
    return {"agreed": agreed, "split": split, "choice": choice, "mixed": mixed, "unanswered": unanswered}


def states(items) -> dict[str, tuple]:
    return {name: Item.objects.values_list("consensus", "agreement").get(pk=item.pk) for name, item in items.items()}


def test_crowd_answers_reach_consensus_and_a_split_is_flagged(answered):
    assert states(answered) == {
        "agreed": ("reached", 1.0),  # 'The window.' is 'window' under Hypo3D's normalisation
        "split": ("flagged", 0.0),
        "choice": ("reached", pytest.approx(1 / 3)),  # letters, 2 of 3 agree
        "mixed": ("reached", 1.0),  # 'two' and '2 chairs' are '2'; the reviewer's answer counts too
        "unanswered": ("unmeasured", None),
    }


def test_recomputing_consensus_gives_the_same_result(answered):
    before = states(answered)
    first = consensus.refresh_consensus(answered["agreed"].benchmark)
    assert consensus.refresh_consensus(answered["agreed"].benchmark) == first
    assert first == {"unmeasured": 1, "reached": 3, "flagged": 1, "adjudicated": 0}
    call_command("refresh_consensus", answered["agreed"].benchmark.slug)
    assert states(answered) == before


def test_agreement_counts_crowd_raters(answered):
    report = consensus.agreement_report(answered["agreed"].benchmark)
    # P_i = 1, 0, 1/3, 1 -> P-bar = 7/12; 12 answers: window 3, '2' 3, B 2, desk, chair, bookshelf, A 1
    # -> P_e = 26/144; kappa = (84 - 26) / (144 - 26) = 29/59
    summary = {key: report["benchmark"][key] for key in ("n_items", "percent_agreement", "fleiss_kappa")}
    assert summary == {"n_items": 4, "percent_agreement": round(7 / 12, 4), "fleiss_kappa": round(29 / 59, 4)}
    # Krippendorff's alpha beside it, with its interval (tests/review/test_review_krippendorff.py)
    low, high = report["benchmark"]["krippendorff_alpha_ci"]
    assert low <= report["benchmark"]["krippendorff_alpha"] <= high
    assert report["flagged"] == 1


def manifest_of(release: Release) -> dict:
    with release.manifest_file.file.open("rb") as handle:
        return json.loads(handle.read())


def test_a_release_requiring_consensus_leaves_out_items_without_it(answered):
    benchmark = answered["agreed"].benchmark
    kept = export_release(benchmark, "1.0.0", None, inline=True)
    assert set(kept.items.all()) == {answered[n] for n in ("agreed", "choice", "mixed", "unanswered")}
    assert kept.card["require_consensus"] is False and kept.card["n_left_out_without_consensus"] == 1

    strict = export_release(benchmark, "1.1.0", None, require_consensus=True, inline=True)
    assert set(strict.items.all()) == {answered[n] for n in ("agreed", "choice", "mixed")}
    assert strict.card["require_consensus"] is True and strict.card["n_left_out_without_consensus"] == 2
    manifest = manifest_of(strict)
    assert manifest["require_consensus"] is True and manifest["n_left_out_without_consensus"] == 2
    assert strict.diff["removed"] == [str(answered["unanswered"].pk)]


def test_require_consensus_through_the_api_the_page_and_the_command(answered, admin_client, capsys,
                                                                     django_capture_on_commit_callbacks):
    slug = answered["agreed"].benchmark.slug
    with django_capture_on_commit_callbacks(execute=True):  # each export is a job run when its request commits
        response = admin_client.post("/api/v1/releases/", {"benchmark": slug, "version": "1.0.0",
                                                           "require_consensus": True}, content_type="application/json")
        assert response.status_code == 201, response.json()
    assert Release.objects.get(version="1.0.0").items.count() == 3
    with django_capture_on_commit_callbacks(execute=True):
        page = admin_client.post(f"/manage/{slug}/releases/", {"version": "1.1.0", "require_consensus": "on"})
    assert page.status_code == 302
    assert Release.objects.get(version="1.1.0").card["require_consensus"] is True
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(f"/manage/{slug}/releases/", {"version": "1.2.0"})
    assert Release.objects.get(version="1.2.0").items.count() == 4
    call_command("export_release", slug, "1.3.0", "--require-consensus")
    assert "3 items, 2 left out without consensus" in capsys.readouterr().out

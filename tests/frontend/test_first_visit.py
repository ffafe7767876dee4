"""What a new user meets (issue #30): templates that print no source, study forms that answer an empty
pick with a message (not a 500), error lines in words, the demo's settings, a human row that counts
finished sessions only."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core import roles
from frontend.templatetags.hypolab_ui import error_lines, labelled_rows
from humaneval.models import EvalSession
from humaneval.services.design import StudyDesign, create_study
from humaneval.services.sessions import answer_item, consent_to_session, current_item, start_session
from results.services import benchmark_results
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = [p for p in ROOT.glob("*/templates/**/*.html") if ".venv" not in p.parts]


def test_every_template_comment_opened_with_a_brace_hash_closes_on_its_line():
    """Django's {# #} is one line: one that runs on prints its text on the page."""
    assert TEMPLATES
    unclosed = [f"{p.relative_to(ROOT)}:{n}" for p in TEMPLATES
                for n, line in enumerate(p.read_text().splitlines(), start=1)
                if "{#" in line and "#}" not in line[line.index("{#"):]]
    assert not unclosed, unclosed


def test_error_lines_are_pairs_even_when_the_field_is_called_items():
    assert error_lines({"items": "Pick at least one approved item of this benchmark."}) == [
        ("", "Pick at least one approved item of this benchmark.")]
    assert error_lines({"seconds_per_session": "Must be between 1 and 9."}) == [
        ("Seconds per session", "Must be between 1 and 9.")]
    assert labelled_rows({"strata": {"a": 2}, "seed": None, "allow_going_back": True}) == [
        ("Strata", "a: 2"), ("Seed", "–"), ("Allow going back", "yes")]


@pytest.mark.django_db
@pytest.mark.parametrize("form", ["/manage/{slug}/studies/", "/manage/{slug}/studies/design/"])
def test_a_study_with_no_item_ticked_is_a_400_with_the_message_on_both_forms(client, form):
    item = ItemFactory(status="approved")
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.post(form.format(slug=item.benchmark.slug),
                       {"name": "Empty", "seconds_per_item": "60", "seconds_per_session": "600"})
    text = page.content.decode()
    assert page.status_code == 400
    assert re.search(r'<p class="error" role="alert">Pick at least one approved item of this benchmark\.</p>', text)


@pytest.mark.django_db
def test_a_refused_manage_form_posts_to_its_own_fragment(client):
    item = ItemFactory()
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{item.benchmark.slug}/").content.decode()
    for form in ("study-form", "run-form", "release-form"):
        assert re.search(rf'action="[^"]*#{form}" id="{form}"', page), form


@pytest.mark.django_db
def test_the_human_row_counts_finished_sessions_only():
    bench = BenchmarkFactory()
    items = [ItemFactory(change__scene__benchmark=bench, status="approved") for _ in range(2)]
    study = create_study(bench, StudyDesign("Pilot", [i.pk for i in items], 60, 600), None)

    def answer_first(username):
        session = start_session(study, UserFactory(username=username, role=roles.EVALUATOR))
        consent_to_session(session.pk, session.participant)
        shown = current_item(session.pk, session.participant).on_screen
        answer_item(session.pk, session.participant, shown.response.item_id, "window")
        return session

    answer_first("halfway")
    assert not [r for r in benchmark_results(bench)["rows"] if r["kind"] == "human"]
    finished = answer_first("done")
    answer_item(finished.pk, finished.participant, current_item(finished.pk, finished.participant)
                .on_screen.response.item_id, "window")
    current_item(finished.pk, finished.participant)  # nothing left: the session finishes
    assert EvalSession.objects.get(pk=finished.pk).status == EvalSession.Status.FINISHED
    human = [r for r in benchmark_results(bench)["rows"] if r["kind"] == "human"]
    assert len(human) == 1 and human[0]["n"] == 2
    assert human[0]["result"]["n_sessions_running"] == 1


def test_the_embedded_demo_runs_with_debug_off_on_plain_http():
    env = {k: v for k, v in os.environ.items()
           if k not in ("DEBUG", "DATABASE_URL", "REDIS_URL", "S3_BUCKET", "HTTPS", "SECURE_SSL_REDIRECT")}
    script = ("import django; django.setup(); from django.conf import settings as s; "
              "print(s.DEBUG, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE)")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-3:] == ["False", "False", "False"]


@pytest.mark.django_db
def test_the_manage_page_offers_only_what_works_on_the_benchmark(client):
    from benchmarks.models import Release
    from frontend.pages.manage import next_version
    from modeleval.models import ModelSpec

    item = ItemFactory()  # Hypo3D: open answers
    bench = item.benchmark
    ModelSpec.objects.create(name="Recorded elsewhere", adapter="recorded_outputs", config={"benchmark": "other"})
    ModelSpec.objects.create(name="Recorded here", adapter="recorded_outputs", config={"benchmark": bench.slug})
    ModelSpec.objects.create(name="For images", adapter="random_baseline", family="3dsrbench")
    Release.objects.create(benchmark=bench, version="1.0.0")
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{bench.slug}/").content.decode()
    assert "Recorded here" in page and "Recorded elsewhere" not in page and "For images" not in page
    assert 'name="circular"' not in page and 'name="flip"' not in page
    assert 'value="generate"' not in page and "spatial457" not in page
    assert 'placeholder="1.1.0"' in page and next_version(["1.0.0", "2.3.1", "latest"]) == "2.4.0"
    design = client.get(f"/manage/{bench.slug}/studies/design/").content.decode()
    assert 'name="circular_variants"' not in design and 'name="flip_images"' not in design
    results = client.get(f"/results/{bench.slug}/").content.decode()
    assert 'id="no-chance-row"' in results and "open phrases" in results
    assert "Chance rows" not in results  # no sentence promises rows the tables under it do not have


@pytest.mark.django_db
def test_the_reviewer_reaches_consensus_from_home_and_the_queue_names_the_benchmark(client):
    from tests.factories import ChangeFactory

    change = ChangeFactory(status="submitted")
    client.force_login(UserFactory(role=roles.REVIEWER))
    home = client.get("/").content.decode()
    assert f'href="/review/agreement/{change.scene.benchmark.slug}/"' in home
    queue = client.get("/review/").content.decode()
    assert "<th>Benchmark</th>" in queue and f"<td>{change.scene.benchmark.name}</td>" in queue

"""Public results, opt-in per benchmark (issue #46): a public benchmark's results page and leaderboard
are read signed out, nothing else of it is (items, gold, releases, studies), and a private one's results
stay the admins'; the signed-out home and the login page say what HypoLab is; the manage page's steps
each offer one action, the first to take highlighted."""

import re

import pytest

from benchmarks.models import Release
from benchmarks.selectors import BenchmarkProgress, MaterialAndItems
from core import roles
from demo import visit as demo_visit
from frontend.benchmark_steps import StepFacts, benchmark_steps, facts_by_benchmark
from humaneval.selectors import SessionCounts
from humaneval.services.design import StudyDesign, create_study
from modeleval.selectors import RunCounts
from tests.factories import BenchmarkFactory, ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmarks():
    """A public benchmark and a private one, each with an approved item, a study and a release."""
    made = {}
    for name, public in (("public", True), ("private", False)):
        item = ItemFactory(status="approved", change__scene__benchmark__public=public,
                           change__scene__benchmark__name=f"The {name} bench")
        bench = item.benchmark
        study = create_study(bench, StudyDesign(f"{name} study", [item.pk]), None)
        release = Release.objects.create(benchmark=bench, version="1.0.0")
        made[name] = {"bench": bench, "item": item, "study": study, "release": release}
    return made


def refused(response) -> bool:
    """Not served: the login page, a 401/403 or a 404."""
    return response.status_code in (401, 403, 404) or (
        response.status_code == 302 and response["Location"].startswith("/accounts/login/"))


def test_a_public_benchmarks_results_are_read_signed_out_and_a_private_ones_are_not(client, benchmarks):
    public, private = benchmarks["public"]["bench"], benchmarks["private"]["bench"]
    for url in (f"/results/{public.slug}/", f"/benchmarks/{public.slug}/results/"):
        page = client.get(url)
        assert page.status_code == 200, url
        assert 'class="paper-table"' in page.content.decode()
    assert client.get(f"/results/{public.slug}/?format=json").json()["benchmark"] == public.slug
    assert client.get(f"/results/{public.slug}/?format=csv")["Content-Type"].startswith("text/csv")
    api = client.get(f"/api/v1/benchmarks/{public.slug}/results/")
    assert api.status_code == 200 and api.json()["tables"]

    for url in (f"/results/{private.slug}/", f"/benchmarks/{private.slug}/results/",
                f"/results/{private.slug}/?format=json", "/results/no-such-bench/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    assert refused(client.get(f"/api/v1/benchmarks/{private.slug}/results/"))
    # a study's rows stay its admins', on a public benchmark too
    study = benchmarks["public"]["study"]
    assert refused(client.get(f"/api/v1/benchmarks/{public.slug}/results/?study={study.pk}"))


@pytest.mark.parametrize("name", ["public", "private"])
def test_items_gold_releases_and_studies_stay_private_signed_out(client, benchmarks, name):
    made = benchmarks[name]
    bench, item, study, release = made["bench"], made["item"], made["study"], made["release"]
    for url in ("/api/v1/items/", f"/api/v1/items/{item.pk}/", "/api/v1/releases/",
                f"/api/v1/releases/{release.pk}/", f"/api/v1/studies/{study.pk}/results/",
                f"/api/v1/benchmarks/{bench.slug}/plan/?half_width=5&items_per_participant=1",
                f"/releases/{release.pk}/", f"/studies/{study.pk}/results/", f"/studies/{study.pk}/settings/",
                f"/studies/{study.pk}/results.csv", f"/manage/{bench.slug}/", f"/review/items/{item.pk}/",
                f"/review/item-analysis/{bench.slug}/", f"/review/agreement/{bench.slug}/"):
        assert refused(client.get(url)), url


def test_an_annotator_reads_public_results_but_not_private_ones(client, benchmarks):
    client.force_login(UserFactory(role=roles.ANNOTATOR))
    assert client.get(f"/results/{benchmarks['public']['bench'].slug}/").status_code == 200
    assert client.get(f"/results/{benchmarks['private']['bench'].slug}/").status_code == 403


def test_the_admin_makes_results_public_on_the_manage_page_and_nobody_else_can(client, benchmarks):
    bench = benchmarks["private"]["bench"]
    client.force_login(UserFactory(role=roles.REVIEWER))
    assert client.post(f"/manage/{bench.slug}/public/", {"public": "on"}).status_code == 403
    client.logout()
    assert client.get(f"/results/{bench.slug}/").status_code == 302

    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{bench.slug}/").content.decode()
    assert re.search(r'<input type="checkbox" name="public" id="public-results">', page)  # off
    response = client.post(f"/manage/{bench.slug}/public/", {"public": "on"}, follow=True)
    assert "Anyone can now read this benchmark&#x27;s results" in response.content.decode()
    assert 'id="public-results" checked' in response.content.decode()
    client.logout()
    assert client.get(f"/results/{bench.slug}/").status_code == 200

    client.force_login(UserFactory(role=roles.ADMIN))
    client.post(f"/manage/{bench.slug}/public/", {})  # unticked: private again
    client.logout()
    assert client.get(f"/results/{bench.slug}/").status_code == 302


def test_the_signed_out_home_shows_the_public_benchmarks_an_example_table_and_what_each_role_does(client, benchmarks):
    page = client.get("/").content.decode()
    assert "The public bench" in page and "The private bench" not in page
    assert f'href="/results/{benchmarks["public"]["bench"].slug}/"' in page
    assert 'id="example-table"' in page
    assert f'href="/results/{benchmarks["public"]["bench"].slug}/?format=csv' in page  # the table's exports work
    for role in ("Annotators", "Reviewers", "Participants", "Admins"):
        assert f"<strong>{role}</strong>" in page
    assert 'id="try-as-participant"' not in page  # no demo study seeded


def test_the_home_enters_the_demos_open_study_with_a_participant_id_of_each_visitors_own(client):
    item = ItemFactory(status="approved", change__scene__benchmark__slug="3dsrbench-demo",
                       change__scene__benchmark__family="3dsrbench")
    study = demo_visit.try_study(UserFactory(role=roles.ADMIN))
    assert list(study.items.values_list("pk", flat=True)) == [item.pk] and study.is_open

    def entry() -> dict:
        page = client.get("/").content.decode()
        form = page[page.index('id="try-form"') - 120:page.index('id="try-as-participant"')]
        assert f'action="/crowd/studies/{study.pk}/"' in form
        return dict(re.findall(r'<input type="hidden" name="([A-Z_]+)" value="([^"]+)">', form))

    first, second = entry(), entry()
    assert first["PROLIFIC_PID"].startswith("visitor-") and first["PROLIFIC_PID"] != second["PROLIFIC_PID"]
    started = client.post(f"/crowd/studies/{study.pk}/", first)
    assert started.status_code == 302 and re.fullmatch(r"/eval/sessions/\d+/", started["Location"])


def test_the_login_page_says_what_hypolab_is_and_names_the_demo_accounts_only_where_seeded(client):
    UserFactory(username="someone", role=roles.ADMIN)
    page = client.get("/accounts/login/").content.decode()
    assert "spatial-reasoning benchmarks with a human baseline" in page and 'id="demo-accounts"' not in page

    from demo.visit import demo_user

    demo_user(roles.ADMIN, roles.ADMIN, staff=True)
    demo_user(roles.EVALUATOR, roles.EVALUATOR)
    page = client.get("/accounts/login/").content.decode()
    accounts = page[page.index('id="demo-accounts"'):]
    assert "<code>hypolab-demo</code>" in accounts
    assert "<code>admin</code>: builds benchmarks" in accounts and "<code>evaluator</code>" in accounts
    assert "someone" not in accounts


# --- the steps ----------------------------------------------------------------------------------------


def steps_of(family="spatial457", **facts) -> dict:
    bench = BenchmarkFactory.build(slug="b", family=family)
    return {step.key: step for step in benchmark_steps(bench, StepFacts(**facts))}


def next_action(steps: dict):
    marked = [step for step in steps.values() if step.next]
    assert len(marked) <= 1
    return marked[0].action[0] if marked else None


def test_each_step_says_its_state_and_the_first_to_take_offers_the_next_action():
    assert next_action(steps_of()) == "Generate items"
    assert steps_of()["material"].status == "optional"
    assert next_action(steps_of("hypo3d")) == "Add material"
    assert next_action(steps_of("hypo3d", material=MaterialAndItems(scenes=3))) == "Start a campaign"

    drafts = {"material": MaterialAndItems(generated=4),
              "progress": BenchmarkProgress(questions_waiting=3)}
    steps = steps_of(**drafts)
    assert next_action(steps) == "Review 3 waiting items"
    assert steps["review"].action[1] == "/review/filtering/"
    assert steps["items"].state == "4 items: 0 authored, 4 generated, 0 imported"
    assert steps["study"].status == "blocked" and steps["study"].action is None

    approved = {"material": MaterialAndItems(generated=4), "progress": BenchmarkProgress(approved=4)}
    assert next_action(steps_of(**approved)) == "Design a study"
    assert next_action(steps_of(**approved, studies=1)) == "Invite participants"
    under_way = steps_of(**approved, studies=1, sessions=SessionCounts(started=1))
    assert under_way["study"].status == "waiting" and next_action(under_way) == "Run models"
    assert next_action(steps_of(**approved, studies=1, sessions=SessionCounts(2, 2),
                                runs=RunCounts(running=1))) == "Export a release"
    released = BenchmarkProgress(approved=4, release=Release(pk=9, version="1.0.0", status="ready"))
    done = steps_of(material=approved["material"], progress=released, studies=1, sessions=SessionCounts(2, 2),
                    runs=RunCounts(finished=2))
    assert next_action(done) is None and done["release"].state == "release v1.0.0"
    assert all(step.status in ("done", "optional") for step in done.values())


def test_step_counts_tell_items_by_where_they_came_from():
    bench = BenchmarkFactory(family="spatial457")
    ItemFactory(change__scene__benchmark=bench)  # written here (a crowd change's)
    ItemFactory(change__scene__benchmark=bench, provenance={"source": "generated", "generator": "spatial457"})
    ItemFactory(change__scene__benchmark=bench, provenance={"source": "published", "file": "items.json"})
    ItemFactory(change__scene__benchmark=bench, provenance={"imported_from": "other@1.0.0"})
    ItemFactory(change__scene__benchmark=bench, provenance={"source": "generated", "imported_from": "other@1.0.0"})
    facts = facts_by_benchmark([bench.pk])[bench.pk]
    assert (facts.material.scenes, facts.material.authored, facts.material.generated,
            facts.material.imported) == (5, 1, 2, 2)


def test_the_manage_page_offers_one_next_action_absolute_crowd_links_and_success_messages(client):
    item = ItemFactory(status="approved")
    bench = item.benchmark
    client.force_login(UserFactory(role=roles.ADMIN))
    page = client.get(f"/manage/{bench.slug}/").content.decode()
    assert page.count("step-action") == page.count('class="button primary step-action"') + page.count(
        'class="button step-action"')
    assert re.findall(r'class="button primary step-action" href="([^"]+)">([^<]+)<', page) == [
        (f"/manage/{bench.slug}/studies/design/", "Design a study")]
    assert "Next: 0 approved items" not in page

    response = client.post(f"/manage/{bench.slug}/studies/", {"name": "Pilot", "items": [item.pk],
                                                              "seconds_per_item": 60, "seconds_per_session": 600},
                           follow=True)
    text = response.content.decode()
    assert "Study “Pilot” created" in text
    study = bench.studies.get()
    link = f"http://testserver/crowd/studies/{study.pk}/?PROLIFIC_PID="
    assert re.search(rf'<input class="crowd-link crowd-link-template" readonly value="{re.escape(link)}', text)
    assert re.search(rf'data-copy="{re.escape(link)}', text)
    assert re.findall(r'class="button primary step-action" href="[^"]+">([^<]+)<', text) == ["Invite participants"]

    response = client.post(f"/manage/{bench.slug}/releases/", {"version": "1.0.0"}, follow=True)
    assert "Release v1.0.0 created" in response.content.decode()

    response = client.post(f"/manage/{bench.slug}/campaigns/new/", {
        "name": "Moves", "kind": "context_change", "change_type": "movement", "min_words": "10",
        "descriptions_per_assignment": "1", "lease_minutes": "30", "pay_cents": "0", "pay_unit": "1",
        "quiz_max_attempts": "2", "is_active": "on", "scenes": [str(item.scene.pk)]}, follow=True)
    assert "Campaign “Moves” created" in response.content.decode()


def test_crowd_link_help_says_prolific_publishing_in_words(client):
    item = ItemFactory(status="approved")
    study = create_study(item.benchmark, StudyDesign("Pilot", [item.pk]), None)
    client.force_login(UserFactory(role=roles.ADMIN))
    for url in ("/", f"/studies/{study.pk}/settings/", f"/studies/{study.pk}/results/"):
        page = client.get(url).content.decode()
        assert "PROLIFIC_PID" in page and "manage.py" not in page, url


def test_a_stage_row_offers_run_or_run_again_never_both(client):
    from construction import pipeline
    from core.jobs import request_job

    bench = BenchmarkFactory(family="spatial457")
    admin = UserFactory(role=roles.ADMIN)
    fresh = pipeline.add_stage(bench, admin, "release", {"version": "1.0.0"}, name="fresh")
    ran = pipeline.add_stage(bench, admin, "release", {"version": "1.0.1"}, name="ran")
    ran.last_job = request_job("stage", f"test-{ran.pk}").job
    ran.save(update_fields=["last_job"])
    client.force_login(admin)
    page = client.get(f"/manage/{bench.slug}/").content.decode()
    rows = dict(re.findall(r'<tr data-stage="(\d+)".*?<td>(.*?Remove</button>)</td>', page, re.S))
    assert ">Run<" in rows[str(fresh.pk)] and "Run again" not in rows[str(fresh.pk)]
    assert "Run again" in rows[str(ran.pk)] and ">Run<" not in rows[str(ran.pk)]

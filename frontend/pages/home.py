"""The home page: one section per role the signed-in user holds, each leading to that role's main
action — an admin's benchmarks with the next step of each pipeline, a reviewer's queues with counts,
an annotator's assignments and earnings, an evaluator's sessions."""

from django.shortcuts import render

from annotation import progress as annotation_progress
from annotation import selectors as annotation_selectors
from annotation.models import Assignment
from benchmarks import selectors as benchmark_selectors
from core import roles
from crowd import services as crowd_services
from humaneval import selectors as humaneval_selectors
from humaneval.services import invitations
from modeleval import selectors as modeleval_selectors
from review import selectors as review_selectors

# Query strings the crowd platforms fill in. Prolific and CloudResearch Connect replace the
# {{%...%}} placeholders (Connect's names as public integrations use them: check them in Connect's
# study wizard); MTurk appends assignmentId, hitId and workerId to an ExternalQuestion URL itself.
# The entry reads the worker id with its session (assignment) id from each.
CROWD_TEMPLATES = (
    ("prolific", "Prolific", "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
     "Paste as the study URL; Prolific fills in the three ids (or publish it from here: manage.py prolific)."),
    ("cloudresearch", "CloudResearch Connect",
     "?participantId={{%PARTICIPANT_ID%}}&assignmentId={{%ASSIGNMENT_ID%}}&projectId={{%PROJECT_ID%}}",
     "Paste as the survey URL; Connect fills in the participant, assignment and project ids. For completion, set "
     "the completion URL to the redirect URL Connect's wizard gives (or show its code); send screen-outs to its "
     "Partial Redirects, not to the completion URL."),
    ("mturk", "MTurk (closing)", "",
     crowd_services.MTURK_NOTE + " Kept for campaigns made before then; MTurk appends assignmentId, hitId and "
     "workerId to the ExternalQuestion URL."),
)


def crowd_links(request, path: str, created_at=None) -> list[dict]:
    """Copyable entry links of one campaign or study (made at `created_at`) for each crowd platform;
    MTurk only for work made before it closed to new customers (crowd.services.offers_mturk)."""
    base = request.build_absolute_uri(path)
    return [{"key": key, "platform": name, "url": base + query, "note": note}
            for key, name, query, note in CROWD_TEMPLATES
            if key != "mturk" or crowd_services.offers_mturk(created_at)]


def admin_pipelines() -> list[dict]:
    """Each benchmark with its counts and the next step of its pipeline, in a handful of queries."""
    benchmarks = list(benchmark_selectors.benchmarks_by_name())
    ids = [b.pk for b in benchmarks]
    progress = benchmark_selectors.progress_by_benchmark(ids)
    studies = humaneval_selectors.study_counts_by_benchmark(ids)
    runs = modeleval_selectors.run_counts_by_benchmark(ids)
    rows = []
    for benchmark in benchmarks:
        r = runs.get(benchmark.pk, modeleval_selectors.RunCounts())
        facts = {
            **vars(progress[benchmark.pk]),
            "studies": studies.get(benchmark.pk, 0),
            "runs_finished": r.finished,
            "runs_running": r.running,
        }
        rows.append({"benchmark": benchmark, **facts, "steps": pipeline_steps(benchmark, facts)})
    return rows


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{n} {word}s"


def pipeline_steps(benchmark, facts: dict) -> list[dict]:
    """The pipeline's state as short sentences, the first open one marked `next`."""
    slug = benchmark.slug
    steps = []
    if facts["changes_waiting"]:
        steps.append({"text": f"{_plural(facts['changes_waiting'], 'change')} waiting for review", "url": "/review/",
                      "open": True})
    if facts["questions_waiting"]:
        steps.append({"text": f"{_plural(facts['questions_waiting'], 'question')} waiting for review",
                      "url": "/review/filtering/", "open": True})
    if facts["flagged"]:
        steps.append({"text": f"{_plural(facts['flagged'], 'item')} with flagged consensus",
                      "url": f"/review/agreement/{slug}/", "open": True})
    steps.append({"text": f"{_plural(facts['approved'], 'approved item')}", "url": f"/manage/{slug}/",
                  "open": not facts["approved"]})
    steps.append({"text": _plural(facts["studies"], "study") if facts["studies"] else "no human study yet",
                  "url": f"/manage/{slug}/studies/design/" if not facts["studies"] else f"/manage/{slug}/#studies",
                  "open": not facts["studies"] and bool(facts["approved"])})
    runs = f"{_plural(facts['runs_finished'], 'run')} finished"
    if facts["runs_running"]:
        runs += f", {facts['runs_running']} running"
    steps.append({"text": runs, "url": f"/manage/{slug}/#runs",
                  "open": not facts["runs_finished"] and bool(facts["approved"])})
    release = facts["release"]
    steps.append({"text": f"release v{release.version}" if release else "no release yet",
                  "url": f"/releases/{release.pk}/" if release else f"/manage/{slug}/#releases",
                  "open": release is None and bool(facts["approved"])})
    for step in steps:
        if step["open"]:
            step["next"] = True
            break
    return steps


def reviewer_queues(user) -> dict:
    return {**vars(review_selectors.review_queues(user)), **vars(benchmark_selectors.consensus_overview())}


def home(request):
    user = request.user
    context = {"is_admin": roles.has_role(user, roles.ADMIN)}
    if not user.is_authenticated:
        return render(request, "frontend/home.html", context)
    context |= {
        "is_reviewer": roles.has_role(user, roles.REVIEWER),
        "is_annotator": roles.has_role(user, roles.ANNOTATOR),
        "is_evaluator": roles.has_role(user, roles.EVALUATOR),
    }
    if context["is_admin"]:
        campaigns = annotation_selectors.active_campaigns()
        studies = humaneval_selectors.open_studies()
        context |= {
            "pipelines": admin_pipelines(),
            "campaigns": [{"campaign": c, "links": crowd_links(request, f"/crowd/campaigns/{c.pk}/", c.created_at)}
                          for c in campaigns],
            "studies": [{"study": s, "links": crowd_links(request, f"/crowd/studies/{s.pk}/", s.created_at)}
                        for s in studies],
        }
    if context["is_reviewer"]:
        context["queues"] = reviewer_queues(user)
    if context["is_annotator"]:
        earnings = annotation_progress.worker_earnings(user)
        for entry in earnings:
            entry["open"] = any(a.status == Assignment.Status.LEASED for a in entry["assignments"])
        worked = {entry["campaign"].pk for entry in earnings}
        # Crowd workers came for one campaign on their platform; invited annotators see the others.
        invited = not crowd_services.is_crowd_worker(user)
        context |= {
            "earnings": earnings,
            "open_campaigns": [c for c in annotation_selectors.active_campaigns()
                               if c.pk not in worked] if invited else [],
        }
    if context["is_evaluator"]:
        sessions = humaneval_selectors.sessions_of(user)
        taken = {s.study_id for s in sessions}
        # Crowd participants came for one study on their platform; other evaluators see the studies they
        # were invited to (humaneval.services.invitations).
        invited = not crowd_services.is_crowd_worker(user)
        context |= {
            "sessions": sessions,
            "open_studies": [s for s in invitations.invited_open_studies(user) if s.pk not in taken]
            if invited else [],
        }
    return render(request, "frontend/home.html", context)

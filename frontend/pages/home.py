"""The home page. Signed out: what HypoLab does for each role, the public benchmarks' results with one
example table, and (in the demo) a participant's way in. Signed in: one section per role the user holds,
each leading to that role's main action — an admin's benchmarks with the next step of each, a reviewer's
queues with counts, an annotator's assignments and earnings, an evaluator's sessions."""

import secrets

from django.contrib.auth.views import LoginView
from django.shortcuts import render

from annotation import progress as annotation_progress
from annotation import selectors as annotation_selectors
from annotation.models import Assignment
from benchmarks import selectors as benchmark_selectors
from core import roles
from crowd import services as crowd_services
from demo import visit as demo_visit
from humaneval import selectors as humaneval_selectors
from humaneval.services import invitations
from results import services as results_services
from review import selectors as review_selectors

from ..benchmark_steps import benchmark_steps, facts_by_benchmark

# Query strings the crowd platforms fill in. Prolific and CloudResearch Connect replace the
# {{%...%}} placeholders (Connect's names as public integrations use them: check them in Connect's
# study wizard); MTurk appends assignmentId, hitId and workerId to an ExternalQuestion URL itself.
# The entry reads the worker id with its session (assignment) id from each.
CROWD_TEMPLATES = (
    ("prolific", "Prolific", "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
     "Paste as the study URL; Prolific fills in the three ids. Whoever runs the server can also publish the "
     "study on Prolific for you, with the lab's Prolific token."),
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
    """Each benchmark with its steps (frontend.benchmark_steps), in a handful of queries."""
    benchmarks = list(benchmark_selectors.benchmarks_by_name())
    facts = facts_by_benchmark([b.pk for b in benchmarks])
    return [{"benchmark": benchmark, "steps": benchmark_steps(benchmark, facts[benchmark.pk])}
            for benchmark in benchmarks]


def try_entry() -> dict | None:
    """The demo's open study as a new participant enters it: its crowd entry posted with a made-up Prolific
    id of the visitor's own (a form: starting a session is a POST), or None where the demo did not seed it."""
    study = demo_visit.try_study_open()
    if study is None:
        return None
    visitor = f"visitor-{secrets.token_hex(6)}"
    return {"action": f"/crowd/studies/{study.pk}/", "params": {
        "PROLIFIC_PID": visitor, "STUDY_ID": demo_visit.TRY_STUDY_ID, "SESSION_ID": f"{visitor}-session"}}


def first_visit() -> dict:
    """The signed-out home: the public benchmarks, the main paper table of the first as an example, and the
    demo's participant link."""
    public = list(benchmark_selectors.public_benchmarks())
    example = None
    if public:
        tables = results_services.benchmark_results(public[0])["tables"]
        example = {"benchmark": public[0], "table": tables[0]}
    return {"public_benchmarks": public, "example": example, "try_entry": try_entry()}


def reviewer_queues(user) -> dict:
    return {**vars(review_selectors.review_queues(user)), **vars(benchmark_selectors.consensus_overview())}


def home(request):
    user = request.user
    context = {"is_admin": roles.has_role(user, roles.ADMIN)}
    if not user.is_authenticated:
        return render(request, "frontend/home.html", context | first_visit())
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


class LoginPage(LoginView):
    """The login form with what HypoLab is and, where the demo seeded its accounts, which to use."""

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {"demo_accounts": demo_visit.demo_accounts(),
                                                     "demo_password": demo_visit.DEMO_PASSWORD}

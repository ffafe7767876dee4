"""Evaluator pages (crowd entry, invited start, the timed session) and the admin's study pages
(design form, results in the paper layout beside the model runs, CSV export)."""

import json
from dataclasses import MISSING, fields

from django.contrib import messages
from django.contrib.auth import login
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from benchmarks import selectors as benchmark_selectors
from benchmarks.models import Benchmark
from config.throttle import crowd_entry_limited
from core import roles
from core.auth import remember_signed_in
from core.errors import DomainError
from crowd import services as crowd_services
from humaneval import selectors as humaneval_selectors
from humaneval.models import EvalSession
from humaneval.services import design as humaneval_design
from humaneval.services import invitations as humaneval_invitations
from humaneval.services import prolific_places
from humaneval.services import results as humaneval_results
from humaneval.services import sessions as humaneval_sessions
from humaneval.services.design import StudyDesign
from results import services as results_services

from ..access import role_required
from ..templatetags.safe_urls import http_url
from .common import BACKEND, carries_platform_ids, csv_attachment, entry_params, error_page, squatted_page
from .home import crowd_links
from .manage import results_export
from .planner import planner_context


def proceed_page(request, title: str, text: str, button: str, action: str | None = None):
    """What a link that starts work answers to a GET: a page whose form POSTs the same address (sent at
    once where scripts run), so opening, prefetching or crawling a link writes nothing."""
    return render(request, "frontend/proceed.html", {
        "title": title, "text": text, "button": button, "action": action or request.get_full_path(),
        "autosubmit": True,
    })


@crowd_entry_limited
def crowd_enter_study(request, study_id):
    """A crowd link: a GET checks the link and shows the start page, the POST signs in and starts."""
    if not carries_platform_ids(entry_params(request)) and roles.has_role(request.user, roles.EVALUATOR):
        return start_invited(request, study_id)  # a signed-in evaluator opens the link without platform ids
    if request.method != "POST":
        try:
            study, _ = humaneval_sessions.entry_ids(study_id, entry_params(request))  # the study's entry rule
        except DomainError as exc:
            return error_page(request, exc)
        return proceed_page(request, study.name, "Press Start to open the study's instructions.", "Start")
    try:
        user, session = humaneval_sessions.enter_study_from_crowd_link(study_id, entry_params(request),
                                                                       signed_in=request.user)
    except crowd_services.SessionSquatted as exc:
        return squatted_page(request, exc)
    except DomainError as exc:
        return error_page(request, exc)
    login(request, user, backend=BACKEND)
    remember_signed_in(user)  # the session page this redirects to finds the account (and its roles) in the cache
    return redirect("eval_session", session_id=session.pk)


def start_invited(request, study_id):
    """Invited evaluators and staff with an account start here instead of a crowd link: a GET resumes
    the user's session or shows the start page, the POST starts the session."""
    if not request.user.is_authenticated:
        return redirect(f"/accounts/login/?next={request.path}")
    if not (roles.has_role(request.user, roles.EVALUATOR) or roles.has_role(request.user, roles.ADMIN)):
        return render(
            request, "frontend/error.html", {"message": "This page is for invited evaluators."}, status=403
        )
    try:
        if request.method != "POST":
            study, session = humaneval_sessions.may_start(study_id, request.user)
            if session is not None:
                return redirect("eval_session", session_id=session.pk)
            return proceed_page(request, study.name, "Press Start to open the study's instructions.", "Start",
                                action=reverse("study_start", args=[study.pk]))
        session = humaneval_sessions.start_invited_session(study_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("eval_session", session_id=session.pk)


DEFAULT_CONSENT = (
    "I agree to take part in this study. My answers, and the time I take for each, are stored without my "
    "name and used for research on spatial reasoning. I can stop at any time by closing the page."
)


def _intro(session) -> dict:
    """What the opening screen says: the study's instructions and consent, how many questions (practice
    first, if the design has familiarisation items) and how long."""
    study = session.study
    size = humaneval_selectors.session_size(session)
    return {
        "instructions": study.instructions or DEFAULT_INSTRUCTIONS,  # a quick-form study has none of its own
        "consent_text": study.consent_text or DEFAULT_CONSENT,
        "n_practice": size.practice,
        "n_questions": size.questions,
        "seconds_per_item": study.seconds_per_item,
        "minutes": round(study.seconds_per_session / 60),
    }


def _session_page(request, session, consent_error="", status=200):
    intro = session.consented_at is None and session.status == EvalSession.Status.ACTIVE
    return render(request, "frontend/eval_session.html", {
        "session": session,
        "page_data": {"session": session.pk, "return_url": http_url(
            crowd_services.completion_url(request.user, session.completion_code or "{code}"))},
        "intro": _intro(session) if intro else None,
        "consent_error": consent_error,
    }, status=status)


def eval_session(request, session_id):
    """The opening screen (instructions, consent) until the participant agrees; then the timed items."""
    if not request.user.is_authenticated:
        return redirect(f"/accounts/login/?next={request.path}")
    try:
        session = humaneval_sessions.session_for(session_id, request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return _session_page(request, session)


@require_POST
def eval_consent(request, session_id):
    """The participant agrees (a ticked box, or JSON {"agree": true}): the session's clock starts now."""
    if not request.user.is_authenticated:
        return redirect(f"/accounts/login/?next=/eval/sessions/{session_id}/")
    as_json = request.content_type == "application/json"
    if as_json:
        try:
            agreed = json.loads(request.body or b"{}").get("agree") is True
        except (ValueError, AttributeError):
            agreed = False
    else:
        agreed = request.POST.get("agree") == "yes"
    try:
        if not agreed:
            raise DomainError("Tick the box to agree before you start.", field="agree")
        session = humaneval_sessions.consent_to_session(session_id, request.user)
    except DomainError as exc:
        if as_json:
            return JsonResponse(exc.as_dict(), status=exc.status_code)
        if exc.field != "agree":
            return error_page(request, exc)
        try:
            session = humaneval_sessions.session_for(session_id, request.user)
        except DomainError as missing:  # not the visitor's session (or none): its 404, not a 500
            return error_page(request, missing)
        return _session_page(request, session, exc.message, status=400)
    if as_json:
        return JsonResponse({"session": session.pk, "consented_at": session.consented_at.isoformat(),
                             "session_deadline": session.deadline.isoformat()})
    return redirect("eval_session", session_id=session.pk)


DEFAULT_INSTRUCTIONS = (
    "You will see a scene and a question about it. Answer each question as well as you can; there is a time "
    "limit per question and for the whole session.\n\n"
    "- Look at the scene before you answer.\n"
    "- Pick **one** option, or type a short phrase where there are no options.\n"
    "- Work alone, without searching the web."
)


def _design_form(post=None) -> dict:
    """The design form's values, one per StudyDesign option: its defaults (blank where it has none,
    every approved item ticked, the standard texts), or what was posted, kept as typed when it is
    refused: ticked boxes for the switches, the ticked ids for the item lists, the text for the rest."""
    if post is None:
        form = {option.name: "" if option.default in (None, MISSING) else option.default
                for option in fields(StudyDesign)}
        return {**form, "name": "Human baseline", "items": None, "instructions": DEFAULT_INSTRUCTIONS,
                "consent_text": DEFAULT_CONSENT}
    form = {}
    for option in fields(StudyDesign):
        if option.type is bool:
            form[option.name] = option.name in post
        elif option.type == tuple[int, ...]:
            form[option.name] = [int(i) for i in post.getlist(option.name) if i.isdigit()]
        else:
            form[option.name] = post.get(option.name, "")
    return form


def _design_context(benchmark, form, **extra):
    items = benchmark_selectors.approved_items_in_order(benchmark)
    return {
        "benchmark": benchmark,
        "approved_items": items,
        "tags": benchmark_selectors.tags_of(items),
        "form": form,
        "ticked": form["items"] if form["items"] is not None else {i.pk for i in items},
        "protocols": benchmark_selectors.protocols_for(benchmark),
        **extra,
    }


@role_required(roles.ADMIN)
def study_design(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if request.method != "POST":
        planned = planner_context(benchmark, request.GET)
        return render(request, "frontend/study_design.html", _design_context(benchmark, _design_form(), **planned),
                      status=400 if planned["planner"]["error"] else 200)
    form = _design_form(request.POST)
    try:
        # a blank box takes the design's default
        design = StudyDesign(**{name: value for name, value in form.items() if value != "" or name == "name"})
        study = humaneval_design.create_study(benchmark, design, request.user)
    except DomainError as exc:
        context = _design_context(benchmark, form, error={exc.field: exc.message}, **planner_context(benchmark, {}))
        return render(request, "frontend/study_design.html", context, status=exc.status_code)
    messages.success(request, f"Study “{study.name}” created: invite participants with its crowd links below.")
    return redirect("study_results", study_id=study.pk)


@role_required(roles.ADMIN)
@require_POST
def study_invitations(request, study_id):
    """Invite an evaluator (`invitee`: a user name or an e-mail address) or withdraw an invitation
    (`withdraw`: its id); back to the study's settings, or them again with the message."""
    study = get_object_or_404(humaneval_selectors.studies_with_benchmark(), pk=study_id)
    try:
        if "withdraw" in request.POST:
            humaneval_invitations.withdraw(study.pk, _db_id(request.POST.get("withdraw"), "withdraw"))
        else:
            humaneval_invitations.invite(study.pk, request.POST.get("invitee", ""), by=request.user)
    except DomainError as exc:
        return _settings_page(request, study, invite_error={exc.field: exc.message},
                              invitee=request.POST.get("invitee", ""), status=exc.status_code)
    return redirect(reverse("study_settings", args=[study.pk]) + "#invitations")


@role_required(roles.ADMIN)
@require_POST
def study_entry_rule(request, study_id):
    """Where the study recruits and, on Prolific, which Prolific study it is (its links' STUDY_ID)."""
    study = get_object_or_404(humaneval_selectors.studies_with_benchmark(), pk=study_id)
    try:
        humaneval_sessions.set_entry_rule(study.pk, request.POST.get("platform", ""),
                                          request.POST.get("prolific_study_id", ""))
    except DomainError as exc:
        return _settings_page(request, study, entry_error=exc.message, status=exc.status_code)
    return redirect(reverse("study_settings", args=[study.pk]) + "#entry")


@role_required(roles.ADMIN)
@require_POST
def study_check_places(request, study_id):
    """Start the check of the study's places against Prolific's submissions (PROLIFIC_API_TOKEN), a job
    whose widget and, once done, report the study's settings page shows."""
    study = get_object_or_404(humaneval_selectors.studies_with_benchmark(), pk=study_id)
    try:
        prolific_places.start_places_check(study.pk, request.user)
    except DomainError as exc:
        return _settings_page(request, study, places_error=exc.message, status=exc.status_code)
    return redirect(reverse("study_settings", args=[study.pk]) + "#places")


def _db_id(value, field: str) -> int:
    text = str(value or "")
    if not (text.isascii() and text.isdigit() and 0 < int(text) < 2**63):
        raise DomainError("Pick an invitation from the list.", field=field)
    return int(text)


def _settings_page(request, study, form=None, error=None, status=200, **extra):
    form = form or {"name": study.name, "instructions": study.instructions, "consent_text": study.consent_text,
                    "is_open": study.is_open}
    return render(request, "frontend/study_settings.html", {
        "study": study, "form": form, "error": error or {}, "default_consent": DEFAULT_CONSENT,
        "links": crowd_links(request, f"/crowd/studies/{study.pk}/", study.created_at),
        "invitations": humaneval_selectors.invitations_of(study),
        "prolific_checks": prolific_places.enabled(), "places_check": study.places_check,
        "entry": humaneval_selectors.entry_checks(study), **extra,
    }, status=status)


@role_required(roles.ADMIN)
def study_settings(request, study_id):
    """Edit what may change once a study runs: name, instructions, consent statement, open or closed."""
    study = get_object_or_404(humaneval_selectors.studies_with_benchmark(), pk=study_id)
    form = {"name": study.name, "instructions": study.instructions, "consent_text": study.consent_text,
            "is_open": study.is_open}
    error, status = {}, 200
    if request.method == "POST":
        post = request.POST
        form = {"name": post.get("name", ""), "instructions": post.get("instructions", ""),
                "consent_text": post.get("consent_text", ""), "is_open": "is_open" in post}
        try:
            humaneval_design.update_study(study.pk, **form)
        except DomainError as exc:
            error, status = {exc.field: exc.message}, exc.status_code
        else:
            return redirect("study_settings", study_id=study.pk)
    return _settings_page(request, study, form, error, status)


@role_required(roles.ADMIN)
def study_results(request, study_id):
    """The study's human row beside the finished runs and chance, all on the study's scored items
    (`results.services.benchmark_results(benchmark, study)`); `?format=json|csv|latex` exports them."""
    study = get_object_or_404(humaneval_selectors.studies_with_benchmark(), pk=study_id)
    data = results_services.benchmark_results(study.benchmark, study)
    exported = results_export(request, data, f"study-{study.pk}")
    if exported is not None:
        return exported
    return render(
        request,
        "frontend/study_results.html",
        {
            "study": study,
            "human": results_services.human_result(data),
            "tables": data["tables"],
            "links": crowd_links(request, f"/crowd/studies/{study.pk}/", study.created_at),
        },
    )


@role_required(roles.ADMIN)
def study_results_csv(request, study_id):
    study = get_object_or_404(humaneval_selectors.studies_with_benchmark(), pk=study_id)
    return csv_attachment(f"study-{study.pk}-responses.csv",
                          [humaneval_results.CSV_HEADER, *humaneval_results.response_table(study)])

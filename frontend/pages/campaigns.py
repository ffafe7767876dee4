"""The admin's campaign form (create and edit): real fields for every setting, the qualification quiz
and the question-type taxonomy as form rows, the pool of scenes as ticks. A refused form comes back
with what was typed."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render

from annotation import selectors as annotation_selectors
from annotation import services as annotation_services
from annotation.families import (
    campaign_kinds,
    checked_kind,
    family_question_types,
    kind_choices,
    takes_change_type,
)
from annotation.guidelines import paper_guidelines
from annotation.models import Campaign
from benchmarks import selectors as benchmark_selectors
from benchmarks.models import Benchmark, ChangeType
from core import roles
from core.errors import DomainError
from core.validation import whole_number

from ..access import role_required
from .home import crowd_links

# (low, high) of each whole-number setting; optional ones may be left blank (no cap, no quota).
NUMBERS = {"min_words": (1, 500), "descriptions_per_assignment": (1, 50), "lease_minutes": (1, 24 * 60),
           "pay_cents": (0, 1_000_000), "pay_unit": (1, 10_000), "quiz_max_attempts": (1, 100)}
OPTIONAL_NUMBERS = {"max_assignments_per_worker": (1, 1_000_000), "assignments_per_scene": (1, 1_000_000)}
TEXTS = ("name", "kind", "change_type", "guidelines", "completion_url", "return_code", "return_url")
BLANK_QUIZ_ROWS = 2
BLANK_TYPE_ROWS = 3


def _form_of(campaign: Campaign | None, benchmark) -> dict:
    """The form's values (as the inputs show them) for a campaign, or a new campaign's defaults."""
    kind = campaign_kinds(benchmark.family)[0]
    defaults = campaign or Campaign(benchmark=benchmark, descriptions_per_assignment=5, kind=kind,
                                    change_type=ChangeType.MOVEMENT if takes_change_type(kind) else "",
                                    question_types=family_question_types(benchmark.family),
                                    guidelines=paper_guidelines(benchmark.family))
    form = {name: getattr(defaults, name) for name in (*TEXTS, *NUMBERS, *OPTIONAL_NUMBERS)}
    form = {key: "" if value is None else value for key, value in form.items()}
    form["is_active"] = defaults.is_active
    form["quiz"] = [{"question": q["question"], "choices": "\n".join(q["choices"]), "answer": q["answer"] + 1}
                    for q in defaults.quiz or []]
    form["types"] = [{"fine": fine, "coarse": ", ".join(coarse)} for fine, coarse in (defaults.question_types or {}).items()]
    form["scenes"] = (annotation_selectors.scene_ids_of(campaign) if campaign
                      else benchmark_selectors.scene_ids_of(benchmark))
    return form


def _posted_form(post) -> dict:
    """What was typed, kept as typed (the form comes back with it if it is refused)."""
    form = {name: post.get(name, "").strip() for name in (*TEXTS, *NUMBERS, *OPTIONAL_NUMBERS)}
    form["guidelines"] = post.get("guidelines", "")
    form["is_active"] = "is_active" in post
    form["quiz"] = [{"question": post.get(f"quiz-{i}-question", "").strip(),
                     "choices": post.get(f"quiz-{i}-choices", ""), "answer": post.get(f"quiz-{i}-answer", "").strip()}
                    for i in range(_row_count(post, "quiz"))]
    form["types"] = [{"fine": post.get(f"type-{i}-fine", "").strip(), "coarse": post.get(f"type-{i}-coarse", "").strip()}
                     for i in range(_row_count(post, "type"))]
    form["scenes"] = {int(pk) for pk in post.getlist("scenes") if pk.isdigit()}
    return form


def _row_count(post, prefix: str) -> int:
    count = post.get(f"{prefix}-rows", "")
    return min(int(count), 200) if count.isdigit() else 0


def _settings(form: dict) -> dict:
    """The campaign settings a posted form asks for; a DomainError names the field that is wrong."""
    fields = {name: form[name] for name in TEXTS}
    fields["is_active"] = form["is_active"]
    for name, (low, high) in NUMBERS.items():
        fields[name] = whole_number(form[name], name, low, high)
    for name, (low, high) in OPTIONAL_NUMBERS.items():
        fields[name] = whole_number(form[name], name, low, high, optional=True)
    quiz = []
    for number, row in enumerate((r for r in form["quiz"] if r["question"] or r["choices"].strip()), start=1):
        choices = [line.strip() for line in row["choices"].splitlines() if line.strip()]
        if not row["question"] or len(choices) < 2:
            raise DomainError(f"Quiz question {number} needs a question and two or more choices (one per line).",
                              field="quiz")
        answer = whole_number(row["answer"], "quiz", 1, len(choices)) if row["answer"] else None
        if answer is None:
            raise DomainError(f"Quiz question {number}: give the number of the right choice (1-{len(choices)}).",
                              field="quiz")
        quiz.append({"question": row["question"], "choices": choices, "answer": answer - 1})
    fields["quiz"] = quiz
    types = {}
    for row in form["types"]:
        if not row["fine"] and not row["coarse"]:
            continue
        if not row["fine"]:
            raise DomainError("Each question type row needs the fine type's name.", field="question_types")
        if row["fine"] in types:
            raise DomainError(f"The question type {row['fine']!r} is listed twice.", field="question_types")
        types[row["fine"]] = [c.strip() for c in row["coarse"].split(",") if c.strip()]
    fields["question_types"] = types
    return fields


def _render(request, benchmark, campaign, form, error=None, status=200):
    quiz = form["quiz"] + [{"question": "", "choices": "", "answer": ""}] * BLANK_QUIZ_ROWS
    types = form["types"] + [{"fine": "", "coarse": ""}] * BLANK_TYPE_ROWS
    return render(request, "frontend/campaign_form.html", {
        "benchmark": benchmark, "campaign": campaign, "form": form, "error": error or {},
        "quiz_rows": quiz, "type_rows": types, "kinds": kind_choices(benchmark.family), "change_types": ChangeType.choices,
        "scenes": benchmark_selectors.scenes_of(benchmark),
        "links": crowd_links(request, f"/crowd/campaigns/{campaign.pk}/", campaign.created_at) if campaign else [],
    }, status=status)


def _save(request, benchmark, campaign):
    form = _posted_form(request.POST)
    try:
        fields = _settings(form)
        checked_kind(benchmark.family, fields["kind"], fields["change_type"], offered_only=True)  # the family's kinds
        scenes = benchmark_selectors.scenes_among(benchmark, form["scenes"])
        if campaign is None:
            name, change_type = fields.pop("name"), fields.pop("change_type")
            saved = annotation_services.create_campaign(benchmark, name, change_type, scenes, **fields)
            messages.success(request, f"Campaign “{saved.name}” created: paste its crowd link below into your platform.")
        else:
            saved = annotation_services.update_campaign(campaign.pk, scenes=scenes, **fields)
    except DomainError as exc:
        return _render(request, benchmark, campaign, form, {exc.field: exc.message}, exc.status_code)
    return redirect("campaign_edit", campaign_id=saved.pk)


@role_required(roles.ADMIN)
def campaign_new(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if request.method == "POST":
        return _save(request, benchmark, None)
    return _render(request, benchmark, None, _form_of(None, benchmark))


@role_required(roles.ADMIN)
def campaign_edit(request, campaign_id):
    campaign = get_object_or_404(annotation_selectors.campaigns_with_benchmark(), pk=campaign_id)
    if request.method == "POST":
        return _save(request, campaign.benchmark, campaign)
    return _render(request, campaign.benchmark, campaign, _form_of(campaign, campaign.benchmark))

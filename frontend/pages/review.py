from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation.family_tags import tag_fields
from benchmarks import selectors as benchmark_selectors
from benchmarks.models import Benchmark
from core import roles
from core.errors import DomainError
from modeleval import selectors as modeleval_selectors
from review import complements as review_complements
from review import consensus as review_consensus
from review import dedup as review_dedup
from review import families as review_families
from review import frames as review_frames
from review import polish as review_polish
from review import selectors as review_selectors
from review import services as review_services
from scenes.viewer import after_state_viewer_data, scene_viewer_data

from ..access import role_required
from .common import error_page


@role_required(roles.REVIEWER)
def review_queue(request):
    return render(request, "frontend/review_queue.html", {
        "queue": review_services.review_queue(request.user)[:100],
        "approved": benchmark_selectors.recently_approved_changes(),
        "returned": review_services.returned_work(request.user),
        "n_drafts": review_selectors.drafts_waiting(request.user),
        "n_frames": len(review_frames.frames_to_review()),
        "dedup_runs": review_selectors.recent_dedup_runs(),
        "is_admin": roles.has_role(request.user, roles.ADMIN),
        "benchmarks": benchmark_selectors.benchmarks_by_name(),
        "polish_models": modeleval_selectors.openai_compatible_models(),
        "polished": review_selectors.applied_polishes(),
        "polish_passes": review_polish.running_passes(),
    })


@role_required(roles.REVIEWER)
def review_change(request, change_id):
    change = get_object_or_404(benchmark_selectors.changes_for_review(), pk=change_id)
    polish = review_selectors.applied_polish_of(change)
    return render(request, "frontend/review_change.html", {
        "change": change,
        "viewer": scene_viewer_data(change.scene),
        "after_state": after_state_viewer_data(change),
        "history": review_services.change_history(change),
        "items": benchmark_selectors.items_of_change(change),
        "criteria": review_services.CHANGE_CRITERIA,
        "question_types": review_services.QUESTION_TYPES,
        "own_work": change.author_id == request.user.pk,
        "polish": polish,
        "polish_pass": review_selectors.running_polish_pass(change.scene.benchmark),
        "page_data": {"change": change.pk, "version": change.version, "text": change.text, "polish": polish and polish.pk,
                      "edit": change.edit},
    })


# 3DSRBench's flip decision as the review form words it (benchmarks.protocols.FLIP_DECISIONS)
FLIP_CHOICES = [("", "not decided yet"), ("swap", "swaps (left and right exchange)"), ("same", "stays the same"),
                ("none", "none: the item has no mirrored copy")]


def _picked_tags(fields: list[dict], tags: dict) -> list[dict]:
    """The family's tag picker (annotation/family_tags.py) with the item's values selected."""
    def picked(key, value):
        held = tags.get(key)
        return value in held if isinstance(held, list) else value == held
    return [{**f, "options": [{**o, "selected": picked(f["key"], o["value"])} for o in f["options"]]} for f in fields]


@role_required(roles.REVIEWER)
def review_item(request, item_id):
    item = get_object_or_404(benchmark_selectors.items_for_review(), pk=item_id)
    family = item.benchmark.family
    stimulus = review_selectors.item_stimulus(item)
    return render(request, "frontend/review_item.html", {
        "item": item,
        "viewer": stimulus["viewer"],  # the 3D viewer only for a scene with a scan
        "stimulus": {"images": stimulus["images"], "videos": stimulus["videos"]},
        "history": review_services.item_history(item),
        "answers": review_selectors.independent_answers_of(item),
        "criteria": review_families.question_criteria(family),
        "question_types": review_families.question_types(family),
        "tag_fields": _picked_tags(tag_fields(family), item.tags or {}),
        "flip_choices": FLIP_CHOICES if family == "3dsrbench" and item.choices else [],
        "choice_rows": [{"letter": chr(ord("A") + i), "text": text, "correct": chr(ord("A") + i) in item.answers}
                        for i, text in enumerate(item.choices or [])],
        "own_work": item.author_id == request.user.pk,
        "awaiting_second_review": review_services.awaiting_second_review(item),
        # 3DSRBench's complementary image pairs (review/complements.py)
        "complement_letters": [chr(ord("A") + i) for i in range(len(item.choices))]
        if item.benchmark.family == "3dsrbench" and item.choices else [],
        "complements": benchmark_selectors.complements_of(item),
        "page_data": {"item": item.pk, "version": item.version},
    })


@role_required(roles.REVIEWER)
@require_http_methods(["POST"])
def review_item_complement(request, item_id):
    """The review page's form: the item's question on an uploaded complementary image, written as a
    draft beside it; the new draft's page, or the fault in words."""
    upload = request.FILES.get("image")
    try:
        if upload is not None and upload.size > review_complements.MAX_IMAGE_BYTES:
            raise DomainError("The image is larger than 20 MB.", field="image")
        made = review_complements.add_complementary_image(
            item_id, request.user, image=upload.read() if upload is not None else None,
            scene_id=None if upload is not None else (request.POST.get("scene") or None),
            answers=request.POST.getlist("answers") or None)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("review_item", item_id=made.pk)


@role_required(roles.REVIEWER)
def review_world_frames(request):
    """Crowd world frames waiting for review (Hypo3D Stage 2): approve one per scene, or reject."""
    frames = review_frames.frames_to_review()
    current = review_frames.approved_by_scene({f.scene_id for f in frames})
    return render(request, "frontend/review_world_frames.html", {
        "frames": [{"frame": f, "current": current.get(f.scene_id, "")} for f in frames],
    })


@role_required(roles.REVIEWER)
@require_http_methods(["POST"])
def review_world_frame(request, frame_id, action):
    try:
        review_frames.review_frame(frame_id, action)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("review_world_frames")


@role_required(roles.REVIEWER)
def filter_questions(request):
    drafts, stimuli = review_selectors.drafts_with_stimuli(request.user)
    return render(request, "frontend/review_filtering.html", {
        "drafts": drafts, "stimuli": stimuli,
        "keep_rates": {b.name: review_services.keep_rates(b)
                       for b in review_selectors.benchmarks_with_filter_decisions()},
    })


@role_required(roles.REVIEWER)
def duplicates(request, run_id):
    run = get_object_or_404(review_selectors.dedup_runs(), pk=run_id)
    return render(request, "frontend/review_duplicates.html", {"run": run, "pairs": review_selectors.pairs_of(run)})


@role_required(roles.REVIEWER)
def agreement(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(request, "frontend/review_agreement.html", {
        "benchmark": benchmark,
        "report": review_consensus.agreement_report(benchmark),
        "flagged": benchmark_selectors.flagged_items(benchmark),
    })


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def start_dedup(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    try:
        run = review_dedup.start_dedup(benchmark, request.user, request.POST.get("threshold", 0.8))
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("review_duplicates", run_id=run.pk)


@role_required(roles.ADMIN)
@require_http_methods(["POST"])
def start_polish(request):
    benchmark = get_object_or_404(Benchmark, slug=request.POST.get("benchmark", ""))
    try:
        review_polish.start_polish(benchmark, request.POST.get("model"), request.user)
    except DomainError as exc:
        return error_page(request, exc)
    return redirect("review_queue")

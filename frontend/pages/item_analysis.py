"""The item analysis page for reviewers: per item of a benchmark, difficulty for humans and for
models, discrimination and flags (`results.item_analysis`), filtered by flag and paged; a flagged
approved item is sent back to the review queue (`review.services.send_to_rereview`)."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from benchmarks.models import Benchmark
from core import roles
from core.errors import DomainError
from results.item_analysis import benchmark_item_analysis
from review import selectors as review_selectors
from review import services as review_services

from ..access import role_required
from .common import error_page

PER_PAGE = 50
FLAG_WORDS = {
    "all_right": "everyone right",
    "none_right": "no one right",
    "humans_over_models": "humans ≫ models",
    "models_over_humans": "models ≫ humans",
}


@role_required(roles.REVIEWER)
def item_analysis(request, slug):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    flag = request.GET.get("flag", "any")
    try:
        analysis = benchmark_item_analysis(benchmark, flag)
    except DomainError as exc:
        return error_page(request, exc)
    page = Paginator(analysis["entries"], PER_PAGE).get_page(request.GET.get("page"))
    for entry in page.object_list:
        entry["flag_words"] = [FLAG_WORDS[name] for name in entry["flags"]]
    counts = analysis["counts"]
    return render(request, "frontend/review_item_analysis.html", {
        "benchmark": benchmark,
        "analysis": analysis,
        "flag": flag,
        "page": page,
        "filters": [("any", "any flag", None), *((name, words, counts[name]) for name, words in FLAG_WORDS.items()),
                    ("", "every item", None)],
        # what each item of the page shows: its image with the marks, its paired videos
        "stimuli": review_selectors.stimuli_of([e["item"] for e in page.object_list if e["item"]]),
    })


@role_required(roles.REVIEWER)
@require_POST
def rereview(request, slug, item_id):
    """Send one flagged item back to the review queue; back to the page (same filter and page)."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    get_object_or_404(benchmark.items, pk=item_id)
    try:
        review_services.send_to_rereview(item_id, request.user, request.POST.getlist("flags"),
                                         request.POST.get("note", ""))
    except DomainError as exc:
        return error_page(request, exc)
    messages.success(request, f"Item #{item_id} is back in the review queue.")
    back = urlencode({"flag": request.POST.get("filter", "any"), "page": request.POST.get("page", "1")})
    return redirect(f"{reverse('review_item_analysis', args=[slug])}?{back}#sent-{item_id}")

"""An admin's view of one release: export progress, files per format, diff, dataset card."""

from django.shortcuts import get_object_or_404, render

from benchmarks import selectors as benchmark_selectors
from benchmarks.releases import life
from core import roles

from ..access import role_required


@role_required(roles.ADMIN)
def release_detail(request, release_id):
    release = get_object_or_404(benchmark_selectors.releases_with_links(), pk=release_id)
    return render(request, "frontend/release_detail.html", {
        "release": release,
        "files": life.release_files(release),
    })

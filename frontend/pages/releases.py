"""An admin's view of one release: export progress, files per format, diff, dataset card."""

from django.shortcuts import get_object_or_404, render

from benchmarks import releases
from benchmarks.models import Release
from core import roles

from ..access import role_required


@role_required(roles.ADMIN)
def release_detail(request, release_id):
    release = get_object_or_404(Release.objects.select_related("benchmark", "previous", "job"), pk=release_id)
    return render(request, "frontend/release_detail.html", {
        "release": release,
        "files": releases.release_files(release),
    })

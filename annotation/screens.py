"""What an annotator's page shows of a scene, for benchmarks.media's one access rule: the files of
the task a live lease holds (registered in apps.py)."""

from django.utils import timezone

from benchmarks.media import VIEWER_ROLES
from benchmarks.models import AssetRole

from .models import Assignment, Campaign

# The stimulus of each kind (frontend/pages/annotation.py shows the viewer on every kind but these two).
KIND_ROLES = {Campaign.Kind.CHOICE_IMAGE: {AssetRole.IMAGE}, Campaign.Kind.CHOICE_VIDEO: {AssetRole.VIDEO}}


def shows_asset(user, asset) -> bool:
    """A lease of the user's that has not ended (status leased, before lease_expires_at) on the file's
    scene, whose task shows files of the file's role."""
    kinds = Assignment.objects.filter(
        worker_id=user.pk, scene_id=asset.scene_id, status=Assignment.Status.LEASED,
        lease_expires_at__gte=timezone.now(),
    ).values_list("campaign__kind", flat=True)
    return any(asset.role in KIND_ROLES.get(kind, VIEWER_ROLES) for kind in kinds)


def paired_videos(assets) -> dict | None:
    """The scene's before/after videos as the evaluator's frame-locked player takes them (humaneval's
    stimulus: before is the clock; fps from the probed metadata), or None without both."""
    videos = {a.meta.get("which"): a for a in assets if a.role == AssetRole.VIDEO}
    if not {"before", "after"} <= videos.keys():
        return None
    return {"before": videos["before"].file.url, "after": videos["after"].file.url,
            "fps": videos["before"].meta.get("fps")}

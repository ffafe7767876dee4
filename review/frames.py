"""Review of crowd world frames (Hypo3D Stage 2): a reviewer approves one frame per scene, which
supersedes any frame approved before it, or rejects one. Only the approved frame reaches prompts
(benchmarks/world_frames.py)."""

from django.db import transaction

from benchmarks.models import Scene, WorldFrame
from core.errors import DomainError, NotFound
from scenes.aligned_topview import world_frames_changed

APPROVE, REJECT = "approve", "reject"


def frames_to_review(benchmark=None) -> list[WorldFrame]:
    """Crowd frames waiting for a verdict (of one benchmark, or all), by scene."""
    frames = WorldFrame.objects.filter(status=WorldFrame.Status.SUBMITTED)
    if benchmark is not None:
        frames = frames.filter(scene__benchmark=benchmark)
    return list(frames.select_related("scene__benchmark", "anchor").order_by("scene_id", "pk"))


def approved_by_scene(scene_ids) -> dict[int, str]:
    """The text of each scene's approved frame (what approving another would supersede)."""
    texts: dict[int, list[str]] = {}
    for frame in WorldFrame.objects.filter(scene_id__in=scene_ids, status=WorldFrame.Status.APPROVED).order_by("pk"):
        texts.setdefault(frame.scene_id, []).append(frame.text)
    return {scene_id: " ".join(parts) for scene_id, parts in texts.items()}


@transaction.atomic
def review_frame(frame_id: int, action: str) -> WorldFrame:
    """Approve (the scene's other approved frames become superseded) or reject a frame; the scene's
    row is locked so that two reviewers approving at once leave exactly one approved frame. Approving
    turns the scene's top views into the frame (aligned_topview.world_frames_changed: the superseded
    frames' aligned maps go now, the new ones are rendered by a task once this commits)."""
    if action not in (APPROVE, REJECT):
        raise DomainError("The action is approve or reject.", field="action")
    scene_id = WorldFrame.objects.filter(pk=frame_id).values_list("scene_id", flat=True).first()
    if scene_id is None:
        raise NotFound("No such world frame.", field="frame")
    Scene.objects.select_for_update().filter(pk=scene_id).first()
    frame = WorldFrame.objects.get(pk=frame_id)
    if action == APPROVE:
        WorldFrame.move_all(WorldFrame.objects.filter(scene_id=frame.scene_id).exclude(pk=frame.pk),
                            WorldFrame.Status.SUPERSEDED)  # the scene's approved ones
    decided = WorldFrame.Status.APPROVED if action == APPROVE else WorldFrame.Status.REJECTED
    if frame.status != decided:  # deciding a frame the same way again changes nothing
        frame.move_to(decided)
        frame.save(update_fields=["status"])
    world_frames_changed(frame.scene_id)  # the aligned top views follow the approved frame
    return frame

"""Which world frame of a scene reaches prompts (models, evaluators, exports): its approved frame.
Hypo3D's collection reviews crowd frames: a crowd frame arrives submitted and counts only once a
reviewer approves it, which supersedes the scene's other approved frames (review/frames.py), so one
frame per scene reaches a prompt rather than every submission joined. Imported and staff frames
arrive approved; a staff frame written one sentence per side is that one frame."""

from .models import WorldFrame


def approved(frames) -> list[WorldFrame]:
    """The approved frames among `frames` (e.g. a prefetched `scene.world_frames.all()`), oldest first."""
    return sorted((f for f in frames if f.status == WorldFrame.Status.APPROVED), key=lambda f: f.pk)


def frame_texts(scene) -> list[str]:
    """The sentences of the scene's approved frame; [] for no scene or none approved."""
    return [f.text for f in approved(scene.world_frames.all())] if scene else []

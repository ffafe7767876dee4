"""A scan's posed colour frames (PosedFrame): imported from its RGB-D capture (a ScanNet `.sens`, the
folders ScanNet's SensReader exports, a 3RScan sequence; read by sens.py) and chosen for the
`multi_view:N` / `egocentric:N` inputs of 3D-VLMs, which then see the real camera frames (LLaVA-3D
takes posed RGB-D video) instead of renders of the point cloud.

An import keeps up to `keep` frames, evenly spaced over the capture's frames with a finite pose
(36 by default: the largest view set a run may ask for), each with its pose, intrinsics, timestamp
and the JPEG as the source stores it. It is all or nothing, and importing a scene's frames again
replaces them. A view set of N takes N of the stored frames, evenly spaced (the centres of N equal
slices of the capture); a scene with fewer than N is shown renders."""

import hashlib
from pathlib import Path

from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Count

from benchmarks.models import Benchmark, PosedFrame, Scene
from core.errors import DomainError

from .files import MaterialError, NamedFile
from .renders import MAX_VIEWS
from .sens import PosedColour, RGBDError, evenly_spaced, read_sens, read_sequence, sequence_format

DEFAULT_KEEP = MAX_VIEWS
MAX_KEEP = 360  # a ScanNet JPEG (1296 x 968) is about 200 KB: at most some 70 MB a scene
SOURCES = {"3rscan": PosedFrame.Source.RSCAN_SEQUENCE, "scannet": PosedFrame.Source.SCANNET_EXPORT}


def _scene(benchmark: Benchmark, scene_id: str) -> Scene:
    scene = Scene.objects.filter(benchmark=benchmark, external_id=(scene_id or "").strip()).first()
    if scene is None:
        raise DomainError(f"{benchmark.slug} has no scene {scene_id!r}: import its scan first.", field="scene_id")
    return scene


def _checked_keep(keep) -> int:
    if isinstance(keep, bool) or not isinstance(keep, int) or not 1 <= keep <= MAX_KEEP:
        raise DomainError(f"keep is a whole number of frames from 1 to {MAX_KEEP}.", field="keep")
    return keep


def import_sens(benchmark: Benchmark, scene_id: str, path, *, keep: int = DEFAULT_KEEP) -> list[PosedFrame]:
    """The scene's posed frames from a ScanNet `.sens` file on disk, read in a stream."""
    scene, keep = _scene(benchmark, scene_id), _checked_keep(keep)
    try:
        frames = read_sens(path, keep)
    except RGBDError as exc:
        raise MaterialError([f"{Path(path).name}: {exc}"]) from None
    except OSError as exc:
        raise MaterialError([f"{Path(path).name}: cannot read ({exc.strerror})"]) from None
    return _store(scene, frames, PosedFrame.Source.SENS)


def import_sequence(benchmark: Benchmark, scene_id: str, files: list[NamedFile], *,
                    keep: int = DEFAULT_KEEP) -> list[PosedFrame]:
    """The scene's posed frames from a sequence folder's (or archive's) files: a 3RScan `sequence/` or
    ScanNet's exported `color/`, `pose/` and `intrinsic/` folders."""
    scene, keep = _scene(benchmark, scene_id), _checked_keep(keep)
    content = {f.name: f.content for f in files}
    try:
        frames = read_sequence(content, keep)
    except RGBDError as exc:
        raise MaterialError([f"{scene_id}: {exc}"]) from None
    return _store(scene, frames, SOURCES[sequence_format(content)])


def _store(scene: Scene, frames: list[PosedColour], source: str) -> list[PosedFrame]:
    """The frames as the scene's posed frames, in place of those it had; the old JPEGs are deleted once
    the new rows are committed, the new ones again if writing them fails."""
    written = []
    try:
        with transaction.atomic():
            Scene.objects.select_for_update().get(pk=scene.pk)  # one import of a scene's frames at a time
            replaced = [frame.file for frame in scene.posed_frames.all()]
            scene.posed_frames.all().delete()
            rows = []
            for frame in frames:
                row = PosedFrame(scene=scene, index=frame.index, timestamp=frame.timestamp, pose=frame.pose,
                                 intrinsics=frame.intrinsics, source=source,
                                 sha256=hashlib.sha256(frame.image).hexdigest())
                row.file.save(f"{frame.index:06d}.jpg", ContentFile(frame.image), save=False)
                written.append(row.file)
                rows.append(row)
            created = PosedFrame.objects.bulk_create(rows)
            transaction.on_commit(lambda: [file.storage.delete(file.name) for file in replaced])
    except BaseException:
        for file in written:
            file.storage.delete(file.name)
        raise
    return created


def scenes_with_frames(scene_ids, n: int) -> set[int]:
    """Those of the scenes with at least n posed frames: the ones a view set of n shows them for."""
    return set(Scene.objects.filter(pk__in=scene_ids).annotate(frames=Count("posed_frames"))
               .filter(frames__gte=n).values_list("pk", flat=True))


def posed_view_set(scene: Scene, n: int) -> list[PosedFrame]:
    """n of the scene's posed frames, evenly spaced in capture order; none when it has fewer than n."""
    frames = list(scene.posed_frames.order_by("index"))
    if len(frames) < n:
        return []
    return [frames[position] for position in evenly_spaced(len(frames), n)]

"""Paired before/after videos (M3-Verse): per scene folder the two videos with their facts and
posters, the objects of each state and the operation log."""

import io
import tempfile
from pathlib import PurePosixPath

from PIL import Image

from benchmarks.models import AssetRole, Benchmark, Scene

from .files import MaterialError, NamedFile, all_or_nothing, read_json
from .video import VideoError, probe, sample_frames

STATES = ("before", "after")
OPERATIONS_NAME = "operations.json"


def _state_files(state: str) -> tuple[str, str]:
    return f"{state}.mp4", f"objects_{state}.json"


def _scene_groups(files: list[NamedFile], errors: list[str]) -> dict[str, dict[str, NamedFile]]:
    """Files grouped by scene folder: `scene_800/before.mp4` -> {"scene_800": {"before.mp4": ...}}."""
    groups: dict[str, dict[str, NamedFile]] = {}
    for file in files:
        path = PurePosixPath(file.name)
        if len(path.parts) != 2:
            errors.append(f"{file.name}: expected <scene id>/<file> (before.mp4, after.mp4, objects_before.json, "
                          f"objects_after.json, {OPERATIONS_NAME})")
            continue
        groups.setdefault(path.parts[0], {})[path.name] = file
    return groups


def _probe_video(file: NamedFile, errors: list[str]) -> tuple[dict, bytes] | None:
    """The video's facts and a JPEG poster (its middle frame), or None with the reason in errors."""
    with tempfile.NamedTemporaryFile(suffix=".mp4") as handle:
        handle.write(file.content)
        handle.flush()
        try:
            facts = probe(handle.name)
            if not facts["frames"]:
                raise VideoError("it has no frames")
            png = sample_frames(handle.name, 1, (facts["width"], facts["height"]), facts["duration"])[0]
        except VideoError as exc:
            errors.append(f"{file.name}: not a readable video ({exc})")
            return None
    poster = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(poster, format="JPEG", quality=85)
    return facts, poster.getvalue()


def _check_scene_folder(scene_id: str, folder: dict[str, NamedFile], errors: list[str]):
    """The operation log and probed videos of one scene folder once every file checks out, or None."""
    before = len(errors)
    names = [name for state in STATES for name in _state_files(state)] + [OPERATIONS_NAME]
    errors += [f"{scene_id}/{name}: missing" for name in names if name not in folder]
    errors += [f"{scene_id}/{name}: unexpected file" for name in sorted(folder) if name not in names]
    if len(scene_id) > 100:
        errors.append(f"{scene_id}: a scene id has at most 100 characters")
    if len(errors) > before:
        return None
    states = {state: read_json(folder[_state_files(state)[1]], errors) for state in STATES}
    for state, objects in states.items():
        if objects is not None and not isinstance(objects, list | dict):
            errors.append(f"{folder[_state_files(state)[1]].name}: expected a JSON list or object of objects")
    operations = read_json(folder[OPERATIONS_NAME], errors)
    if operations is not None and (
            not isinstance(operations, list) or not all(isinstance(op, dict) and op for op in operations)):
        errors.append(f"{folder[OPERATIONS_NAME].name}: expected a JSON list of operations (objects)")
    videos = {state: _probe_video(folder[_state_files(state)[0]], errors) for state in STATES}
    return None if len(errors) > before else (operations, videos)


def import_paired_videos(benchmark: Benchmark, files: list[NamedFile]) -> list[Scene]:
    """Per scene folder: before.mp4 / after.mp4 (duration, fps, frame count and a poster each),
    the objects of each state and the operation log (kept as JSON assets). Scenes are created
    when new; a scene that already has videos is refused."""
    errors: list[str] = []
    groups = _scene_groups(files, errors)
    if not groups and not errors:
        errors.append("no scene folders given")
    checked = {scene_id: _check_scene_folder(scene_id, folder, errors) for scene_id, folder in sorted(groups.items())}
    taken = Scene.objects.filter(benchmark=benchmark, external_id__in=groups, assets__role=AssetRole.VIDEO)
    errors += [f"{name}: this scene already has videos" for name in sorted(set(taken.values_list("external_id",
                                                                                                flat=True)))]
    if errors:
        raise MaterialError(errors)
    scenes = []
    with all_or_nothing() as stored:
        for scene_id, (operations, videos) in checked.items():
            scene, _ = Scene.objects.get_or_create(benchmark=benchmark, external_id=scene_id)
            folder = groups[scene_id]
            # Before first: model evaluation reads a scene's videos in id order.
            for state in STATES:
                facts, poster = videos[state]
                video_name, objects_name = _state_files(state)
                video = stored.store(scene, AssetRole.VIDEO, video_name, folder[video_name].content,
                                     {"which": state, **facts})
                poster_asset = stored.store(scene, AssetRole.VIDEO_POSTER, f"{state}_poster.jpg", poster,
                                            {"which": state, "video": video.pk})
                video.meta["poster"] = poster_asset.pk
                video.save(update_fields=["meta"])
                stored.store(scene, AssetRole.SCENE_META, objects_name, folder[objects_name].content,
                             {"kind": "objects", "which": state})
            stored.store(scene, AssetRole.SCENE_META, OPERATIONS_NAME, folder[OPERATIONS_NAME].content,
                         {"kind": "operations", "count": len(operations)})
            scenes.append(scene)
    return scenes

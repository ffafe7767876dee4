"""Camera views rendered from a stored scan, for models that take images instead of point clouds
(Hypo3D Tables 2, 11 and 14 compare top views, camera views and multi-view sets).

Views are rendered offscreen by pyrender (OpenGL; software GL through OSMesa on machines without a
GPU display, which is what the `default` queue's workers are) from the scene's canonical points,
which are already in the aligned frame, so "left of the sofa" in a render means what it means on the
top view. Poses are camera-to-world 4x4 matrices in OpenGL's convention (the camera looks down its
-z axis, +y up); ScanNet and 3RScan pose files use OpenCV's (+z forward, +y down) and are converted.

Two sets are built from a room's extent when no poses are given:
- `multi_view:N`: N cameras on an ellipse inside the room at eye height, each looking at the room's
  centre (the views a person walking around the room would take);
- `egocentric:N`: N cameras at the room's centre at eye height, turning by 360/N degrees.
A set is stored once per scene as `render` assets (PNG) with each view's pose and intrinsics in the
asset's meta, and reused by every run that asks for it."""

import importlib.util
import io
import math
import os

import numpy as np
from PIL import Image

os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")  # before OpenGL is imported: no display here

EYE_HEIGHT = 1.6  # metres above the floor (the room's lowest points)
RADIUS_FRACTION = 0.35  # of the room's half-extent: cameras stay inside the walls
DEFAULT_SIZE = (640, 480)
DEFAULT_YFOV = math.radians(60)
POINT_SIZE = 3.0
SET_KINDS = ("multi_view", "egocentric")
MAX_VIEWS = 36

# OpenCV camera axes (x right, y down, z forward) to OpenGL's (x right, y up, z backward).
OPENCV_TO_OPENGL = np.diag([1.0, -1.0, -1.0, 1.0])


class RenderError(ValueError):
    pass


def parse_view_set(name: str) -> tuple[str, int]:
    """`multi_view:4` -> ("multi_view", 4)."""
    kind, _, count = name.partition(":")
    if kind not in SET_KINDS or not count.isdigit() or not 1 <= int(count) <= MAX_VIEWS:
        raise RenderError(f"a view set is one of {', '.join(k + ':N' for k in SET_KINDS)} with N from 1 to "
                          f"{MAX_VIEWS}, not {name!r}")
    return kind, int(count)


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Camera-to-world pose (OpenGL axes) of a camera at `eye` looking at `target`, world z up."""
    eye, target, up = (np.asarray(v, dtype=float) for v in (eye, target, up))
    backward = eye - target
    backward /= np.linalg.norm(backward)
    right = np.cross(up, backward)
    if np.linalg.norm(right) < 1e-9:  # looking straight up or down: any right will do
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = right, np.cross(backward, right), backward, eye
    return pose


def room_poses(xyz: np.ndarray, kind: str, count: int) -> list[np.ndarray]:
    """The poses of a `multi_view` or `egocentric` set for the room the points span."""
    if not len(xyz):
        raise RenderError("the scene has no points to render")
    lo, hi = xyz.min(axis=0), xyz.max(axis=0)
    centre = (lo + hi) / 2
    eye_z = min(lo[2] + EYE_HEIGHT, hi[2] - 0.1) if hi[2] - lo[2] > 0.2 else centre[2]
    half = (hi[:2] - lo[:2]) / 2
    poses = []
    for k in range(count):
        angle = 2 * math.pi * k / count
        direction = np.array([math.cos(angle), math.sin(angle)])
        if kind == "multi_view":
            eye = np.array([*(centre[:2] + RADIUS_FRACTION * half * direction), eye_z])
            target = np.array([centre[0], centre[1], eye_z - 0.4])  # a little down: the floor and furniture
        else:
            eye = np.array([centre[0], centre[1], eye_z])
            target = np.array([*(centre[:2] + direction), eye_z - 0.3])
        poses.append(look_at(eye, target))
    return poses


def pose_from_file(text: str) -> np.ndarray:
    """A ScanNet / 3RScan pose file (a 4x4 camera-to-world matrix, OpenCV axes) as an OpenGL pose."""
    try:
        matrix = np.array([float(v) for v in text.split()], dtype=float).reshape(4, 4)
    except ValueError:
        raise RenderError("a pose file holds 16 numbers (a 4x4 camera-to-world matrix)") from None
    if not np.all(np.isfinite(matrix)):
        raise RenderError("the pose is not finite (ScanNet marks frames without tracking with -inf)")
    return matrix @ OPENCV_TO_OPENGL


def _load_triton_before_mesa() -> None:
    """Mesa's software GL (llvmpipe, under OSMesa) and Triton each carry their own LLVM: Triton's library
    loaded after Mesa's crashes the process (a segfault), loaded before it does not. A process that
    renders and later loads a vision model (torchvision reaches Triton through torch._dynamo) therefore
    loads Triton first, where it is installed (0.2 s, once)."""
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401


def render_views(xyz: np.ndarray, rgb: np.ndarray, poses: list[np.ndarray], *, size=DEFAULT_SIZE,
                 yfov: float = DEFAULT_YFOV) -> list[bytes]:
    """One PNG per pose of the coloured points."""
    _load_triton_before_mesa()
    import pyrender  # OpenGL loads here, after PYOPENGL_PLATFORM is set

    scene = pyrender.Scene(bg_color=[1.0, 1.0, 1.0, 1.0], ambient_light=[1.0, 1.0, 1.0])
    scene.add(pyrender.Mesh.from_points(np.asarray(xyz, dtype=np.float32), colors=np.asarray(rgb, dtype=np.uint8)))
    camera = scene.add(pyrender.PerspectiveCamera(yfov=yfov, aspectRatio=size[0] / size[1]), pose=np.eye(4))
    renderer = pyrender.OffscreenRenderer(*size, point_size=POINT_SIZE)
    try:
        pictures = []
        for pose in poses:
            scene.set_pose(camera, pose)
            colour, _ = renderer.render(scene, flags=pyrender.RenderFlags.FLAT)
            out = io.BytesIO()
            Image.fromarray(colour).save(out, format="PNG", optimize=False)
            pictures.append(out.getvalue())
        return pictures
    finally:
        renderer.delete()


def intrinsics(size=DEFAULT_SIZE, yfov: float = DEFAULT_YFOV) -> dict:
    focal = size[1] / 2 / math.tan(yfov / 2)
    return {"width": size[0], "height": size[1], "fx": focal, "fy": focal, "cx": size[0] / 2, "cy": size[1] / 2}


def view_set(scene, name: str) -> list:
    """The scene's stored `render` assets of the set `name` (e.g. `multi_view:4`), in view order,
    rendering and storing them first when the scene has none. Idempotent: a set is rendered once."""
    from django.db import transaction

    from benchmarks.models import AssetRole
    from benchmarks.services import store_asset

    from .scans import load_scene_points

    kind, count = parse_view_set(name)
    stored = stored_view_set(scene, name)
    if len(stored) == count:
        return stored
    xyz, rgb, _, _ = load_scene_points(scene)
    poses = room_poses(xyz, kind, count)
    pictures = render_views(xyz, rgb, poses)
    with transaction.atomic():
        for asset in stored:  # a set left half-written by a killed worker is rendered again whole
            asset.file.delete(save=False)
            asset.delete()
        return [
            store_asset(scene, AssetRole.RENDER, f"{kind}-{count}-{index}.png", picture,
                        {"set": name, "index": index, "pose": pose.round(6).tolist(), "intrinsics": intrinsics()})
            for index, (picture, pose) in enumerate(zip(pictures, poses, strict=True))
        ]


def stored_view_set(scene, name: str) -> list:
    from benchmarks.models import AssetRole

    assets = scene.assets.filter(role=AssetRole.RENDER, meta__set=name)
    return sorted(assets, key=lambda asset: asset.meta.get("index", 0))

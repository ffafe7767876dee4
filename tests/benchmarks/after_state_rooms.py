"""A scanned bedroom for the after-state and release-geometry tests (#47): the known room of
tests/annotation/geometry_rooms.py with a synthetic point cloud, each object's points inside its box under its
instance id, and the edits the tests make."""

import math

import numpy as np

from annotation import services as annotation_services
from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from scenes.scans import write_points_ply
from tests.annotation.geometry_rooms import CHAIR, LAMP, OBJECTS, approve_frame, create_objects, move
from tests.factories import ChangeFactory, SceneFactory

POINTS_PER_OBJECT = 400
LEFT_OF_BED = "The chair has been moved from the desk to the left of the bed."
# the moved chair (3) turned a quarter and made half as big again; the lamp (6) removed; a plant (no plant in
# the room: drawn as its box) and a second chair (drawn from a chair of the room) added
EDIT = {"objects": [{"instance_id": CHAIR, "translation": [-3.0, 2.7, 0.0], "rotation": math.pi / 2, "scale": 1.5,
                     "removed": False},
                    {"instance_id": LAMP, "translation": [0.0, 0.0, 0.0], "rotation": 0.0, "scale": 1.0,
                     "removed": True}],
        "added": [{"label": "plant", "center": [5.0, 2.5, 0.3], "size": [0.4, 0.4, 0.6], "yaw": 0.0},
                  {"label": "chair", "center": [3.0, 2.0, 0.45], "size": [0.6, 0.5, 0.9], "yaw": 0.5}],
        "world": None}


def scan_points() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(47)
    xyz, rgb, instance = [], [], []
    for i, _, centre, size, _ in OBJECTS:
        local = rng.uniform(-0.5, 0.5, (POINTS_PER_OBJECT, 3)) * size
        xyz.append(local + centre)
        rgb.append(np.tile([10 * i, 20, 200 - 10 * i], (POINTS_PER_OBJECT, 1)))
        instance.append(np.full(POINTS_PER_OBJECT, i))
    return (np.concatenate(xyz).astype(np.float32), np.concatenate(rgb).astype(np.uint8),
            np.concatenate(instance).astype(np.uint16))


def scanned_room(scene=None):
    """A scene with the bedroom's objects, its approved world frame and its scan (the canonical PLY)."""
    scene = scene or SceneFactory(object_labels=[])
    create_objects(scene)
    approve_frame(scene)
    xyz, rgb, instance = scan_points()
    store_asset(scene, AssetRole.POINT_CLOUD, "scan.ply", write_points_ply(xyz, rgb, instance), {"points": len(xyz)})
    return scene


def moved_chair(scene, **fields):
    """The change "the chair to the left of the bed", its edit checked against its text as a crowd write is."""
    edit = annotation_services.checked_edit(scene, LEFT_OF_BED, "movement", move(CHAIR, -3.0, 2.7))
    return ChangeFactory(scene=scene, raw_text=LEFT_OF_BED, edit=edit, **fields)

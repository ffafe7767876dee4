"""The sandbox benchmark `hypo3d-demo`: the procedural rooms as scenes with their objects, world frames
and viewer assets, so a fresh install has scenes to show."""

from django.db import IntegrityError, transaction

from benchmarks.models import Benchmark, Family, Scene, SceneObject, WorldFrame
from scenes.processing import build_viewer_assets

from .rooms import RoomCloud, generate_room


def build_demo_benchmark(
    slug: str = "hypo3d-demo", n_rooms: int = 3, points_per_room: int = 220_000, seed: int = 0
) -> Benchmark:
    """Create the demo benchmark with its scenes, objects, world frames and assets; idempotent by slug."""
    existing = Benchmark.objects.filter(slug=slug).first()
    if existing:
        return existing
    # Sampling happens before the transaction; encoding and top views run inside it (one code path,
    # scenes.processing), so a failed build leaves no scene without its viewer assets.
    rooms = [generate_room(i, points_per_room, seed) for i in range(n_rooms)]
    name = "Hypo3D demo" if slug == "hypo3d-demo" else f"Hypo3D demo ({slug})"
    try:
        with transaction.atomic():
            benchmark = Benchmark.objects.create(
                slug=slug,
                name=name,
                family=Family.HYPO3D,
                description="Procedurally generated furnished rooms for trying HypoLab without real scans.",
            )
            for room in rooms:
                _create_scene(benchmark, room)
    except IntegrityError:
        # Someone else built it between our check and our insert.
        return Benchmark.objects.get(slug=slug)
    return benchmark


def _create_scene(benchmark: Benchmark, room: RoomCloud) -> Scene:
    scene = benchmark.scenes.create(external_id=room.external_id, caption=room.caption)
    SceneObject.objects.bulk_create(
        SceneObject(
            scene=scene,
            instance_id=obj["instance_id"],
            label=obj["label"],
            center_x=obj["center"][0],
            center_y=obj["center"][1],
            center_z=obj["center"][2],
            size_x=obj["size"][0],
            size_y=obj["size"][1],
            size_z=obj["size"][2],
            yaw=0.0,
        )
        for obj in room.objects
    )
    WorldFrame.objects.create(
        scene=scene,
        anchor=scene.scene_objects.get(instance_id=room.anchor["instance_id"]),
        side=room.side,
        text=room.world_frame_text,
    )
    build_viewer_assets(scene, room.xyz, room.rgb, room.instance, room.objects)
    return scene

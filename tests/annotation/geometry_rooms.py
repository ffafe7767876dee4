"""A small synthetic bedroom with known geometry for the change-geometry tests (#47): a 6 x 5 m room, floor top
at z = 0, metres, z up. Its world frame (the window lies to the left of the scene) is turned a quarter from
the scene's axes: world front is +x, world left is +y, world right is -y."""

from annotation.change_geometry import Box, room_of, world_axes

# (instance_id, label, centre, size, yaw)
OBJECTS = [
    (1, "floor", (3.0, 2.5, -0.05), (6.0, 5.0, 0.1), 0.0),
    (2, "bed", (1.5, 2.5, 0.3), (2.0, 1.6, 0.6), 0.0),
    (3, "chair", (4.5, 1.2, 0.45), (0.5, 0.5, 0.9), 0.0),
    (4, "wardrobe", (5.6, 4.2, 1.0), (0.8, 1.2, 2.0), 0.0),
    (5, "desk", (4.5, 0.4, 0.375), (1.2, 0.6, 0.75), 0.0),
    (6, "lamp", (4.2, 0.4, 0.95), (0.2, 0.2, 0.4), 0.0),
    (7, "window", (3.0, 4.95, 1.5), (1.2, 0.1, 1.2), 0.0),
    (8, "chair", (2.8, 4.0, 0.45), (0.5, 0.5, 0.9), 0.0),
]
WINDOW, CHAIR, LAMP, DESK, WARDROBE = 7, 3, 6, 5, 4


def boxes() -> list[Box]:
    return [Box(i, label, centre, size, yaw) for i, label, centre, size, yaw in OBJECTS]


def room():
    return room_of(boxes())


def axes():
    """The window (+y of the room's centre) is to the left of the scene."""
    return world_axes(next(b for b in boxes() if b.instance_id == WINDOW), room(), "left")


def create_objects(scene) -> None:
    for i, label, (x, y, z), (sx, sy, sz), yaw in OBJECTS:
        scene.scene_objects.create(instance_id=i, label=label, center_x=x, center_y=y, center_z=z,
                                   size_x=sx, size_y=sy, size_z=sz, yaw=yaw)


def approve_frame(scene):
    window = scene.scene_objects.get(instance_id=WINDOW)
    return scene.world_frames.create(anchor=window, side="left", text="The window is to the left of the scene.",
                                     status="approved")


def move(instance_id: int, dx=0.0, dy=0.0, dz=0.0, **extra) -> dict:
    return {"objects": [{"instance_id": instance_id, "translation": [dx, dy, dz], **extra}]}

"""A scan's posed colour frames imported from its RGB-D capture (scenes/rgbd_frames.py):
a ScanNet .sens made here, streamed and subsampled, its poses, intrinsics and timestamps read back;
a truncated file or a lying header refused with nothing written; a 3RScan sequence folder; the
management command."""

import json
import math
import shutil

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import PosedFrame
from core.errors import DomainError
from scenes.files import MaterialError
from scenes.rgbd_frames import import_sens, import_sequence, posed_view_set
from scenes.services import NamedFile, files_from_folder
from tests.factories import SceneFactory
from tests.rgbd_files import COLOUR, INTRINSIC, frames, jpeg, sens_bytes, write_rscan_sequence, write_sens

pytestmark = pytest.mark.django_db

CAMERA = {"width": COLOUR[0], "height": COLOUR[1], "fx": INTRINSIC[0][0], "fy": INTRINSIC[1][1],
          "cx": INTRINSIC[0][2], "cy": INTRINSIC[1][2]}


@pytest.fixture
def scene():
    return SceneFactory(external_id="scene0000_00")


def read_back(frame: PosedFrame) -> bytes:
    with frame.file.open("rb") as handle:
        return handle.read()


def as_float32(matrix):
    return np.asarray(matrix, dtype=np.float32)


def test_a_sens_file_is_streamed_and_its_posed_frames_stored(scene, tmp_path):
    captured = frames(5)
    captured[1]["pose"] = [[-math.inf] * 4] * 4  # tracking lost: ScanNet's mark, the frame is skipped
    path = write_sens(tmp_path / "scene0000_00.sens", captured)

    stored = import_sens(scene.benchmark, "scene0000_00", path, keep=3)

    rows = list(scene.posed_frames.order_by("index"))
    assert [row.pk for row in stored] == [row.pk for row in rows]
    # 3 of the 4 posed frames (0, 2, 3, 4), at the centres of 3 equal slices
    assert [row.index for row in rows] == [0, 3, 4]
    for row in rows:
        source = captured[row.index]
        assert (as_float32(row.pose) == as_float32(source["pose"])).all()
        assert row.intrinsics == CAMERA and row.timestamp == source["timestamp"]
        assert read_back(row) == source["image"] and row.source == PosedFrame.Source.SENS


def test_importing_again_replaces_the_scenes_frames(scene, tmp_path):
    import_sens(scene.benchmark, "scene0000_00", write_sens(tmp_path / "a.sens", frames(4)))
    assert scene.posed_frames.count() == 4
    import_sens(scene.benchmark, "scene0000_00", write_sens(tmp_path / "b.sens", frames(2)))
    assert [row.index for row in scene.posed_frames.order_by("index")] == [0, 1]


@pytest.mark.parametrize("make, says", [
    (lambda: sens_bytes(frames(3))[:-40], "truncated: frame 2's colour and depth"),
    (lambda: sens_bytes(frames(3))[:200], "truncated: the header runs past the end"),
    (lambda: sens_bytes(frames(3), frame_count=2**40), "the header promises 1099511627776 frames"),
    (lambda: sens_bytes(frames(3), frame_count=0), "the file has no frames"),
    (lambda: sens_bytes(frames(3), version=3), "not a ScanNet .sens file of version 4 (version 3)"),
    (lambda: sens_bytes([{**f, "image": b"not a jpeg"} for f in frames(2)]), "frame 0: not a readable JPEG"),
    (lambda: sens_bytes([{**f, "pose": [[math.inf] * 4] * 4} for f in frames(2)]), "no frame has a finite pose"),
])
def test_a_bad_sens_file_is_refused_naming_what_is_wrong_and_nothing_is_written(scene, tmp_path, make, says):
    path = tmp_path / "bad.sens"
    path.write_bytes(make())
    with pytest.raises(MaterialError) as refused:
        import_sens(scene.benchmark, "scene0000_00", path)
    assert says in refused.value.errors[0] and refused.value.errors[0].startswith("bad.sens: ")
    assert not PosedFrame.objects.exists()


def test_a_colour_frame_of_another_size_than_the_header_says_is_refused(scene, tmp_path):
    path = write_sens(tmp_path / "x.sens", [{**f, "image": jpeg(9, (8, 8))} for f in frames(2)])
    with pytest.raises(MaterialError, match="the colour image is 8x8, the header says 32x24"):
        import_sens(scene.benchmark, "scene0000_00", path)
    assert not PosedFrame.objects.exists()


def test_frames_go_only_to_a_scene_that_exists(scene, tmp_path):
    with pytest.raises(DomainError) as refused:
        import_sens(scene.benchmark, "scene9999_00", write_sens(tmp_path / "a.sens", frames(2)))
    assert refused.value.field == "scene_id" and "import its scan first" in refused.value.message


def test_a_3rscan_sequence_folder_is_imported(tmp_path):
    scene = SceneFactory(external_id="0988ea72-eb32-2e61-8344-ef1e8bbc3e5c")
    captured = frames(4)
    folder = write_rscan_sequence(tmp_path / "sequence", captured)

    import_sequence(scene.benchmark, scene.external_id, files_from_folder(folder), keep=36)

    rows = list(scene.posed_frames.order_by("index"))
    assert [row.index for row in rows] == [0, 1, 2, 3]
    for row, source in zip(rows, captured, strict=True):
        assert row.pose == source["pose"] and row.intrinsics == CAMERA and row.timestamp is None
        assert read_back(row) == source["image"] and row.source == PosedFrame.Source.RSCAN_SEQUENCE
    # a view set takes 2 of them, evenly spaced
    assert [frame.index for frame in posed_view_set(scene, 2)] == [1, 3]
    assert posed_view_set(scene, 5) == []  # fewer than asked: the scene is shown renders


def test_a_sequence_with_a_frame_missing_its_pose_is_refused(tmp_path):
    scene = SceneFactory()
    folder = write_rscan_sequence(tmp_path / "sequence", frames(3))
    (folder / "frame-000001.pose.txt").unlink()
    (folder / "frame-000002.pose.txt").write_text("1 2 3")
    with pytest.raises(MaterialError) as refused:
        import_sequence(scene.benchmark, scene.external_id, files_from_folder(folder))
    assert refused.value.errors == [f"{scene.external_id}: frame-000001.color.jpg: no frame-000001.pose.txt; "
                                    "frame-000002.pose.txt: 3 numbers, not a 4x4 (or 3x3) matrix"]
    assert not PosedFrame.objects.exists()


def test_a_scannet_export_folder_is_imported(scene):
    captured = frames(2)
    files = [NamedFile("intrinsic/intrinsic_color.txt", "\n".join(" ".join(map(str, row)) for row in INTRINSIC).encode())]
    for k, frame in enumerate(captured):
        files += [NamedFile(f"color/{k}.jpg", frame["image"]),
                  NamedFile(f"pose/{k}.txt", "\n".join(" ".join(map(str, row)) for row in frame["pose"]).encode())]
    import_sequence(scene.benchmark, "scene0000_00", files)
    rows = list(scene.posed_frames.order_by("index"))
    assert [(row.index, row.source) for row in rows] == [(0, "scannet_export"), (1, "scannet_export")]
    assert rows[1].pose == captured[1]["pose"] and rows[1].intrinsics == CAMERA


def test_the_command_imports_a_sens_file_and_names_a_bad_one(scene, tmp_path, capsys):
    call_command("import_posed_frames", "--benchmark", scene.benchmark.slug, "--scene", "scene0000_00",
                 str(write_sens(tmp_path / "s.sens", frames(3))), "--keep", "2")
    assert json.loads(capsys.readouterr().out) == {"scene": "scene0000_00", "frames": 2, "source": "sens", "errors": []}

    bad = tmp_path / "bad.sens"
    bad.write_bytes(sens_bytes(frames(3), frame_count=10**9))
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_posed_frames", "--benchmark", scene.benchmark.slug, "--scene", "scene0000_00", str(bad))
    [error] = json.loads(capsys.readouterr().out)["errors"]
    assert "the header promises 1000000000 frames" in error
    assert scene.posed_frames.count() == 2  # the frames imported before are kept


def test_the_command_imports_a_zipped_3rscan_sequence(tmp_path, capsys):
    scene = SceneFactory(external_id="0988ea72-eb32-2e61-8344-ef1e8bbc3e5c")
    folder = write_rscan_sequence(tmp_path / "sequence", frames(3))
    archive = shutil.make_archive(str(tmp_path / "sequence"), "zip", tmp_path, "sequence")
    call_command("import_posed_frames", "--benchmark", scene.benchmark.slug, "--scene", scene.external_id, archive)
    assert json.loads(capsys.readouterr().out)["frames"] == 3
    assert [read_back(row) for row in scene.posed_frames.order_by("index")] == [
        (folder / f"frame-{k:06d}.color.jpg").read_bytes() for k in range(3)]

"""Paired before/after videos import with their facts, posters, object states and operation log,
or not at all."""

import json
import shutil

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from PIL import Image

from benchmarks.models import Asset, AssetRole, Scene
from scenes.services import MaterialError, NamedFile, import_paired_videos
from tests.clips import make_clip
from tests.factories import BenchmarkFactory, UserFactory
from tests.needs import need

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def ffmpeg_installed():
    need(bool(shutil.which("ffmpeg")), "ffmpeg")

OBJECTS_BEFORE = [{"objectId": "Mug|1", "objectType": "Mug", "parentReceptacle": "CounterTop|2"}]
OBJECTS_AFTER = [{"objectId": "Mug|1", "objectType": "Mug", "parentReceptacle": "Table|3"}]
OPERATIONS = [{"objectId": "Mug|1", "operation": "move", "parameters": {"to": "Table|3"},
               "before": {"parentReceptacle": "CounterTop|2"}, "after": {"parentReceptacle": "Table|3"}}]


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, bytes]:
    """Two 1-second 10 fps 96x64 test videos, made with ffmpeg."""
    folder = tmp_path_factory.mktemp("clips")
    out = {}
    for which, pattern in (("before", "testsrc"), ("after", "smptebars")):
        path = folder / f"{which}.mp4"
        out[which] = make_clip(path, pattern).read_bytes()
    return out


def scene_files(clips, scene="scene_800", drop=(), **replace) -> list[NamedFile]:
    contents = {"before.mp4": clips["before"], "after.mp4": clips["after"],
                "objects_before.json": json.dumps(OBJECTS_BEFORE).encode(),
                "objects_after.json": json.dumps(OBJECTS_AFTER).encode(),
                "operations.json": json.dumps(OPERATIONS).encode(), **replace}
    return [NamedFile(f"{scene}/{name}", content) for name, content in contents.items() if name not in drop]


def stored_files(settings) -> list:
    media = settings.MEDIA_ROOT
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def test_each_scene_gets_both_videos_with_facts_posters_states_and_operations(clips):
    bench = BenchmarkFactory(family="m3verse")
    [scene] = import_paired_videos(bench, scene_files(clips))
    before, after = scene.assets.filter(role=AssetRole.VIDEO).order_by("id")
    assert (before.meta["which"], after.meta["which"]) == ("before", "after")
    assert before.meta["frames"] == 10 and before.meta["fps"] == 10.0 and abs(before.meta["duration"] - 1.0) < 0.05
    assert (before.meta["width"], before.meta["height"]) == (96, 64)
    poster = Asset.objects.get(pk=after.meta["poster"])
    assert poster.role == AssetRole.VIDEO_POSTER and poster.meta == {"which": "after", "video": after.pk}
    assert Image.open(poster.file.open("rb")).format == "JPEG"
    metadata = {(a.meta["kind"], a.meta.get("which")): json.loads(a.file.read())
                for a in scene.assets.filter(role=AssetRole.SCENE_META)}
    assert metadata == {("objects", "before"): OBJECTS_BEFORE, ("objects", "after"): OBJECTS_AFTER,
                        ("operations", None): OPERATIONS}


def test_each_video_is_probed_once(clips, monkeypatch):
    """A video is opened once for its facts and once for its poster, which reuses the facts' duration."""
    from scenes import video

    opened, open_video = [], video.av.open

    def counted(source, *args, **kwargs):
        opened.append(source)
        return open_video(source, *args, **kwargs)

    monkeypatch.setattr(video.av, "open", counted)
    import_paired_videos(BenchmarkFactory(family="m3verse"), scene_files(clips))
    assert len(opened) == 4  # a probe and a poster per video


@pytest.mark.parametrize(("change", "message"), [
    ({"drop": ("after.mp4",)}, "scene_800/after.mp4: missing"),
    ({"before.mp4": b"\x00\x00\x00\x18ftypmp42 truncated"}, "scene_800/before.mp4: not a readable video"),
    ({"operations.json": b'{"operation": "move"}'}, "scene_800/operations.json: expected a JSON list"),
    ({"objects_after.json": b"[{"}, "scene_800/objects_after.json: not valid JSON"),
])
def test_bad_files_are_named_with_the_reason_and_nothing_is_written(clips, settings, change, message):
    bench = BenchmarkFactory(family="m3verse")
    good = scene_files(clips, scene="scene_801")
    with pytest.raises(MaterialError, match=message):
        import_paired_videos(bench, good + scene_files(clips, **change))
    assert not Scene.objects.exists() and not Asset.objects.exists() and stored_files(settings) == []


def test_a_failure_while_storing_leaves_no_orphan_file(clips, settings, monkeypatch):
    bench = BenchmarkFactory(family="m3verse")
    real_save = Asset.save

    def fail_on_operations(asset, *args, **kwargs):
        if asset.meta.get("kind") == "operations":
            raise RuntimeError("disk full")
        return real_save(asset, *args, **kwargs)

    monkeypatch.setattr(Asset, "save", fail_on_operations)
    with pytest.raises(RuntimeError):
        import_paired_videos(bench, scene_files(clips))
    assert not Asset.objects.exists() and stored_files(settings) == []


def test_a_scene_gets_its_videos_once(clips):
    bench = BenchmarkFactory(family="m3verse")
    import_paired_videos(bench, scene_files(clips))
    with pytest.raises(MaterialError, match="scene_800: this scene already has videos"):
        import_paired_videos(bench, scene_files(clips))


def test_command_takes_a_scene_folder_or_a_folder_of_them(clips, tmp_path, capsys):
    bench = BenchmarkFactory(family="m3verse")
    for file in scene_files(clips, scene="scene_800") + scene_files(clips, scene="scene_900"):
        (tmp_path / file.name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file.name).write_bytes(file.content)
    call_command("import_videos", "--benchmark", bench.slug, str(tmp_path / "scene_800"))
    assert json.loads(capsys.readouterr().out)["scenes"] == ["scene_800"]
    (tmp_path / "scene_900" / "before.mp4").unlink()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_videos", "--benchmark", bench.slug, str(tmp_path))
    out = json.loads(capsys.readouterr().out)
    assert "scene_900/before.mp4: missing" in out["errors"] and "scene_800: this scene already has videos" in out["errors"]


def test_api_imports_one_scene_for_admins(clips, api_client):
    bench = BenchmarkFactory(family="m3verse")
    url = f"/api/v1/benchmarks/{bench.slug}/paired-videos/"

    def body(**drop):
        files = {"before": ("before.mp4", clips["before"]), "after": ("after.mp4", clips["after"]),
                 "objects_before": ("o.json", json.dumps(OBJECTS_BEFORE).encode()),
                 "objects_after": ("o.json", json.dumps(OBJECTS_AFTER).encode()),
                 "operations": ("log.json", json.dumps(OPERATIONS).encode())}
        return {"scene_id": "scene_800", **{k: SimpleUploadedFile(*v) for k, v in files.items() if k not in drop}}

    api_client.force_authenticate(UserFactory(role="annotator"))
    assert api_client.post(url, body(), format="multipart").status_code == 403
    api_client.force_authenticate(UserFactory(is_staff=True))
    response = api_client.post(url, body(after=True), format="multipart")
    assert response.status_code == 400 and response.json() == {"files": ["scene_800/after.mp4: missing"]}
    response = api_client.post(url, body(), format="multipart")
    assert response.status_code == 201 and response.json()["scenes"][0]["external_id"] == "scene_800"

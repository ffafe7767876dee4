"""Image sets import whole (one scene per image, thumbnails, mirrored twins, items) or not at all."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from PIL import Image, ImageDraw

from benchmarks.models import Asset, AssetRole, Item, Scene
from core.errors import DomainError
from scenes.services import MaterialError, NamedFile, import_image_set
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db

ARROW = {"type": "arrow", "from": [10, 20], "to": [100, 30], "colour": "#e33", "label": "A"}
BOX = {"type": "box", "x": 5, "y": 6, "width": 40, "height": 30, "label": "cup"}
CAUSAL = [
    {"id": "Collision_Level_1_0", "image": "balls.png",
     "question": "Will the balls collide? (A) Yes (B) No (C) Not sure", "answer": "(A)", "not_sure": "(C)"},
    {"id": "Occlusion_Level_2_3", "image": "renders/cube.jpg",
     "question": "Is the cube hidden? (A) Yes (B) No (C) Not sure", "answer": "B", "not_sure": "C"},
]


def picture(fmt="PNG", size=(640, 400)) -> bytes:
    image = Image.new("RGB", size, (240, 240, 240))
    ImageDraw.Draw(image).rectangle((0, 0, 60, 60), fill=(200, 20, 20))  # red mark in the top-left corner
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def image_set(items=CAUSAL, overlays=None) -> list[NamedFile]:
    files = [NamedFile("balls.png", picture()), NamedFile("renders/cube.jpg", picture("JPEG", (200, 100))),
             NamedFile("items.jsonl", "\n".join(json.dumps(row) for row in items).encode())]
    if overlays is not None:
        files.append(NamedFile("overlays.json", json.dumps(overlays).encode()))
    return files


def pixels(asset: Asset) -> Image.Image:
    return Image.open(asset.file.open("rb")).convert("RGB")


def stored_files(settings) -> list:
    media = settings.MEDIA_ROOT
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def test_images_become_scenes_with_thumbnails_mirrored_twins_and_their_items():
    bench = BenchmarkFactory(family="causalspatial")
    report = import_image_set(bench, image_set(overlays={"balls.png": [ARROW, BOX]}), flip=True)
    assert (report.images, report.flipped, report.items) == (2, 2, 2)
    scene = Scene.objects.get(benchmark=bench, external_id="balls.png")
    original = scene.assets.get(role=AssetRole.IMAGE)
    assert original.meta["overlays"] == [ARROW, BOX] and (original.meta["width"], original.meta["height"]) == (640, 400)
    twin = scene.assets.get(role=AssetRole.IMAGE_FLIPPED)
    assert twin.meta["flipped_from"] == original.pk and original.meta["flipped"] == twin.pk
    assert pixels(original).getpixel((5, 5)) == (200, 20, 20) and pixels(twin).getpixel((634, 5)) == (200, 20, 20)
    assert pixels(twin).getpixel((5, 5)) == (240, 240, 240)
    mirrored_arrow, mirrored_box = twin.meta["overlays"]
    assert mirrored_arrow["from"] == [630, 20] and mirrored_arrow["to"] == [540, 30]
    assert mirrored_box["x"] == 640 - 5 - 40 and mirrored_box["label"] == "cup"
    thumbnail = scene.assets.get(role=AssetRole.THUMBNAIL)
    assert thumbnail.meta["of"] == original.pk and max(pixels(thumbnail).size) == 320
    item = Item.objects.get(external_id="Occlusion_Level_2_3")
    assert item.scene.external_id == "renders/cube.jpg" and item.answers == ["B"]
    assert Item.objects.get(external_id="Collision_Level_1_0").scene == scene


def test_without_flip_there_is_no_twin_and_sets_from_zip_lose_their_top_folder(tmp_path, capsys):
    bench = BenchmarkFactory(family="causalspatial")
    archive = tmp_path / "set.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for file in image_set():
            handle.writestr(f"causal_set/{file.name}", file.content)
        handle.writestr("causal_set/README.txt", "notes")
    call_command("import_images", "--benchmark", bench.slug, str(archive))
    out = json.loads(capsys.readouterr().out)
    assert (out["images"], out["flipped"], out["items"], out["skipped"]) == (2, 0, 2, ["README.txt"])
    assert not Asset.objects.filter(role=AssetRole.IMAGE_FLIPPED).exists()
    assert set(Scene.objects.values_list("external_id", flat=True)) == {"balls.png", "renders/cube.jpg"}


def test_spatial457_questions_and_3dsrbench_tsv_find_their_images_by_file_name():
    spatial = BenchmarkFactory(family="spatial457")
    questions = {"split": "L2_objects", "questions": [
        {"image_filename": "balls.png", "question": "How many buses are there?", "answer": "2", "question_index": 0}]}
    files = [NamedFile("images/balls.png", picture()), NamedFile("items.json", json.dumps(questions).encode())]
    assert import_image_set(spatial, files).items == 1
    assert Item.objects.get(benchmark=spatial).scene.external_id == "images/balls.png"
    srbench = BenchmarkFactory(family="3dsrbench")
    tsv = ("index\tqid\tquestion\tA\tB\tC\tD\tanswer\tcategory\timage\n"
           "0\tVIN6MS3J\tIs the cup higher than the lamp?\tyes\tno\t\t\tA\theight_higher\tcup.jpg\n")
    report = import_image_set(srbench, [NamedFile("cup.jpg", picture("JPEG")), NamedFile("items.tsv", tsv.encode())],
                              flip=True)
    assert (report.items, report.flipped) == (1, 1)
    assert Item.objects.get(benchmark=srbench).scene.external_id == "cup.jpg"
    assert Asset.objects.get(role=AssetRole.IMAGE_FLIPPED, scene__benchmark=srbench).file.name.endswith("_flip.jpg")


@pytest.mark.parametrize(("files", "message"), [
    ([NamedFile("balls.png", picture()[:300]), *image_set()[1:]], "balls.png: not a readable image"),
    (image_set(items=[*CAUSAL, {**CAUSAL[0], "id": "Collision_Level_1_1", "image": "gone.png"}]),
     "items.jsonl: record 3: image 'gone.png' is not in the set"),
    (image_set(items=[{**CAUSAL[0], "image": ""}]), "items.jsonl: record 1: names no image"),
    (image_set(overlays={"balls.png": [{"type": "circle"}]}), "overlays.json: expected"),
    (image_set(overlays={"nope.png": [ARROW]}), "overlays.json: 'nope.png' is not an image of the set"),
    (image_set()[:2], "exactly one items file"),
])
def test_bad_files_are_named_with_the_reason_and_nothing_is_written(settings, files, message):
    bench = BenchmarkFactory(family="causalspatial")
    with pytest.raises(MaterialError, match=message):
        import_image_set(bench, files, flip=True)
    assert not Scene.objects.exists() and not Asset.objects.exists() and stored_files(settings) == []


def test_an_item_the_family_mapping_refuses_rolls_back_the_stored_images(settings):
    bench = BenchmarkFactory(family="causalspatial")
    bad = [CAUSAL[0], {**CAUSAL[1], "id": "not-an-id"}]
    with pytest.raises(MaterialError, match="items.jsonl: record 2: id 'not-an-id' is not like Collision_Level_1_0"):
        import_image_set(bench, image_set(items=bad), flip=True)
    assert not Scene.objects.exists() and not Item.objects.exists() and stored_files(settings) == []


def test_an_image_is_imported_once_and_only_into_image_families():
    bench = BenchmarkFactory(family="causalspatial")
    import_image_set(bench, image_set())
    with pytest.raises(MaterialError, match="balls.png: already imported"):
        import_image_set(bench, image_set())
    with pytest.raises(DomainError, match="Image sets belong to"):
        import_image_set(BenchmarkFactory(family="hypo3d"), image_set())


def test_command_reports_a_bad_set(tmp_path, capsys):
    bench = BenchmarkFactory(family="causalspatial")
    for file in image_set(items=[{**CAUSAL[0], "image": "gone.png"}]):
        (tmp_path / file.name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file.name).write_bytes(file.content)
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_images", "--benchmark", bench.slug, "--flip", str(tmp_path))
    assert "record 1: image 'gone.png' is not in the set" in capsys.readouterr().out


def test_api_takes_an_archive_or_files_for_admins(api_client):
    bench = BenchmarkFactory(family="causalspatial")
    url = f"/api/v1/benchmarks/{bench.slug}/image-sets/"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as handle:
        for file in image_set():
            handle.writestr(file.name, file.content)
    api_client.force_authenticate(UserFactory(role="reviewer"))
    archive = SimpleUploadedFile("set.zip", buffer.getvalue())
    assert api_client.post(url, {"archive": archive}, format="multipart").status_code == 403
    api_client.force_authenticate(UserFactory(is_staff=True))
    response = api_client.post(url, {"archive": SimpleUploadedFile("set.zip", b"not a zip")}, format="multipart")
    assert response.status_code == 400 and response.json()["files"][0].startswith("set.zip: not a readable .zip")
    response = api_client.post(url, {"archive": SimpleUploadedFile("set.zip", buffer.getvalue()), "flip": "true"},
                               format="multipart")
    assert response.status_code == 201 and response.json()["flipped"] == 2
    other = BenchmarkFactory(family="causalspatial")
    files = [SimpleUploadedFile("balls.png", picture())]
    items = SimpleUploadedFile("my_items.jsonl", json.dumps(CAUSAL[0]).encode())
    response = api_client.post(f"/api/v1/benchmarks/{other.slug}/image-sets/", {"files": files, "items": items},
                               format="multipart")
    assert response.status_code == 201 and response.json()["items"] == 1

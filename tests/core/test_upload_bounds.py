"""Uploads are bounded, each bound a 400 (issue #34): a .zip that unpacks past IMPORT_MAX_UNPACKED_BYTES,
an image past Pillow's pixel bound, JSON nested too deep (or holding a NUL) in an uploaded items file,
and an upload announced with a filename or sha256 that is not text."""

import io
import zipfile

import pytest
from django.test import Client
from PIL import Image

from benchmarks.models import Scene
from tests.factories import BenchmarkFactory, UserFactory

pytestmark = pytest.mark.django_db


def png(size=(8, 8)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size).save(out, format="PNG")
    return out.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.fixture
def admin():
    client = Client()
    client.force_login(UserFactory(role="admin"))
    return client


def import_archive(admin, benchmark, members):
    archive = io.BytesIO(zipped(members))
    archive.name = "set.zip"
    return admin.post(f"/api/v1/benchmarks/{benchmark.slug}/image-sets/", {"archive": archive})


def test_a_zip_that_unpacks_past_the_bound_is_refused(admin, settings):
    settings.IMPORT_MAX_UNPACKED_BYTES = 50_000
    benchmark = BenchmarkFactory(family="spatial457")
    refused = import_archive(admin, benchmark, {"a.png": png(), "padding.bin": bytes(60_000)})
    assert refused.status_code == 400 and "unpacks to more than 50000 bytes" in str(refused.json()["files"])
    assert not Scene.objects.filter(benchmark=benchmark).exists()
    assert "unpacks" not in str(import_archive(admin, benchmark, {"a.png": png()}).content)


def test_an_image_past_the_pixel_bound_is_refused(admin, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # 2x this is Pillow's error: 64 x 64 passes it
    benchmark = BenchmarkFactory(family="spatial457")
    items = b'{"image": "big.png", "question": "How many?", "answers": ["2"]}\n'
    refused = import_archive(admin, benchmark, {"big.png": png((64, 64)), "items.jsonl": items})
    assert refused.status_code == 400 and "big.png" in str(refused.json()["files"])
    assert not Scene.objects.filter(benchmark=benchmark).exists()


@pytest.mark.parametrize("items,words", [
    ('{"image": "a.png", "question": "q", "answers": ' + "[" * 5000 + "]" * 5000 + "}", "deeper"),
    ('{"image": "a.png", "question": "q\\u0000", "answers": ["x"]}', "NUL"),
])
def test_json_in_an_uploaded_items_file_is_checked(admin, items, words):
    benchmark = BenchmarkFactory(family="spatial457")
    refused = import_archive(admin, benchmark, {"a.png": png(), "items.jsonl": items.encode()})
    assert refused.status_code == 400 and words in str(refused.json()), refused.json()
    assert not Scene.objects.filter(benchmark=benchmark).exists()


@pytest.mark.parametrize("field", ["filename", "sha256", "role"])
def test_an_upload_announced_with_a_value_that_is_not_text_is_refused(admin, field):
    announced = {"role": "image", "filename": "a.png", "size": 10, "sha256": "0" * 64, field: ["not", "text"]}
    refused = admin.post("/api/v1/uploads/", announced, content_type="application/json")
    assert refused.status_code == 400 and field in refused.json()

"""#44: images are checked for their pixel count before anything is decoded: a tiny PNG claiming
30000x30000 on the complement API is a 400 naming `image` (it was a 500, a decompression bomb), and
nothing is written."""

import struct
import zlib

import pytest

from benchmarks.models import Item, Scene
from core import roles
from tests.factories import BenchmarkFactory, SceneFactory, UserFactory

pytestmark = pytest.mark.django_db


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def claimed_png(width: int, height: int) -> bytes:
    """A few hundred bytes whose header claims width x height pixels."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
            + chunk(b"IEND", b""))


@pytest.mark.parametrize("size", [(30000, 30000), (8000, 8000)])
def test_a_huge_claimed_image_on_the_complement_api_is_refused_before_decoding(client, size):
    import io

    benchmark = BenchmarkFactory(family="3dsrbench")
    original = Item.objects.create(benchmark=benchmark, scene=SceneFactory(benchmark=benchmark), question="Higher?",
                                   choices=["yes", "no"], answers=["A"], answer_format="single", status="approved")
    client.force_login(UserFactory(role=roles.REVIEWER))
    scenes = Scene.objects.count()
    answer = client.post(f"/api/v1/items/{original.pk}/complement/",
                         {"image": io.BytesIO(claimed_png(*size)), "answers": '["B"]'})
    assert answer.status_code == 400 and "image" in answer.json() and "pixels" in answer.json()["image"][0]
    assert Item.objects.count() == 1 and Scene.objects.count() == scenes

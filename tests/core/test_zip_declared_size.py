"""#44: the zip check raises without allocating: a member declaring more than the unpack limit is
refused before anything is read (a 131-byte zip declaring 3.75 GiB took the server to 2.3 GB before
its 400), and a member whose declared size lies still stops one byte past the limit."""

import io
import struct
import tracemalloc
import zipfile

import pytest

from scenes.files import MaterialError, files_from_zip


def zipped(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("scene/points.ply", data)
    return buffer.getvalue()


def test_a_member_declaring_more_than_the_limit_is_refused_without_allocating(settings):
    settings.IMPORT_MAX_UNPACKED_BYTES = 64 * 2**20
    bomb = zipped(b"\0" * (80 * 2**20))
    assert len(bomb) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(MaterialError) as refused:
            files_from_zip("bomb.zip", bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "IMPORT_MAX_UNPACKED_BYTES" in str(refused.value.args[0])
    assert peak < 8 * 2**20, peak  # it was the whole limit


def test_a_member_whose_declared_size_lies_stops_at_the_limit(settings):
    settings.IMPORT_MAX_UNPACKED_BYTES = 2**20
    archive = bytearray(zipped(b"\0" * (3 * 2**20)))
    for header, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size, local and central
        at = archive.index(header) + offset
        archive[at:at + 4] = struct.pack("<I", 100)
    with pytest.raises(MaterialError):
        files_from_zip("liar.zip", bytes(archive))

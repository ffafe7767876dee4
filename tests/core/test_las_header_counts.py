"""#44: LAS read with the header's counts checked against the file size, on every path: a small file
whose header claims 4.29e9 points is refused by name (it was a MemoryError: LAS was read whole on the
bytes path) before any point is allocated; a sound file still reads."""

import io
import struct

import laspy
import numpy as np
import pytest

from scenes.las import read_las, read_las_file
from scenes.scans import ScanError


def las_bytes(n=10) -> bytes:
    cloud = laspy.LasData(laspy.LasHeader(point_format=3, version="1.2"))
    cloud.x, cloud.y, cloud.z = np.arange(n, dtype=float), np.arange(n, dtype=float), np.arange(n, dtype=float)
    buffer = io.BytesIO()
    cloud.write(buffer)
    return buffer.getvalue()


def lying(data: bytes) -> bytes:
    """The header's point count (LAS 1.2: uint32 at byte 107) set to 2**32 - 1."""
    return data[:107] + struct.pack("<I", 2**32 - 1) + data[111:]


def test_a_header_claiming_billions_of_points_is_refused_on_the_bytes_path():
    assert len(read_las(las_bytes())[0]) == 10
    with pytest.raises(ScanError, match="promises 4294967295 points"):
        read_las(lying(las_bytes()))


def test_and_on_the_file_path(tmp_path):
    path = tmp_path / "cloud.las"
    path.write_bytes(las_bytes())
    assert len(read_las_file(path)[0]) == 10
    path.write_bytes(lying(las_bytes()))
    with pytest.raises(ScanError, match="promises 4294967295 points"):
        read_las_file(path)

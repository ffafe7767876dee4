"""What every material import stands on: the input files (from a folder or a .zip archive), the
error that lists each unusable file, and writing all or nothing.

Each import checks every file first and reports each problem as `file: reason`; only when all of
them are usable does it write, in one transaction. Files written to storage before a failure are
deleted again, so a failed import leaves neither rows nor bytes behind. Layouts and worked
examples: docs/IMPORT.md."""

import io
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction

from benchmarks.models import Asset, Scene
from benchmarks.services import store_asset
from core.errors import DomainError
from core.validation import load_json


@dataclass(frozen=True)
class NamedFile:
    """An input file: its name (a relative path inside a folder or archive) and its bytes."""

    name: str
    content: bytes


class MaterialError(DomainError):
    """One or more input files are unusable; `errors` holds one 'file: reason' per problem."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors), field="files")
        self.errors = errors

    def as_dict(self) -> dict:
        return {"files": self.errors}


class StoredFiles:
    """Assets written during one import. A rolled-back transaction removes their rows but not
    their bytes on storage, so on failure the files are deleted here."""

    def __init__(self):
        self.assets: list[Asset] = []

    def store(self, scene: Scene, role: str, filename: str, content: bytes, meta: dict) -> Asset:
        asset = store_asset(scene, role, filename, content, meta)
        self.assets.append(asset)
        return asset

    def delete_files(self) -> None:
        for asset in self.assets:
            asset.file.storage.delete(asset.file.name)


@contextmanager
def all_or_nothing():
    stored = StoredFiles()
    try:
        with transaction.atomic():
            yield stored
    except BaseException:
        stored.delete_files()
        raise


def read_json(file: NamedFile, errors: list[str]):
    try:
        return load_json(file.content)
    except (ValueError, UnicodeDecodeError) as exc:  # UnstorableJSON too: too deep, NUL, lone surrogate
        errors.append(f"{file.name}: not valid JSON ({exc})")
        return None


def files_from_folder(folder: Path) -> list[NamedFile]:
    """Every non-hidden file under the folder, named by its path relative to it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MaterialError([f"{folder}: not a folder"])
    return [
        NamedFile(path.relative_to(folder).as_posix(), path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]


def _unpacked(name: str, archive: zipfile.ZipFile, limit: int) -> list[tuple[PurePosixPath, bytes]]:
    """The archive's members, unpacked within `limit` bytes in all: a member declaring more than is
    left is refused before anything is read or allocated, and each read stops one byte past what is
    left (a member's declared size may lie), so a zip bomb costs at most the limit."""
    entries, left = [], limit
    for info in archive.infolist():
        if info.is_dir() or info.filename.startswith("__MACOSX/"):
            continue
        if info.file_size > left:
            raise MaterialError([f"{name}: unpacks to more than {limit} bytes (IMPORT_MAX_UNPACKED_BYTES)"])
        with archive.open(info) as member:
            data = member.read(left + 1)
        if len(data) > left:
            raise MaterialError([f"{name}: unpacks to more than {limit} bytes (IMPORT_MAX_UNPACKED_BYTES)"])
        left -= len(data)
        entries.append((PurePosixPath(info.filename), data))
    return entries


def files_from_zip(name: str, content: bytes) -> list[NamedFile]:
    """The files of a .zip archive; a single top folder that holds everything is dropped."""
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            entries = _unpacked(name, archive, settings.IMPORT_MAX_UNPACKED_BYTES)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise MaterialError([f"{name}: not a readable .zip archive ({exc})"]) from None
    unsafe = [str(path) for path, _ in entries if path.is_absolute() or ".." in path.parts]
    if unsafe:
        raise MaterialError([f"{name}: entries outside the archive folder: {', '.join(unsafe[:3])}"])
    entries = [(path, data) for path, data in entries if not any(p.startswith(".") for p in path.parts)]
    tops = {path.parts[0] for path, _ in entries if len(path.parts) > 1}
    strip = len(tops) == 1 and all(len(path.parts) > 1 for path, _ in entries)
    return [NamedFile(PurePosixPath(*path.parts[strip:]).as_posix(), data) for path, data in entries]

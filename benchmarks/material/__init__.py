"""A benchmark's material: scans (alignment, oriented boxes), image sets, paired videos, and what is
built from them for the pages and the models (viewer level-of-detail files, top views).

The importers' entry points are the package's face; the modules behind them are its rooms."""

from .files import MaterialError, NamedFile, files_from_folder, files_from_zip
from .image_sets import import_image_set
from .paired_videos import import_paired_videos
from .scan_import import detect_scan_format, import_3rscan, import_scan, import_scan_files

__all__ = [
    "MaterialError",
    "NamedFile",
    "detect_scan_format",
    "files_from_folder",
    "files_from_zip",
    "import_3rscan",
    "import_image_set",
    "import_paired_videos",
    "import_scan",
    "import_scan_files",
]

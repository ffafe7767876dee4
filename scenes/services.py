"""The importers' entry points, the scenes app's face for other apps, the API, the admin and the
commands; the modules beside it are its rooms."""

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

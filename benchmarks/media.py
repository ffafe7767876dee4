"""Who may read a stored file, and the view that serves the local media folder only to them.

One function decides, `may_read_asset`, for the local /media/ view, the download API (and its
signed-out token link) and the presigned S3 URLs it hands out:

- reviewers and admins: every file (release files, scene metadata, renders, sources);
- a participant (an annotator, an evaluator): exactly the files their screen shows now, which the
  stage that shows them says (`register_screen`): an annotator's live lease (the viewer's files on a
  scene task, the images or videos of an image or video task); an evaluator's session, while it is
  active and before its deadline: the item on screen, the next item's stimulus (fetched ahead), and
  an answered item the study lets them go back to. Only stimulus roles (`STIMULUS_ROLES`) are ever
  shown: scene metadata (objects_after.json, operations.json state the answers), renders, the source
  scan, posters, thumbnails and exports never reach a participant;
- the object of an upload not yet checked (an `Upload.key` with no Asset): its uploader and admins.

Local storage (the embedded default): `asset.file.url` stays `/media/<name>`, the URL pages already
embed; `serve_media` looks the name up (Asset, else a pending Upload) and checks the signed-in user
on every request, byte ranges included. The browser sends the session cookie with same-origin
`<img>`, `<video>` and `fetch()` requests, so the viewer and the video player need nothing new; a
URL is worth nothing without the cookie of someone allowed (a shared link, or a lease that has
ended, stops working at once), and it stays the same across pages, so the browser's cache keeps
working (`Cache-Control: private`). Anyone not allowed, anonymous or signed in, gets 404, the
answer a name that does not exist gets: a response never says whether a file exists.

S3: the bucket stays private (objects are written with no ACL, so nobody reads them without a
signature); the only URLs that work are presigned GETs, which `asset.file.url` gives on pages and
API views that show the file to their user (an item's stimulus, an annotation task, review and
admin pages) and `uploads.download_url` after `may_read_asset`. The viewer's point file is the
exception: pages name its download API URL (`uploads.lasting_url`), which the viewer reads octree
nodes through for as long as it stays open, each range checked here and redirected to a fresh
signature.

The stages register what their screens show from their AppConfig.ready(), so this module imports
neither `annotation` nor `humaneval`.
"""

import mimetypes
import os
import re
from collections.abc import Callable, Iterator

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.utils._os import safe_join
from django.views.decorators.http import require_safe

from core import roles

from .models import Asset, AssetRole, Upload

# What a participant's screen may show of a scene: the viewer's files, images (and their mirrored
# twins) and videos. Every other role is for staff only.
VIEWER_ROLES = frozenset({AssetRole.VIEWER_POINTS, AssetRole.TOPVIEW_PLAIN, AssetRole.TOPVIEW_SEMANTIC})
STIMULUS_ROLES = VIEWER_ROLES | {AssetRole.IMAGE, AssetRole.IMAGE_FLIPPED, AssetRole.VIDEO}
# Files whose bytes state answers: release files (gold) and scene metadata (M3-Verse's object lists
# and operation log). A signed-out download link never serves them (uploads.local_download).
ANSWER_ROLES = frozenset({AssetRole.EXPORT, AssetRole.SCENE_META})
# Every stored name comes from models.asset_upload_to: assets/scenes/<id>/... or assets/misc/...
SCENE_NAME = re.compile(r"^assets/scenes/(\d{1,18})/")
MISC_PREFIX = "assets/misc/"
# Names never change their bytes (a new file gets a new random folder): a browser may keep them.
ASSET_CACHE_CONTROL = "private, max-age=3600"
CHUNK_BYTES = 1024 * 1024
RANGE_PATTERN = re.compile(r"^bytes=(\d*)-(\d*)$")


# --- the rules -----------------------------------------------------------------------------------

# `shows(user, asset) -> bool`: does this stage's screen show the user this stimulus file now?
_SCREENS: list[Callable] = []


def register_screen(shows: Callable) -> None:
    """A stage that shows participants scene files says which ones (once, from AppConfig.ready)."""
    if shows not in _SCREENS:
        _SCREENS.append(shows)


def on_a_screen(user, asset: Asset) -> bool:
    """A stimulus file of a scene that a participant's screen shows them now."""
    if asset.role not in STIMULUS_ROLES or asset.scene_id is None:
        return False
    return any(shows(user, asset) for shows in _SCREENS)


def may_read_asset(user, asset: Asset) -> bool:
    if user is None or not user.is_authenticated:
        return False
    if roles.has_role(user, roles.REVIEWER):  # reviewers, admins and staff
        return True
    return on_a_screen(user, asset)


def assets_named(name: str) -> list[Asset]:
    """The rows stored under `name` (several rows may share one file), found through the scene index."""
    match = SCENE_NAME.match(name)
    if match:
        rows = Asset.objects.filter(scene_id=int(match[1]), file=name)
    elif name.startswith(MISC_PREFIX):
        rows = Asset.objects.filter(scene__isnull=True, file=name)
    else:
        return []
    return list(rows.only("id", "scene_id", "role", "file"))


def may_read_name(user, name: str) -> tuple[bool, bool]:
    """(allowed, is_asset) for the stored file `name`: an Asset's rules, else a pending upload's."""
    if not user.is_authenticated:
        return False, False
    assets = assets_named(name)
    if assets:
        return any(may_read_asset(user, asset) for asset in assets), True
    if not (SCENE_NAME.match(name) or name.startswith(MISC_PREFIX)):
        return False, False
    upload = Upload.objects.filter(key=name, status=Upload.Status.PENDING).only("created_by_id").first()
    if upload is None:
        return False, False
    return upload.created_by_id == user.pk or roles.has_role(user, roles.ADMIN), False


# --- local files with HTTP ranges ------------------------------------------------------------------
#
# Browsers seek in a video by asking for byte ranges; a server that ignores Range leaves the video
# unseekable (currentTime snaps back to 0). The point-cloud viewer reads each node of an octree file
# (HLPC v3) as one range, every one checked like the whole file. S3 answers ranges itself; local
# files need this.


def _read_span(handle, length: int) -> Iterator[bytes]:
    with handle:
        while length > 0:
            chunk = handle.read(min(CHUNK_BYTES, length))
            if not chunk:
                return
            length -= len(chunk)
            yield chunk


def ranged_file_response(request, handle, size: int, filename: str) -> HttpResponse:
    """The whole file, or the single byte range the request asks for (206)."""
    content_type = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    match = RANGE_PATTERN.match(request.headers.get("Range", "").strip())
    if not match or not (match[1] or match[2]):
        response = FileResponse(handle, content_type=content_type, filename=filename)
    else:
        start, end = (int(match[1]), int(match[2] or size - 1)) if match[1] else (max(0, size - int(match[2])), size - 1)
        end = min(end, size - 1)
        if start > end:
            handle.close()
            response = HttpResponse(status=416)
            response["Content-Range"] = f"bytes */{size}"
            return response
        handle.seek(start)
        response = StreamingHttpResponse(_read_span(handle, end - start + 1), status=206, content_type=content_type)
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(end - start + 1)
    response["Accept-Ranges"] = "bytes"
    return response


@require_safe
def serve_media(request, path: str) -> HttpResponse:
    """MEDIA_URL on local storage: the file to those `may_read_name` allows, 404 to everyone else."""
    allowed, is_asset = may_read_name(request.user, path)
    if not allowed:
        raise Http404("No such file.")
    try:
        handle = open(safe_join(settings.MEDIA_ROOT, path), "rb")  # the response closes it
    except (OSError, SuspiciousFileOperation):
        raise Http404("No such file.") from None
    size = os.fstat(handle.fileno()).st_size
    response = ranged_file_response(request, handle, size, path.rsplit("/", 1)[-1])
    # A pending upload's bytes may still be replaced by a retried PUT.
    response["Cache-Control"] = ASSET_CACHE_CONTROL if is_asset else "private, no-store"
    return response

"""Browser uploads straight to storage, checked downloads through short-lived signed URLs.

An upload is announced first (role, name, size, sha256) and answered with a URL the browser PUTs
the bytes to: a presigned S3 URL when the default storage is a bucket, or a signed same-origin
Django URL on the embedded default (local folder). Completing it streams the stored object
through SHA-256 and only then records an Asset; a mismatch deletes the object. An upload of up to
INLINE_CHECK_BYTES is checked within the completing request; a larger one (up to 5 GiB, a minute of
hashing) is checked by a task as its core.Job ("upload_check"), which the uploader follows. Downloads redirect
to a URL that stops working after `DOWNLOAD_URL_EXPIRY_S`, given only to those benchmarks.media
allows (the same rules as the local /media/ view). On local storage that URL's token names the file
and the user it was made for: the file is served only while that user may still read it, and a
file that states answers (`ANSWER_ROLES`) only to that user signed in, so a token alone (forged with
a leaked key, or passed on) opens no release file.
"""

import hashlib
import re
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.files import File
from django.core.files.storage import default_storage
from django.core.handlers.wsgi import LimitedStream
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.text import get_valid_filename
from storages.backends.s3 import S3Storage

from core.errors import Conflict, DomainError, Forbidden, NotFound
from core.jobs import advance_job, fail_job, finish_job, job_cancelled, request_job, running_job
from core.models import Job
from core.sql import locked
from core.validation import whole_number

from . import dispatch
from .media import ANSWER_ROLES, may_read_asset
from .models import Asset, AssetRole, Scene, Upload, asset_upload_to

# One S3 PUT takes at most 5 GiB; larger files would need multipart uploads.
MAX_UPLOAD_BYTES = 5 * 1024**3
CHUNK_BYTES = 1024 * 1024
INLINE_CHECK_BYTES = 64 * 1024**2  # hashed in well under a second: checked within the request
PROGRESS_EVERY_CHUNKS = 64  # a job's progress report per 64 MiB hashed
CONTENT_TYPE = "application/octet-stream"
SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")
UPLOAD_SALT = "benchmarks.upload"
DOWNLOAD_SALT = "benchmarks.download"


def on_bucket() -> bool:
    return isinstance(default_storage, S3Storage)


def _s3_client():
    return default_storage.connection.meta.client


def _signed_path(view_name: str, pk: int, salt: str, value: str | None = None) -> str:
    token = signing.TimestampSigner(salt=salt).sign(value or str(pk))
    return f"{reverse(view_name, args=[pk])}?token={token}"


def _check_token(pk: int, token: str, salt: str, max_age: int) -> str:
    """What the token signs (it starts with `pk`), if it is valid, unexpired and for this object."""
    try:
        signed = signing.TimestampSigner(salt=salt).unsign(str(token or ""), max_age=max_age)
    except signing.SignatureExpired:
        raise Forbidden("This link has expired; ask for a new one.", field="token") from None
    except signing.BadSignature:
        raise Forbidden("This link is not valid.", field="token") from None
    if signed.split(":", 1)[0] != str(pk):
        raise Forbidden("This link is for another file.", field="token")
    return signed


# --- uploads ---------------------------------------------------------------------------------------


def start_upload(user, *, role, filename, size, sha256, scene_id=None, meta=None) -> Upload:
    """Record a pending upload of announced size and sha256 under a fresh object name."""
    if not isinstance(role, str) or role not in AssetRole.values:
        raise DomainError(f"Must be one of: {', '.join(AssetRole.values)}.", field="role")
    for field, value in (("filename", filename), ("sha256", sha256)):
        if value is not None and not isinstance(value, str):
            raise DomainError("Must be text.", field=field)
    name = get_valid_filename((filename or "").replace("\\", "/").rsplit("/", 1)[-1]) if filename else ""
    if not name:
        raise DomainError("Give the file's name.", field="filename")
    size = whole_number(size, "size", 1, MAX_UPLOAD_BYTES)
    sha256 = (sha256 or "").strip().lower()
    if not SHA256_PATTERN.match(sha256):
        raise DomainError("Must be 64 hexadecimal digits.", field="sha256")
    scene = None
    if scene_id not in (None, ""):
        scene = Scene.objects.filter(pk=whole_number(scene_id, "scene", 1, 2**63 - 1)).first()
        if scene is None:
            raise DomainError("No such scene.", field="scene")
    if meta is not None and not isinstance(meta, dict):
        raise DomainError("Must be a JSON object.", field="meta")
    # The asset keeps this name (with its random folder), so the bytes are never copied after the check.
    key = asset_upload_to(Asset(scene=scene, role=role), name)
    return Upload.objects.create(
        scene=scene, role=role, filename=name, key=key, size=size, sha256=sha256, meta=meta or {},
        created_by=user if user and user.is_authenticated else None,
        expires_at=timezone.now() + timedelta(seconds=settings.UPLOAD_URL_EXPIRY_S),
    )


def upload_target(upload: Upload) -> dict:
    """Where and how the browser sends the bytes: one PUT with these headers, before `expires_at`."""
    if on_bucket():
        url = _s3_client().generate_presigned_url(
            "put_object",
            Params={"Bucket": default_storage.bucket_name, "Key": upload.key, "ContentType": CONTENT_TYPE},
            ExpiresIn=settings.UPLOAD_URL_EXPIRY_S,
        )
    else:
        url = _signed_path("upload-content", upload.pk, UPLOAD_SALT)
    return {"method": "PUT", "url": url, "headers": {"Content-Type": CONTENT_TYPE},
            "expires_at": upload.expires_at.isoformat()}


def receive_local_upload(upload_id: int, token: str, stream) -> None:
    """The embedded default's stand-in for a presigned PUT: store the request body under the key."""
    _check_token(upload_id, token, UPLOAD_SALT, settings.UPLOAD_URL_EXPIRY_S)
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None or on_bucket():
        raise NotFound("No such upload.", field="upload")
    if upload.status != Upload.Status.PENDING:
        raise Conflict(f"This upload is already {upload.status}.", field="status")
    default_storage.delete(upload.key)  # a retried PUT replaces the earlier bytes
    # One byte past the announced size is enough for `complete_upload` to refuse an oversized body.
    body = LimitedStream(stream, upload.size + 1)
    stored = default_storage.save(upload.key, File(body, name=upload.filename))
    if stored != upload.key:  # only if another writer raced us to the same fresh name
        default_storage.delete(stored)
        raise Conflict("The upload was written twice at once; send it again.", field="file")


def _object_chunks(key: str) -> Iterator[bytes]:
    if on_bucket():
        yield from default_storage.bucket.Object(key).get()["Body"].iter_chunks(CHUNK_BYTES)
        return
    with default_storage.open(key, "rb") as stored:
        yield from stored.chunks(CHUNK_BYTES)


def _bytes_problem(upload: Upload, on_chunk=None) -> tuple[str, str] | None:
    """(field, reason) when the stored object is not the announced one; hashed in chunks, each counted
    to `on_chunk(chunks_done)` when given."""
    size = default_storage.size(upload.key)  # a HEAD on S3: a wrong size fails before any download
    if size != upload.size:
        return "size", f"Announced {upload.size} bytes but {size} were uploaded."
    digest = hashlib.sha256()
    for done, chunk in enumerate(_object_chunks(upload.key), start=1):
        digest.update(chunk)
        if on_chunk is not None:
            on_chunk(done)
    if digest.hexdigest() != upload.sha256:
        return "sha256", "Does not match the uploaded bytes."
    return None


def finish_upload(upload_id: int, user) -> Asset | Job:
    """The completing request: an upload of up to INLINE_CHECK_BYTES (or one already complete or
    refused) is completed now (`complete_upload`); a larger one is checked by a task, whose job this
    returns (the same job however often it is asked)."""
    upload = Upload.objects.filter(pk=upload_id).first()
    if upload is None:
        raise NotFound("No such upload.", field="upload")
    if upload.status != Upload.Status.PENDING or upload.size <= INLINE_CHECK_BYTES:
        return complete_upload(upload_id)
    if not default_storage.exists(upload.key):
        raise DomainError("Nothing has been uploaded yet; send the file first.", field="file")
    with transaction.atomic():
        upload = locked(Upload, upload_id, "upload")
        if upload.job_id is None:
            upload.job = request_job("upload_check", f"upload-check:{upload.pk}", user=user,
                                     subject=f"Checking {upload.filename}"[:200],
                                     total=-(-upload.size // CHUNK_BYTES)).job
            upload.save(update_fields=["job"])
            transaction.on_commit(lambda: dispatch.send_upload_check(upload.pk, upload.job_id))
    return upload.job


def run_upload_check(upload_id: int, job_id: int) -> None:
    """A large upload's check as its job: progress per PROGRESS_EVERY_CHUNKS MiB hashed, the asset as
    the report, a mismatch as the reason it failed. A redelivered message of a job that ran or runs
    does nothing."""
    def hashed(chunks: int) -> None:
        if chunks % PROGRESS_EVERY_CHUNKS == 0:
            if job_cancelled(job_id):  # stop hashing: the cancel has refused the upload already
                raise Conflict("Not checked: its check was cancelled.", field="upload")
            advance_job(job_id, done=chunks)

    with running_job(job_id, message="Checking the stored file (sha256)") as job:
        if job is None:
            return
        try:
            asset = complete_upload(upload_id, on_chunk=hashed)
        except DomainError as exc:  # refused: not the announced bytes, or not checked (its job was cancelled)
            fail_job(job_id, f"{exc.field}: {exc.message}")
            return
        finish_job(job_id, {"asset": asset.pk, "size": asset.size, "sha256": asset.sha256})


def cancel_upload_check(job: Job) -> None:
    """on_cancel("upload_check"): the upload is refused as not checked (its object deleted, as for any
    refused upload: send the file again); the check, finding it settled, records no asset."""
    for upload in Upload.objects.select_for_update().filter(job=job, status=Upload.Status.PENDING):
        upload.move_to(Upload.Status.FAILED)
        upload.error = f"Not checked: {job.message}"
        upload.save(update_fields=["status", "error"])
        transaction.on_commit(lambda key=upload.key: default_storage.delete(key))


def _settled(upload: Upload) -> Asset | None:
    """A complete upload's asset; Conflict for a refused one; None while it waits for its check."""
    if upload.status == Upload.Status.COMPLETE and upload.asset_id:
        return upload.asset
    if upload.status == Upload.Status.FAILED:
        raise Conflict(f"This upload was refused: {upload.error}", field="status")
    return None


def complete_upload(upload_id: int, on_chunk=None) -> Asset:
    """Check the uploaded object against the announced size and sha256 and record the Asset.

    Idempotent: completing a complete upload returns its asset. A mismatch marks the upload
    failed, deletes the object and raises DomainError naming `size` or `sha256`. The bytes are hashed
    outside the row lock (a large file takes a minute); a check that finished meanwhile wins.
    """
    with transaction.atomic():
        upload = locked(Upload, upload_id, "upload")
        if (asset := _settled(upload)) is not None:
            return asset
        if not default_storage.exists(upload.key):
            raise DomainError("Nothing has been uploaded yet; send the file first.", field="file")
    problem = _bytes_problem(upload, on_chunk)
    with transaction.atomic():
        upload = locked(Upload, upload_id, "upload")
        if (asset := _settled(upload)) is not None:
            return asset
        if problem is None:
            asset = Asset.objects.create(scene=upload.scene, role=upload.role, file=upload.key, size=upload.size,
                                         sha256=upload.sha256, meta=upload.meta)
            upload.asset = asset
            upload.move_to(Upload.Status.COMPLETE)
            upload.save(update_fields=["asset", "status"])
            return asset
        upload.move_to(Upload.Status.FAILED)
        upload.error = f"{problem[0]}: {problem[1]}"
        upload.save(update_fields=["status", "error"])
        key = upload.key
        transaction.on_commit(lambda: default_storage.delete(key))
    raise DomainError(problem[1], field=problem[0])


# --- downloads and deletion -------------------------------------------------------------------------


def check_can_download(user, asset: Asset) -> None:
    """The rules of benchmarks.media; refused with 403 here (the id is in the route already), in words
    that do not say what the file is."""
    if not user.is_authenticated:
        raise Forbidden("Log in to download files.", field="asset")
    if not may_read_asset(user, asset):
        raise Forbidden("You may not read this file.", field="asset")


def download_url(user, asset: Asset) -> str:
    """A URL for the asset's bytes that works for DOWNLOAD_URL_EXPIRY_S seconds (for `user` only,
    on local storage: local_download)."""
    check_can_download(user, asset)
    if on_bucket():
        return default_storage.url(asset.file.name, expire=settings.DOWNLOAD_URL_EXPIRY_S)
    return _signed_path("asset-file", asset.pk, DOWNLOAD_SALT, f"{asset.pk}:{user.pk}")


def lasting_url(asset: Asset) -> str:
    """A URL for the asset that keeps working while a page stays open (a viewer reading octree nodes
    by range an hour later): on a bucket, the download API, which checks `may_read_asset` on every
    request and redirects to a freshly signed URL (the browser keeps the redirect for less time than
    that URL lives, download_redirect_max_age); on local storage, the /media/ URL, checked by cookie."""
    return f"/api/v1/assets/{asset.pk}/download/" if on_bucket() else asset.file.url


def download_redirect_max_age() -> int:
    """How long a browser may keep the download API's redirect: half the signed URL's life, so a
    kept redirect never points at an expired URL."""
    return settings.DOWNLOAD_URL_EXPIRY_S // 2


def local_download(asset_id: int, token: str, requester) -> Asset:
    """The asset a signed same-origin download link points at, if the link still works: unexpired,
    for this file, made for a user who may still read it, and, for a file that states answers,
    opened by that user signed in (a link alone never serves gold)."""
    signed = _check_token(asset_id, token, DOWNLOAD_SALT, settings.DOWNLOAD_URL_EXPIRY_S)
    owner_id = signed.split(":", 1)[1] if ":" in signed else ""
    owner = get_user_model().objects.filter(pk=int(owner_id), is_active=True).first() if owner_id.isdigit() else None
    asset = Asset.objects.filter(pk=asset_id).first()
    if owner is None or asset is None or not may_read_asset(owner, asset):
        raise Forbidden("You may not read this file.", field="token")
    if asset.role in ANSWER_ROLES and getattr(requester, "pk", None) != owner.pk:
        raise Forbidden("Sign in as the person this link was made for to open it.", field="token")
    return asset


def delete_asset(asset: Asset) -> None:
    """Delete the row, and its object once the deletion is committed (unless another row shares it)."""
    name = asset.file.name
    with transaction.atomic():
        asset.delete()
        if not Asset.objects.filter(file=name).exists():
            transaction.on_commit(lambda: default_storage.delete(name))

"""Browser uploads straight to storage, checked downloads through short-lived signed URLs.

An upload is announced first (role, name, size, sha256) and answered with a URL the browser PUTs
the bytes to: a presigned S3 URL when the default storage is a bucket, or a signed same-origin
Django URL on the embedded default (local folder). Completing it streams the stored object
through SHA-256 and only then records an Asset; a mismatch deletes the object. Downloads redirect
to a URL that stops working after `DOWNLOAD_URL_EXPIRY_S`, given only to those benchmarks.media
allows (the same rules as the local /media/ view).
"""

import hashlib
import re
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
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
from core.reads import locked
from core.validation import whole_number

from .media import GOLD_ROLES, may_read_asset
from .models import Asset, AssetRole, Scene, Upload, asset_upload_to

# One S3 PUT takes at most 5 GiB; larger files would need multipart uploads.
MAX_UPLOAD_BYTES = 5 * 1024**3
CHUNK_BYTES = 1024 * 1024
CONTENT_TYPE = "application/octet-stream"
SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")
UPLOAD_SALT = "benchmarks.upload"
DOWNLOAD_SALT = "benchmarks.download"


def on_bucket() -> bool:
    return isinstance(default_storage, S3Storage)


def _s3_client():
    return default_storage.connection.meta.client


def _signed_path(view_name: str, pk: int, salt: str) -> str:
    return f"{reverse(view_name, args=[pk])}?token={signing.TimestampSigner(salt=salt).sign(str(pk))}"


def _check_token(pk: int, token: str, salt: str, max_age: int) -> None:
    try:
        signed_pk = signing.TimestampSigner(salt=salt).unsign(token or "", max_age=max_age)
    except signing.SignatureExpired:
        raise Forbidden("This link has expired; ask for a new one.", field="token") from None
    except signing.BadSignature:
        raise Forbidden("This link is not valid.", field="token") from None
    if signed_pk != str(pk):
        raise Forbidden("This link is for another file.", field="token")


# --- uploads ---------------------------------------------------------------------------------------


def start_upload(user, *, role, filename, size, sha256, scene_id=None, meta=None) -> Upload:
    """Record a pending upload of announced size and sha256 under a fresh object name."""
    if role not in AssetRole.values:
        raise DomainError(f"Must be one of: {', '.join(AssetRole.values)}.", field="role")
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


def _bytes_problem(upload: Upload) -> tuple[str, str] | None:
    """(field, reason) when the stored object is not the announced one; hashed in chunks."""
    size = default_storage.size(upload.key)  # a HEAD on S3: a wrong size fails before any download
    if size != upload.size:
        return "size", f"Announced {upload.size} bytes but {size} were uploaded."
    digest = hashlib.sha256()
    for chunk in _object_chunks(upload.key):
        digest.update(chunk)
    if digest.hexdigest() != upload.sha256:
        return "sha256", "Does not match the uploaded bytes."
    return None


def complete_upload(upload_id: int) -> Asset:
    """Check the uploaded object against the announced size and sha256 and record the Asset.

    Idempotent: completing a complete upload returns its asset. A mismatch marks the upload
    failed, deletes the object and raises DomainError naming `size` or `sha256`.
    """
    with transaction.atomic():
        upload = locked(Upload, upload_id, "upload")
        if upload.status == Upload.Status.COMPLETE and upload.asset_id:
            return upload.asset
        if upload.status == Upload.Status.FAILED:
            raise Conflict(f"This upload was refused: {upload.error}", field="status")
        if not default_storage.exists(upload.key):
            raise DomainError("Nothing has been uploaded yet; send the file first.", field="file")
        problem = _bytes_problem(upload)
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
    """The rules of benchmarks.media; refused with 403 here (the id is in the route already)."""
    if not user.is_authenticated:
        raise Forbidden("Log in to download files.", field="asset")
    if may_read_asset(user, asset):
        return
    if asset.role in GOLD_ROLES:
        raise Forbidden("This file holds gold answers: reviewers and admins only.", field="asset")
    if asset.scene_id is None:
        raise Forbidden("This file is for reviewers and admins only.", field="asset")
    raise Forbidden("This scene's files are for its reviewers, annotators and evaluators.", field="asset")


def download_url(user, asset: Asset) -> str:
    """A URL for the asset's bytes that works for DOWNLOAD_URL_EXPIRY_S seconds."""
    check_can_download(user, asset)
    if on_bucket():
        return default_storage.url(asset.file.name, expire=settings.DOWNLOAD_URL_EXPIRY_S)
    return _signed_path("asset-file", asset.pk, DOWNLOAD_SALT)


def local_download(asset_id: int, token: str) -> Asset:
    """The asset a signed same-origin download link points at, if the link still works."""
    _check_token(asset_id, token, DOWNLOAD_SALT, settings.DOWNLOAD_URL_EXPIRY_S)
    asset = Asset.objects.filter(pk=asset_id).first()
    if asset is None:
        raise NotFound("No such asset.", field="asset")
    return asset


def delete_asset(asset: Asset) -> None:
    """Delete the row, and its object once the deletion is committed (unless another row shares it)."""
    name = asset.file.name
    with transaction.atomic():
        asset.delete()
        if not Asset.objects.filter(file=name).exists():
            transaction.on_commit(lambda: default_storage.delete(name))

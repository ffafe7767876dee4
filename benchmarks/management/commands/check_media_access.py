"""Request every stored file's URL as an anonymous visitor; fail if any is served.

    python manage.py check_media_access

Local storage: each Asset's (and each pending upload's) `/media/` URL through Django's test client
against this database, as a browser without a cookie would. S3: the object's URL without its
signature, over HTTP, as anyone on the internet could (a private bucket answers 403). The last line
is `files=N public=P refused=R errors=E storage=local|s3`; the exit status is 1 when a file was
served (or a request ended in neither refusal nor success, so nothing is assumed).
"""

import urllib.error
import urllib.request

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError
from django.core.signals import request_finished
from django.db import close_old_connections
from django.test import Client

from benchmarks.models import Asset, Upload
from benchmarks.uploads import on_bucket

SERVED = (200, 206)


def _host() -> str:
    """A name the site answers to, so requests reach the view (not a 400 for a disallowed host)."""
    for host in settings.ALLOWED_HOSTS:
        if host != "*":
            return host.lstrip(".")
    return "localhost"


def _stored_names() -> list[str]:
    names = set(Asset.objects.values_list("file", flat=True))
    names |= set(Upload.objects.filter(status=Upload.Status.PENDING).values_list("key", flat=True))
    return sorted(name for name in names if name)


def _local_status(client: Client, name: str) -> int:
    response = client.get(default_storage.url(name), secure=True)
    if response.streaming:  # a file was served: close it unread, as the test client would once read
        request_finished.disconnect(close_old_connections)
        try:
            response.close()
        finally:
            request_finished.connect(close_old_connections)
    return response.status_code


def _bucket_status(name: str) -> int:
    unsigned = default_storage.url(name).split("?", 1)[0]
    try:
        with urllib.request.urlopen(unsigned, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


class Command(BaseCommand):
    help = "Request every stored file's URL anonymously; exit 1 if any is served."

    def handle(self, *args, **options):
        bucket = on_bucket()
        client = Client(raise_request_exception=False, HTTP_HOST=_host())
        counts = {"public": 0, "refused": 0, "errors": 0}
        names = _stored_names()
        for name in names:
            try:
                status = _bucket_status(name) if bucket else _local_status(client, name)
            except OSError as exc:  # the bucket's endpoint did not answer
                status, why = None, str(exc)
            else:
                why = f"HTTP {status}"
            if status in SERVED:
                counts["public"] += 1
                self.stdout.write(f"public: {name} ({why})")
            elif status in ((403, 404) if bucket else (404,)):
                counts["refused"] += 1
            else:
                counts["errors"] += 1
                self.stdout.write(f"error: {name} ({why})")
        self.stdout.write(
            f"files={len(names)} public={counts['public']} refused={counts['refused']} "
            f"errors={counts['errors']} storage={'s3' if bucket else 'local'}"
        )
        if counts["public"] or counts["errors"]:
            raise CommandError(f"{counts['public']} file(s) served anonymously, {counts['errors']} unclear.")

"""Assets on an S3-compatible server (moto in server mode on loopback), as in production."""

import hashlib
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import boto3
import pytest

from benchmarks.services import store_asset

pytestmark = [pytest.mark.django_db, pytest.mark.services]
MOTO = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "moto_server"
KEYS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}


@pytest.fixture
def s3_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield endpoint
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_asset_lands_in_the_bucket_with_size_sha256_and_a_presigned_url(settings, s3_endpoint):
    boto3.client("s3", endpoint_url=s3_endpoint, **KEYS).create_bucket(Bucket="hypolab-test")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": "hypolab-test", "endpoint_url": s3_endpoint, "access_key": "test",
                        "secret_key": "test", "region_name": "us-east-1", "querystring_auth": True},
        },
    }
    content = b'{"hello": "world"}\n' * 100
    asset = store_asset(None, "export", "release.jsonl", content)
    assert asset.size == len(content) and asset.sha256 == hashlib.sha256(content).hexdigest()
    stored = boto3.client("s3", endpoint_url=s3_endpoint, **KEYS).get_object(Bucket="hypolab-test",
                                                                              Key=asset.file.name)
    assert stored["Body"].read() == content
    url = asset.file.url
    assert url.startswith(s3_endpoint) and "Signature" in url
    assert urllib.request.urlopen(url, timeout=5).read() == content

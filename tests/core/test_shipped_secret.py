"""No shipped secret (issue #34, H2): without SECRET_KEY a deployment with DEBUG off refuses to start, the
embedded default makes its own key once per install in var/, and a download token forged with the old
shipped key, or made for someone else, opens no release file; compose ships no default secret and
publishes neither MinIO nor Redis."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core import signing
from django.test import Client

from benchmarks.models import AssetRole
from benchmarks.services import store_asset
from benchmarks.uploads import DOWNLOAD_SALT
from config.settings import installed_secret_key
from tests.factories import SceneFactory, UserFactory

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_KEYS = ("dev-only-insecure-key-change-me", "change-me-in-production")
GOLD = b'{"question": "Which objects newly appear?", "answers": ["Book", "Lamp"]}\n'


def settings_start(**extra) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("SECRET_KEY", "DEBUG")}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", **extra})
    script = "import django; django.setup(); from django.conf import settings; print(len(settings.SECRET_KEY))"
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_debug_off_with_services_refuses_to_start_without_a_key():
    done = settings_start(DEBUG="false", DATABASE_URL="postgres://hypolab@127.0.0.1:5432/hypolab")
    assert done.returncode != 0 and "Set SECRET_KEY" in done.stderr, done.stderr
    given = settings_start(DEBUG="false", DATABASE_URL="postgres://hypolab@127.0.0.1:5432/hypolab",
                           SECRET_KEY="k" * 10 + "-a-real-one-" + "x" * 40)
    assert given.returncode == 0, given.stderr


def test_the_embedded_default_makes_its_own_key_once(tmp_path):
    path = tmp_path / "var" / "secret_key"
    first = installed_secret_key(path)
    assert installed_secret_key(path) == first and len(first) >= 50 and len(set(first)) >= 5
    assert first not in SHIPPED_KEYS and path.stat().st_mode & 0o777 == 0o600
    assert installed_secret_key(tmp_path / "elsewhere" / "secret_key") != first  # per install
    assert list(path.parent.iterdir()) == [path]  # no draft left behind


@pytest.mark.django_db
def test_a_forged_or_passed_on_token_opens_no_release_file():
    export = store_asset(None, AssetRole.EXPORT, "release.jsonl", GOLD)
    meta = store_asset(SceneFactory(), AssetRole.SCENE_META, "operations.json", GOLD)
    admin = UserFactory(role="admin")
    signed_out, stranger = Client(), Client()
    stranger.force_login(UserFactory(role="evaluator"))
    for asset in (export, meta):
        # Forged with a key that shipped with the code, for the file alone or for the admin.
        for key in SHIPPED_KEYS:
            for value in (str(asset.pk), f"{asset.pk}:{admin.pk}"):
                token = signing.TimestampSigner(key=key, salt=DOWNLOAD_SALT).sign(value)
                assert signed_out.get(f"/api/v1/assets/{asset.pk}/file/?token={token}").status_code == 403
        # Even with this install's key leaked: a link that states answers opens only for its owner signed in.
        token = signing.TimestampSigner(salt=DOWNLOAD_SALT).sign(f"{asset.pk}:{admin.pk}")
        for client in (signed_out, stranger):
            assert client.get(f"/api/v1/assets/{asset.pk}/file/?token={token}").status_code == 403
        owner = Client()
        owner.force_login(admin)
        link = owner.get(f"/api/v1/assets/{asset.pk}/download/")["Location"]
        assert b"".join(owner.get(link).streaming_content) == GOLD
        for client in (signed_out, stranger):
            refused = client.get(link)
            assert refused.status_code == 403 and b"Book" not in refused.content


@pytest.mark.django_db
def test_a_token_stops_working_when_its_owner_may_no_longer_read_the_file():
    image = store_asset(SceneFactory(), AssetRole.IMAGE, "view.png", b"png")
    reviewer = UserFactory(role="reviewer")
    client = Client()
    client.force_login(reviewer)
    link = client.get(f"/api/v1/assets/{image.pk}/download/")["Location"]
    assert Client().get(link).status_code == 200  # a stimulus file: the link alone is enough
    reviewer.is_active = False
    reviewer.save(update_fields=["is_active"])
    assert Client().get(link).status_code == 403


def test_compose_ships_no_default_secret_and_publishes_no_store():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    secrets = {"SECRET_KEY", "S3_SECRET_ACCESS_KEY", "MINIO_ROOT_PASSWORD", "POSTGRES_PASSWORD", "DATABASE_URL"}
    found = {}
    for name, service in services.items():
        environment = service.get("environment") or {}
        for key, value in environment.items():
            if key in secrets:
                found[(name, key)] = str(value)
    assert {key for _, key in found} == secrets
    for (name, key), value in found.items():
        assert "${" in value and ":?" in value and ":-" not in value, (name, key, value)
    text = (ROOT / "docker-compose.yml").read_text()
    for shipped in (*SHIPPED_KEYS, "hypolab-secret"):
        assert shipped not in text
    for store in ("minio", "redis", "postgres"):
        assert not services[store].get("ports"), store

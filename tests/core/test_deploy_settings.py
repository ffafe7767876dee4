"""Deploy settings: with DEBUG false (and a real SECRET_KEY and ALLOWED_HOSTS) `manage.py check --deploy`
has nothing to say: HTTPS only (redirect, HSTS, secure cookies), each switch from the environment; with
DEBUG true (tests, the demo) or HTTPS=false (a production-like stack on plain HTTP) none of it is on."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HTTPS_VARIABLES = ("HTTPS", "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER", "SECURE_REDIRECT_EXEMPT",
                   "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD",
                   "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")
SHOWN = ("DEBUG", "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")


def production_env(**extra) -> dict:
    # the browser tests allow sync database calls from async code in this process; production does not
    env = {key: value for key, value in os.environ.items()
           if key not in HTTPS_VARIABLES and key != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update({"DEBUG": "false", "SECRET_KEY": secrets.token_urlsafe(60), "ALLOWED_HOSTS": "hypolab.example.org",
                "DJANGO_SETTINGS_MODULE": "config.settings"})
    # a deployment names its database (nothing connects to it here); the embedded default is the demo's
    env.setdefault("DATABASE_URL", "postgres://hypolab@db.example.org:5432/hypolab")
    env.update(extra)
    return env


def settings_under(env: dict, shown: tuple = SHOWN) -> dict:
    script = ("import json, django; django.setup(); from django.conf import settings as s; "
              f"print(json.dumps({{name: getattr(s, name) for name in {shown!r}}}))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_check_deploy_has_no_warning_in_production():
    env = production_env(SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https")
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "System check identified no issues" in output, output
    assert "WARNING" not in output and "security.W" not in output, output


def test_https_is_on_in_production_and_off_for_debug_and_plain_http():
    production = settings_under(production_env(SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https"))
    assert production == {
        "DEBUG": False, "SECURE_SSL_REDIRECT": True, "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SECURE_HSTS_SECONDS": 365 * 24 * 3600, "SECURE_HSTS_INCLUDE_SUBDOMAINS": True, "SECURE_HSTS_PRELOAD": True,
        "SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True,
    }
    debug = settings_under(production_env(DEBUG="true"))
    plain = settings_under(production_env(HTTPS="false"))
    for found in (debug, plain):
        assert not any(found[name] for name in SHOWN[1:]), found
    tuned = settings_under(production_env(SECURE_HSTS_SECONDS="3600", SECURE_HSTS_PRELOAD="false"))
    assert tuned["SECURE_HSTS_SECONDS"] == 3600 and not tuned["SECURE_HSTS_PRELOAD"] and tuned["SECURE_SSL_REDIRECT"]


def test_fast_password_hasher_is_for_the_suite_only():
    """pytest sets HYPOLAB_FAST_PASSWORD_HASHER (MD5); production ignores it and keeps PBKDF2."""
    def first_hasher(**extra):
        env = production_env(HYPOLAB_FAST_PASSWORD_HASHER="1", **extra)
        return settings_under(env, ("PASSWORD_HASHERS",))["PASSWORD_HASHERS"][0]

    assert first_hasher() == "django.contrib.auth.hashers.PBKDF2PasswordHasher"
    assert first_hasher(DEBUG="true") == "django.contrib.auth.hashers.MD5PasswordHasher"

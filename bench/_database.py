"""A throwaway database for a bench: PostgreSQL (it runs on 127.0.0.1 on this machine), or the embedded
default that `scripts/demo` serves (SQLite, a local media folder, tasks in the caller's process)."""

import os
import secrets
import tempfile
from pathlib import Path

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def bench_key() -> str:
    """The key a bench's Django runs with. A bench names its database (DATABASE_URL) and runs with DEBUG
    off, and then the settings refuse to start without a key (config/settings.py): a bench that was given
    none makes one for its run; one given from outside (the load benches' server shares it) is kept."""
    return os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50)


def database_environment(name: str) -> dict[str, str]:
    """What a bench on PostgreSQL sets before Django starts."""
    return {
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}",
        "SECRET_KEY": bench_key(),
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
    }


def use_fresh_database(name: str) -> None:
    """Drop and create `name`, point Django at it, set Django up in this process and migrate."""
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ.update(database_environment(name))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def drop_database(name: str) -> None:
    from django.db import connections

    connections.close_all()
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def use_embedded_default(name: str) -> Path:
    """A new temporary folder holding a SQLite database and the media folder, no Redis and no S3; Django set
    up in this process and migrated there. Returns the folder (for the bench's own files)."""
    work = Path(tempfile.mkdtemp(prefix=f"hypolab-{name}-bench-"))
    for variable in ("REDIS_URL", "S3_BUCKET"):
        os.environ.pop(variable, None)
    os.environ.update({
        "DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}",
        "MEDIA_ROOT": str(work / "media"),
        "SECRET_KEY": bench_key(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    })
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return work

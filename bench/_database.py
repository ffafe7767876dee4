"""A throwaway PostgreSQL database for a bench (PostgreSQL runs on 127.0.0.1 on this machine)."""

import os

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def use_fresh_database(name: str) -> None:
    """Drop and create `name`, point Django at it, set Django up in this process and migrate."""
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{name}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
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

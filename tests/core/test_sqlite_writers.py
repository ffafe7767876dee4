"""The embedded default (SQLite) serves each request on its own thread, beside in-process tasks. Two
transactions that each read and then write (an evaluator's item onset and answer, sent together) must
both land: in SQLite's default deferred mode the second writer is refused at once with "database is
locked" (waiting could only deadlock), whatever the busy timeout, and the page saw a 500."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TWO_WRITERS = textwrap.dedent("""
    import threading
    import django
    django.setup()
    from django.db import OperationalError, connection, transaction

    with connection.cursor() as c:
        c.execute("CREATE TABLE counter (n integer)")
        c.execute("INSERT INTO counter VALUES (0)")
    # Both read before either writes, as far as the database lets them: an immediate transaction makes
    # the second wait at its start, and the barrier then gives up rather than wait for it.
    both_read, failures = threading.Barrier(2, timeout=2), []

    def read_then_write():
        try:
            with transaction.atomic(), connection.cursor() as c:
                c.execute("SELECT n FROM counter")
                try:
                    both_read.wait()
                except threading.BrokenBarrierError:
                    pass
                c.execute("UPDATE counter SET n = n + 1")
        except OperationalError as error:
            failures.append(str(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=read_then_write) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with connection.cursor() as c:
        c.execute("SELECT n FROM counter")
        print(c.fetchone()[0], failures)
""")


def test_two_read_then_write_transactions_on_the_embedded_database_both_land(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"DATABASE_URL": f"sqlite:///{tmp_path / 'embedded.sqlite3'}", "DEBUG": "true",
                "DJANGO_SETTINGS_MODULE": "config.settings"})
    ran = subprocess.run([sys.executable, "-c", TWO_WRITERS], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split(maxsplit=1) == ["2", "[]\n"]

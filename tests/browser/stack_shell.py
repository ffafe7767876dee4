"""One Django process per live stack that runs the tests' snippets of stack code (conftest.stack_shell):
started once, it saves the second of start-up that a `manage.py shell` per snippet cost (27 a run).

Run inside the stack's environment as `manage.py shell -c "from tests.browser.stack_shell import serve; serve()"`:
each line on stdin is a JSON string of code; each answer is one line on stdout, after MARK, with what the
code printed or the traceback it raised. Every snippet runs in fresh globals and ends with the database
connections closed, as a process of its own would."""

import contextlib
import io
import json
import sys
import traceback

from django.db import connections

MARK = "\x1e stack-shell "


def serve() -> None:
    answers = sys.stdout
    for line in sys.stdin:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(json.loads(line), {"__name__": "__stack_shell__"})
            answer = {"printed": printed.getvalue()}
        except BaseException:  # noqa: BLE001 - the test that sent the code gets its traceback
            answer = {"printed": printed.getvalue(), "error": traceback.format_exc()}
        finally:
            connections.close_all()
        answers.write(MARK + json.dumps(answer) + "\n")
        answers.flush()

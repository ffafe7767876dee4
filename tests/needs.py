"""What a test needs from the machine. Outside CI a missing program or service skips the test (a developer may
run part of the suite without it); under CI=true the test fails naming it: `./scripts/test` installs and starts
every one of them (scripts/setup, scripts/services_up), so a skip there would hide a missing install step."""

import importlib
import os

import pytest


def need(present: bool, what: str) -> None:
    if present:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing: ./scripts/test installs and starts it (scripts/setup, scripts/services_up)",
                    pytrace=False)
    pytest.skip(f"needs {what} (run ./scripts/test)")


def need_module(name: str, why: str = ""):
    """The module `name`, imported; missing, it is `need`'s missing package (a failure under CI=true)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        need(False, f"the Python package {name}" + (f" ({why})" if why else ""))

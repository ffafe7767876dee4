"""Scoring tests need neither Django nor media: they run with `-p no:django` as well as with it."""

import pytest


@pytest.fixture(autouse=True)
def media_in_tmp():
    """Overrides the suite's autouse media fixture, which needs pytest-django's `settings`."""

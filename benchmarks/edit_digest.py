"""A change's edit as a digest: what an after-state and its assets were built from (meta `edit_digest`),
compared wherever an after-state is looked for (scenes/after_state.py, modeleval's and humaneval's
changed scenes, release geometry, dispatch's one job per edit)."""

import hashlib
import json


def _canonical(value):
    """Numbers as a database gives them back: PostgreSQL's jsonb has no negative zero (-0.0, which turning an
    edit into the world frame makes, comes back 0.0), and a float is kept to a micrometre."""
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, float):
        return round(value, 9) + 0.0
    return value


def edit_digest(edit: dict | None) -> str:
    """The sha256 of the edit's JSON (keys sorted, numbers canonical): the after-state a set of assets was
    built from, the same for the edit in memory and as either database stores it."""
    canonical = json.dumps(_canonical(edit or {}), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()

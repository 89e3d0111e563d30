"""A bare record store in journal mode, a one-record change, and JSON values (hypothesis),
shared by the storage tests."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from strands_robots.errors import SidecarError
from strands_robots.storage.record_store import Change, RecordStore


def _validate(document, path):
    if not isinstance(document, dict) or document.get("schema_version") != 1:
        raise SidecarError(f"{path} is foreign")


def journal_store(path: Path) -> RecordStore:
    """A store in journal mode from its first write (no write-through)."""
    return RecordStore(
        path, validate=_validate, empty=lambda: {"schema_version": 1, "episodes": {}}, write_through_bytes=0
    )


def put(key: str, value: int):
    """A mutation setting record ``key`` to ``{"v": value}``."""

    def mutate(document):
        document["episodes"][key] = {"v": value}
        return Change(records=[key], fields=[]), None

    return mutate


def json_values(max_leaves: int):
    """Any JSON value (finite numbers, integers past 64 bits, text, nested lists and objects)."""
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
        max_leaves=max_leaves,
    )

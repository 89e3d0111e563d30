"""Carry labels across a dataset edit that renumbers episodes (LeRobot's delete_episodes).

``mapping`` is ``{old_index: new_index}``. An old index absent from the mapping is an
episode that was deleted: its record is dropped. Fingerprints are refreshed from the
dataset after the move, so the moved labels stop being reported as stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import open_store
from strands_robots.episode_labels.fingerprint import (
    episode_fingerprint,
    open_dataset_if_present,
    stale_reason,
)
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError


def check_mapping(mapping: Any) -> dict[int, int]:
    """Normalise ``{old: new}`` (JSON string keys accepted); refuses two olds onto one new.

    Raises:
        LabelValidationError: not a mapping of non-negative ints, or not one-to-one.
    """
    if not isinstance(mapping, dict):
        raise LabelValidationError("mapping must be an object {old_episode_index: new_episode_index}.")
    result: dict[int, int] = {}
    for old, new in mapping.items():
        old_key = int(old) if isinstance(old, str) and old.isdigit() else old
        result[checks.episode_index(old_key, f"mapping key {old!r}")] = checks.episode_index(new, f"mapping[{old!r}]")
    targets = list(result.values())
    if len(set(targets)) != len(targets):
        raise LabelValidationError("mapping sends two old episodes to the same new index; it must be one-to-one.")
    return result


def remap(root: str | Path, mapping: dict[Any, Any], *, labels_dir: str | Path | None = None) -> int:
    """Renumber the records of ``episode_labels.json``.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}``; unmapped old episodes are dropped.
        labels_dir: Directory of the sidecar (default ``root``).

    Returns:
        Number of records kept under their new index.

    Raises:
        LabelValidationError: bad mapping.
        EpisodeNotFoundError: a new index the (edited) dataset does not have.
    """
    table = check_mapping(mapping)
    dataset = open_dataset_if_present(root)
    if dataset is not None:
        unknown = sorted(n for n in table.values() if n not in dataset.episodes)
        if unknown:
            raise EpisodeNotFoundError(f"mapping targets episodes {unknown} that the dataset at {root} does not have.")
    store = open_store(root, labels_dir)
    if not store.path.exists() and not store.journal.exists():
        return 0
    document = store.read()
    moved: dict[str, Any] = {}
    for key, record in document["episodes"].items():
        new = table.get(int(key))
        if new is None:
            continue
        record = dict(record)
        record["episode_index"] = new
        if dataset is not None and "fingerprint" in record:
            # refresh only when the record was consistent with its old episode's shape
            record["fingerprint"] = episode_fingerprint(dataset, new)
        moved[str(new)] = record
    document["episodes"] = moved
    store.replace(document)
    return len(moved)


__all__ = ["check_mapping", "remap", "stale_reason"]

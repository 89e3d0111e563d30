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
from strands_robots.episode_labels.fingerprint import IDENTITY_KEYS, Fingerprinter, open_dataset_if_present
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError
from strands_robots.storage.codec import json_copy


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


def remap(
    root: str | Path, mapping: dict[Any, Any], *, labels_dir: str | Path | None = None, dry_run: bool = False
) -> int:
    """Renumber the records of ``episode_labels.json`` (one locked rewrite).

    When the dataset's metadata is present, each moved record's fingerprint must still
    describe its new episode (same ``length``, ``tasks`` and ``content`` digest: the
    ``index_range`` may move); its fingerprint is then refreshed, so the moved labels
    stop being reported as stale.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}``; unmapped old episodes are dropped.
        labels_dir: Directory of the sidecar (default ``root``).
        dry_run: Run every check and count, write nothing.

    Returns:
        Number of records kept under their new index.

    Raises:
        LabelValidationError: bad mapping, or a mapping that contradicts the stored
            fingerprints (all such episodes listed; nothing changed).
        EpisodeNotFoundError: a new index the (edited) dataset does not have.
    """
    table = check_mapping(mapping)
    dataset = open_dataset_if_present(root)
    fingerprint = Fingerprinter(dataset) if dataset is not None else None
    if dataset is not None:
        unknown = sorted(n for n in table.values() if n not in dataset.episodes)
        if unknown:
            raise EpisodeNotFoundError(f"mapping targets episodes {unknown} that the dataset at {root} does not have.")
    store = open_store(root, labels_dir)
    if not store.path.exists() and not store.journal.exists():
        return 0

    def move(document: dict[str, Any]) -> dict[str, Any]:
        moved: dict[str, Any] = {}
        contradictions = []
        for key, record in document["episodes"].items():
            new = table.get(int(key))
            if new is None:
                continue
            record = dict(record, episode_index=new)
            if fingerprint is not None and record.get("fingerprint"):
                reason = fingerprint.stale_reason(new, record["fingerprint"], IDENTITY_KEYS)
                if reason:
                    contradictions.append(f"{key} -> {new} ({reason})")
                    continue
                record["fingerprint"] = fingerprint(new)
            moved[str(new)] = record
        if contradictions:
            raise LabelValidationError(
                "the mapping contradicts the labels' fingerprints, so it does not describe this dataset edit: "
                + "; ".join(contradictions[:10])
                + ". Nothing was changed; check the mapping (old index -> new index)."
            )
        document["episodes"] = moved
        return document

    if dry_run:
        return store.query(lambda document: len(move(json_copy(document))["episodes"]))
    return len(store.transform(move)["episodes"])


__all__ = ["check_mapping", "remap"]

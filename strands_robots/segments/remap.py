"""Carry segmentations across a dataset edit that renumbers episodes (the remap protocol).

LeRobot's ``delete_episodes`` renumbers the episodes after the deleted ones. ``mapping``
is ``{old_index: new_index}``; an old index missing from it is an episode that was
deleted, and its segmentation (with its history) is dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.errors import EpisodeNotFoundError, LabelValidationError
from strands_robots.segments.episodes import episode_index, open_dataset_if_present
from strands_robots.segments.store import _exists, open_store


def check_mapping(mapping: Any) -> dict[int, int]:
    """Normalise ``{old: new}`` (JSON string keys accepted).

    Raises:
        LabelValidationError: not a mapping of non-negative ints, or two olds onto one new.
    """
    if not isinstance(mapping, dict):
        raise LabelValidationError("mapping must be an object {old_episode_index: new_episode_index}.")
    table: dict[int, int] = {}
    for old, new in mapping.items():
        key = int(old) if isinstance(old, str) and old.isdigit() else old
        table[episode_index(key, f"mapping key {old!r}")] = episode_index(new, f"mapping[{old!r}]")
    if len(set(table.values())) != len(table):
        raise LabelValidationError("mapping sends two old episodes to the same new index; it must be one-to-one.")
    return table


def remap(
    root: str | Path, mapping: dict[Any, Any], *, labels_dir: str | Path | None = None, dry_run: bool = False
) -> int:
    """Renumber the records of ``episode_segments.json``.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}``; unmapped old episodes are dropped.
        labels_dir: Directory of the sidecar (default ``root``).
        dry_run: Run every check and count, write nothing.

    Returns:
        Number of records kept under their new index.

    Raises:
        LabelValidationError: bad mapping.
        EpisodeNotFoundError: a new index the edited dataset does not have, or a kept
            record whose length no longer matches its new episode (nothing changed).
    """
    table = check_mapping(mapping)
    store = open_store(root, labels_dir)
    if not _exists(store):
        return 0
    dataset = open_dataset_if_present(root)
    if dataset is not None:
        unknown = sorted(n for n in table.values() if n not in dataset.episodes)
        if unknown:
            raise EpisodeNotFoundError(f"mapping targets episodes {unknown} that the dataset at {root} does not have.")

    def move(document: dict[str, Any]) -> dict[str, Any]:
        document["episodes"] = _moved(document["episodes"], table, dataset)
        return document

    if dry_run:
        return store.query(lambda document: len(_moved(document["episodes"], table, dataset)))
    return len(store.transform(move)["episodes"])


def _moved(records: dict[str, Any], table: dict[int, int], dataset: Any) -> dict[str, Any]:
    moved: dict[str, Any] = {}
    for key, record in records.items():
        new = table.get(int(key))
        if new is None:
            continue
        if dataset is not None and "length" in record and int(dataset.episodes[new].length) != record["length"]:
            raise EpisodeNotFoundError(
                f"episode {key} had {record['length']} frames when segmented but new episode {new} has "
                f"{dataset.episodes[new].length}; the mapping does not describe this edit. Nothing was changed."
            )
        record = dict(record, episode_index=new)
        record["history"] = [dict(h, episode_index=new) for h in record.get("history", [])]
        moved[str(new)] = record
    return moved

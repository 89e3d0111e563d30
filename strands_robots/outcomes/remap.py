"""Carry outcome labels across a dataset edit that renumbers episodes: one appended ``remap``
line, a step of the transactional remap (:mod:`strands_robots.storage.remap_txn`;
docs/outcomes.md, "Storage", and docs/sidecar-format.md, "Remap").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.outcomes.labels import utc_now
from strands_robots.outcomes.store import open_outcome_store
from strands_robots.storage.remap_participant import store_participant
from strands_robots.storage.remap_txn import Participant, Step, remap_sidecar

NAME = "outcomes"


def participant(root: str | Path, labels_dir: str | Path | None = None, *, allow_drop: bool = False) -> Participant:
    """This sidecar's part of a remap (:mod:`strands_robots.storage.remap_participant`): the
    carried episodes move by one appended ``remap`` line, their history with them."""
    store = open_outcome_store(root, labels_dir)

    def labelled() -> dict[int, Any]:
        store.refresh()
        return {old: (store.current(old) or {}).get("fingerprint") for old in store.versions}

    def move(carried: dict[int, int], fingerprinter: Any) -> Step:
        if len(carried) == len(store.versions) and all(old == new for old, new in carried.items()):
            return Step(NAME, store.path, len(carried))
        record = {"kind": "remap", "mapping": {str(o): n for o, n in sorted(carried.items())}, "at": utc_now()}
        return Step(NAME, store.path, len(carried), "append", record=record, size_before=store.end)

    return store_participant(
        NAME, store.path, root, what="outcome labels", allow_drop=allow_drop, labelled=labelled, move=move
    )


def remap(
    root: str | Path,
    mapping: Any,
    *,
    labels_dir: str | Path | None = None,
    dry_run: bool = False,
    allow_drop: bool = False,
) -> int:
    """Move outcome labels to new episode indices after a renumbering dataset edit.

    Args:
        root: The dataset root (already renumbered). When it has LeRobot metadata, every
            new index of the mapping must exist in it.
        mapping: ``{old_episode_index: new_episode_index}`` or an ``EpisodeMapping``.
        labels_dir: Where ``episode_outcomes.jsonl`` lives (default ``root``).
        dry_run: Run every check and count, write nothing.
        allow_drop: Drop the labels of episodes missing from the mapping.

    Returns:
        The number of labelled episodes kept under their new index.

    Raises:
        LabelValidationError: the mapping is malformed, drops labels without ``allow_drop``,
            or moves a label whose stored fingerprint contradicts its new episode (all such
            moves listed; nothing changed).
        EpisodeNotFoundError: a new index is not in the dataset.
    """
    return remap_sidecar(mapping, lambda: participant(root, labels_dir, allow_drop=allow_drop), dry_run=dry_run)

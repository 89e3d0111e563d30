"""Carry segmentations across a dataset edit that renumbers episodes (docs/sidecar-format.md, "Remap")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.segments.store import open_store
from strands_robots.storage.remap_participant import record_store_participant
from strands_robots.storage.remap_txn import Participant, remap_sidecar

NAME = "segments"


def participant(root: str | Path, labels_dir: str | Path | None = None, *, allow_drop: bool = False) -> Participant:
    """This sidecar's part of a remap (:mod:`strands_robots.storage.remap_participant`): a
    segmentation's history moves with it; a record saved without a fingerprint is checked
    by its ``length``."""
    store = open_store(root, labels_dir)
    return record_store_participant(NAME, store, root, what="segmentations", allow_drop=allow_drop, move=_move)


def _move(record: dict[str, Any], new: int) -> dict[str, Any]:
    """A segmentation under episode ``new``: its history entries name the new index too."""
    return dict(record, history=[dict(h, episode_index=new) for h in record.get("history", [])])


def remap(
    root: str | Path,
    mapping: Any,
    *,
    labels_dir: str | Path | None = None,
    dry_run: bool = False,
    allow_drop: bool = False,
) -> int:
    """Renumber the records of ``episode_segments.json``.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}`` or an ``EpisodeMapping``.
        labels_dir: Directory of the sidecar (default ``root``).
        dry_run: Run every check and count, write nothing.
        allow_drop: Drop the records of old episodes missing from the mapping.

    Returns:
        Number of records kept under their new index.

    Raises:
        LabelValidationError: bad mapping, records dropped without ``allow_drop``, or a
            kept record whose stored fingerprint (or, without one, its ``length``)
            contradicts its new episode (all such moves listed; nothing changed).
        EpisodeNotFoundError: a new index the edited dataset does not have.
    """
    return remap_sidecar(mapping, lambda: participant(root, labels_dir, allow_drop=allow_drop), dry_run=dry_run)

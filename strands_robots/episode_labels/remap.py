"""Renumber ``episode_labels.json`` alone after a dataset edit (docs/editing.md).

The rules (mapping, drops, fingerprints) are :mod:`strands_robots.storage.remap_participant`'s;
:func:`strands_robots.remap.remap_dataset` carries every sidecar in one transaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.episode_labels.document import open_store
from strands_robots.storage.remap_participant import record_store_participant
from strands_robots.storage.remap_txn import Participant, remap_sidecar

NAME = "episode_labels"


def participant(root: str | Path, labels_dir: str | Path | None = None, *, allow_drop: bool = False) -> Participant:
    """This sidecar's part of a remap (:mod:`strands_robots.storage.remap_participant`): a
    record moves as it is, its fingerprint checked and refreshed there."""
    store = open_store(root, labels_dir)
    return record_store_participant(NAME, store, root, what="labels", allow_drop=allow_drop)


def remap(
    root: str | Path,
    mapping: Any,
    *,
    labels_dir: str | Path | None = None,
    dry_run: bool = False,
    allow_drop: bool = False,
) -> int:
    """Renumber the records of ``episode_labels.json`` (one transactional rewrite).

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}`` or an
            :class:`~strands_robots.storage.mapping.EpisodeMapping`.
        labels_dir: Directory of the sidecar (default ``root``).
        dry_run: Run every check and count, write nothing.
        allow_drop: Drop the records of old episodes missing from the mapping (refused
            otherwise, unless the mapping lists them as deleted).

    Returns:
        Number of records kept under their new index.

    Raises:
        LabelValidationError: bad mapping, a mapping that drops records without
            ``allow_drop``, or one that contradicts the stored fingerprints (all such
            episodes listed; nothing changed).
        EpisodeNotFoundError: a new index the (edited) dataset does not have.
    """
    return remap_sidecar(mapping, lambda: participant(root, labels_dir, allow_drop=allow_drop), dry_run=dry_run)


__all__ = ["participant", "remap"]

"""Carry labels across a dataset edit that renumbers episodes (LeRobot's delete_episodes).

``mapping`` is ``{old_index: new_index}`` (the rule: :mod:`strands_robots.storage.mapping`).
An old index absent from the mapping is an episode that was deleted: its record is
dropped, which must be said explicitly (``allow_drop=True`` or the mapping of
:func:`~strands_robots.storage.mapping.mapping_after_delete`). Fingerprints are refreshed
from the dataset after the move, so the moved labels stop being reported as stale; without
the dataset's metadata they move unchecked and lose ``meta`` (they were not read for their
new index), so the next stale check compares them with the dataset. The
rewrite goes through the transactional remap of :mod:`strands_robots.storage.remap_txn`;
:func:`strands_robots.remap.remap_dataset` carries every sidecar in one transaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.episode_labels.document import open_store
from strands_robots.storage.mapping import mapping_table
from strands_robots.storage.remap_participant import record_store_participant
from strands_robots.storage.remap_txn import Participant, remap_sidecar

NAME = "episode_labels"


#: ``{old: new}`` as ints (the rule of :mod:`strands_robots.storage.mapping`); raises
#: ``LabelValidationError`` for anything but a one-to-one mapping of non-negative ints.
check_mapping = mapping_table


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

    When the dataset's metadata is present, each moved record's fingerprint must still
    describe its new episode (same ``length``, ``tasks`` and ``content`` digest: the
    ``index_range`` may move); its fingerprint is then refreshed, so the moved labels
    stop being reported as stale. To carry every sidecar (labels, outcomes, segments)
    together use :func:`strands_robots.remap.remap_dataset` (CLI ``strands-labels remap``).

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


__all__ = ["check_mapping", "participant", "remap"]

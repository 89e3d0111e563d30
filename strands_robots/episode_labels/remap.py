"""Renumber ``episode_labels.json`` alone after a dataset edit (docs/editing.md).

The rules (mapping, drops, fingerprints) are :mod:`strands_robots.storage.remap_participant`'s;
:func:`strands_robots.remap.remap_dataset` carries every sidecar in one transaction.
"""

from __future__ import annotations

from pathlib import Path

from strands_robots.episode_labels.document import open_store
from strands_robots.storage.remap_participant import record_store_participant
from strands_robots.storage.remap_txn import Participant

NAME = "episode_labels"


def participant(root: str | Path, labels_dir: str | Path | None = None, *, allow_drop: bool = False) -> Participant:
    """This sidecar's part of a remap (:mod:`strands_robots.storage.remap_participant`): a
    record moves as it is, its fingerprint checked and refreshed there."""
    store = open_store(root, labels_dir)
    return record_store_participant(NAME, store, root, what="labels", allow_drop=allow_drop)

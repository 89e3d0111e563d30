"""The stale labels of ``episode_labels.json`` and the warning that leaves them out of a selection.

Selection itself (the label bar of :mod:`.filter_rule`, the outcome filters, held-out
episodes) is :mod:`strands_robots.selection`, above both stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.dataset.cache import has_dataset_metadata
from strands_robots.episode_labels.document import existing_store
from strands_robots.fingerprint.stale import read_from_current_metadata, stale_records


class StaleLabelsWarning(UserWarning):
    """Some labels describe an episode that has since changed (renumbered dataset)."""


def stale_episodes(root: str | Path, *, labels_dir: str | Path | None = None) -> dict[int, str]:
    """Episodes whose stored fingerprint no longer matches the dataset: ``{episode: reason}``, sorted.

    Empty when the dataset's metadata is absent (nothing to compare against), when no
    record carries a fingerprint (files other tools wrote), or when the reader cannot
    open the dataset (a warning says so). The rule: ``docs/sidecar-format.md``, ``fingerprint``.

    Raises:
        LabelsNotFoundError: no sidecar yet.
        SidecarError: the sidecar is not one this version reads.
    """
    if not has_dataset_metadata(root):
        return {}
    from strands_robots.episode_labels.filter_rule import label_index  # numpy

    store = existing_store(root, labels_dir)
    index = label_index(store)
    if not index.has_fingerprint.any() or read_from_current_metadata(root, index.fp_meta):
        return {}  # nothing to compare, or every fingerprint was read from this very metadata

    def fingerprints(document: dict[str, Any]) -> dict[int, Any]:
        return {int(key): record.get("fingerprint") for key, record in document["episodes"].items()}

    return stale_records(root, store.query(fingerprints))

"""Carry every sidecar of a dataset across an edit that renumbers episodes, in one transaction.

``episode_labels.json``, ``episode_outcomes.jsonl`` and ``episode_segments.json`` are
remapped together by :func:`strands_robots.storage.remap_txn.run_remap`: all or none,
and a run interrupted by a kill or a failure is completed (or rolled back) by running the
same remap again (``docs/sidecar-format.md``, "Remap"). The mapping rule and
:func:`mapping_after_delete` are those of :mod:`strands_robots.storage.mapping`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from strands_robots.storage.labels_dir import require_directory
from strands_robots.storage.mapping import EpisodeMapping, mapping_after_delete
from strands_robots.storage.remap_txn import RemapResult, run_remap


def _participants(root: str | Path, labels_dir: str | Path | None, allow_drop: bool) -> list[Any]:
    names = ("episode_labels", "outcomes", "segments")
    modules = [importlib.import_module(f"strands_robots.{name}.remap") for name in names]
    return [m.participant(root, labels_dir, allow_drop=allow_drop) for m in modules]


def remap_dataset(
    root: str | Path,
    mapping: Any,
    *,
    labels_dir: str | Path | None = None,
    allow_drop: bool = False,
    dry_run: bool = False,
) -> RemapResult:
    """Renumber the records of every sidecar of ``root`` together.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}`` or an
            :class:`~strands_robots.storage.mapping.EpisodeMapping` (e.g. from
            :func:`mapping_after_delete`, whose deleted episodes may be dropped).
        labels_dir: Directory of the sidecars (default ``root``).
        allow_drop: Drop the records of every old episode missing from the mapping.
        dry_run: Run every check and count, write nothing.

    Returns:
        :class:`~strands_robots.storage.remap_txn.RemapResult`: records kept per
        sidecar (``episode_labels``, ``outcomes``, ``segments``) and whether an
        interrupted remap was completed or rolled back first.

    Raises:
        LabelValidationError: bad mapping, records dropped without ``allow_drop``, or a
            mapping that contradicts stored fingerprints; nothing changed.
        EpisodeNotFoundError: a new index the edited dataset does not have.
        SidecarError: a sidecar cannot be used (nothing changed).
        RootNotFoundError: the labels dir (default ``root``) does not exist.
        RemapConflictError: an interrupted remap could not be completed.
        StorageError: a write failed (see :func:`~strands_robots.storage.remap_txn.run_remap`).
    """
    parsed = EpisodeMapping.parse(mapping)
    directory = Path(labels_dir if labels_dir is not None else root)
    require_directory(directory)
    return run_remap(directory, _participants(root, labels_dir, allow_drop), parsed, dry_run=dry_run)


__all__ = ["EpisodeMapping", "RemapResult", "mapping_after_delete", "remap_dataset"]

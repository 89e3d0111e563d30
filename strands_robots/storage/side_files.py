"""The name of every file this package keeps beside a dataset: the one table.

Sidecars (``docs/sidecar-format.md``) sit in the dataset root, or in ``labels_dir``:

- :data:`LABELS` ``episode_labels.json`` (interchangeable with strands-robots 0.5.3),
- :data:`OUTCOMES` ``episode_outcomes.jsonl``,
- :data:`SEGMENTS` ``episode_segments.json``,

and the outcome export :data:`OUTCOME_EXPORT` goes to ``meta/`` (:func:`outcome_export_path`).
Everything else a store keeps there (lock, journal and its base, refused journal lines,
merge conflicts, caches, the labels-directory key, the remap intent) is derived state;
every such path is built here by a function named after what the file holds, and
nowhere else.
"""

from __future__ import annotations

from pathlib import Path

#: The label sidecar (the name strands-robots 0.5.3 uses).
LABELS = "episode_labels.json"
#: The outcome-label sidecar.
OUTCOMES = "episode_outcomes.jsonl"
#: The segment sidecar.
SEGMENTS = "episode_segments.json"
#: Every sidecar, in the order a remap moves them.
SIDECARS: tuple[str, ...] = (LABELS, OUTCOMES, SEGMENTS)
#: The outcome export written under ``meta/`` (the location the outcome schema prescribes).
OUTCOME_EXPORT = "avala_sequence_outcomes.jsonl"


def sidecar_path(directory: str | Path, name: str) -> Path:
    """``<directory>/<name>``: a sidecar (one of :data:`SIDECARS`) in the root or ``labels_dir``."""
    return Path(directory) / name


def outcome_export_path(directory: str | Path) -> Path:
    """``<directory>/meta/avala_sequence_outcomes.jsonl``: the default outcome export."""
    return Path(directory) / "meta" / OUTCOME_EXPORT


def _beside(sidecar: Path, suffix: str) -> Path:
    sidecar = Path(sidecar)
    return sidecar.with_name(f".{sidecar.name}{suffix}")


def lock_path(sidecar: Path) -> Path:
    """The inter-process lock file of ``sidecar``."""
    return _beside(sidecar, ".lock")


def journal_path(sidecar: Path) -> Path:
    """The journal of a record-store sidecar (``storage.journal``)."""
    return _beside(sidecar, ".journal")


def journal_base_path(sidecar: Path) -> Path:
    """A hard link to the canonical file the journal applies to (for a three-way merge)."""
    return _beside(sidecar, ".journal.base")


def rejected_path(sidecar: Path) -> Path:
    """Journal lines that were refused, kept aside with the reason (never folded)."""
    return _beside(sidecar, ".journal.rejected")


def conflicts_path(sidecar: Path) -> Path:
    """Pending writes another tool overtook (reported by ``strands-labels show``)."""
    return _beside(sidecar, ".conflicts.jsonl")


def index_cache_path(sidecar: Path) -> Path:
    """The columnar index cache of a large label sidecar."""
    return _beside(sidecar, ".index.npz")


def fingerprints_cache_path(sidecar: Path, extension: str) -> Path:
    """The dataset-fingerprint cache of a sidecar (``extension`` ``.npz`` or ``.json``)."""
    return _beside(sidecar, f".fingerprints{extension}")


def remap_staged_path(sidecar: Path, txn: str) -> Path:
    """The new content of ``sidecar`` staged by remap transaction ``txn``."""
    return _beside(sidecar, f".remap-{txn}")


def remap_intent_path(directory: str | Path) -> Path:
    """The intent file of an unfinished remap in ``directory``."""
    return Path(directory) / ".remap-intent.json"


def remap_lock_target(directory: str | Path) -> Path:
    """The name whose :func:`lock_path` serialises remaps of ``directory``."""
    return Path(directory) / "remap-intent.json"


def labels_dir_key_path(directory: str | Path) -> Path:
    """The key naming the dataset a ``labels_dir`` belongs to (``storage.labels_dir``)."""
    return Path(directory) / ".strands-labels-dataset.json"


def temp_prefix(target: Path) -> str:
    """The name prefix of the temp files an atomic write of ``target`` creates beside it."""
    return f".{Path(target).name}."


__all__ = [
    "LABELS",
    "OUTCOMES",
    "OUTCOME_EXPORT",
    "SEGMENTS",
    "SIDECARS",
    "conflicts_path",
    "fingerprints_cache_path",
    "index_cache_path",
    "journal_base_path",
    "journal_path",
    "labels_dir_key_path",
    "lock_path",
    "outcome_export_path",
    "rejected_path",
    "remap_intent_path",
    "remap_lock_target",
    "remap_staged_path",
    "sidecar_path",
    "temp_prefix",
]

"""The name of every file this package keeps beside a dataset: the one table.

Sidecars (``docs/sidecar-format.md``) sit in the dataset root, or in ``labels_dir``:

- :data:`LABELS` ``episode_labels.json`` (interchangeable with strands-robots 0.5.3),
- :data:`OUTCOMES` ``episode_outcomes.jsonl``,
- :data:`SEGMENTS` ``episode_segments.json``,

and the outcome export :data:`OUTCOME_EXPORT` goes to ``meta/`` (:func:`outcome_export_path`).
Everything else a store keeps (lock, journal and its base, refused journal lines, merge
conflicts, caches, the labels-directory key, the
remap intent, temp files of sidecar writes) is derived state, kept in one hidden folder
beside the sidecars, :data:`STATE_DIR` ``.strands-labels/`` (``docs/sidecar-format.md``).
Every such path is built here by a function named after what the file holds, and nowhere
else; the names earlier versions used beside the sidecar are here too (``legacy_*``),
for :mod:`.state_dir` to adopt what they left.
"""

from __future__ import annotations

import os
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


#: The one hidden folder beside the sidecars that holds every derived file (a Hub upload
#: ignores it with the one pattern ``.strands-labels/**``).
STATE_DIR = ".strands-labels"


def state_dir(directory: str | Path) -> Path:
    """``<directory>/.strands-labels``: the derived state of the sidecars in ``directory``."""
    return Path(directory) / STATE_DIR


def _state(sidecar: Path, suffix: str) -> Path:
    sidecar = Path(sidecar)
    return sidecar.parent / STATE_DIR / f"{sidecar.name}{suffix}"


def lock_path(sidecar: Path) -> Path:
    """The inter-process lock file of ``sidecar``."""
    return _state(sidecar, ".lock")


def journal_path(sidecar: Path) -> Path:
    """The journal of a record-store sidecar (``storage.journal``)."""
    return _state(sidecar, ".journal")


def journal_base_path(sidecar: Path) -> Path:
    """A hard link to the canonical file the journal applies to (for a three-way merge)."""
    return _state(sidecar, ".journal.base")


def rejected_path(sidecar: Path) -> Path:
    """Journal lines that were refused, kept aside with the reason (never folded)."""
    return _state(sidecar, ".journal.rejected")


def conflicts_path(sidecar: Path) -> Path:
    """Pending writes another tool overtook (reported by ``strands-labels show``)."""
    return _state(sidecar, ".conflicts.jsonl")


def index_cache_path(sidecar: Path) -> Path:
    """The columnar index cache of a large label sidecar."""
    return _state(sidecar, ".index.npz")


def remap_staged_path(sidecar: Path, txn: str) -> Path:
    """The new content of ``sidecar`` staged by remap transaction ``txn``."""
    return _state(sidecar, f".remap-{txn}")


def remap_intent_path(directory: str | Path) -> Path:
    """The intent file of an unfinished remap in ``directory``."""
    return state_dir(directory) / "remap-intent.json"


def remap_lock_target(directory: str | Path) -> Path:
    """The name whose :func:`lock_path` serialises remaps of ``directory``."""
    return Path(directory) / "remap-intent.json"


def remap_applied_path(directory: str | Path) -> Path:
    """The record of the remaps applied to the sidecars of ``directory`` (their ids and sources);
    beside them, not in :data:`STATE_DIR`: it describes their content and travels with them."""
    return Path(directory) / ".strands-labels-remaps.json"


def carry_marker_path(directory: str | Path) -> Path:
    """The record of sidecars being carried into ``directory`` from the dataset before an edit."""
    return state_dir(directory) / "carrying.json"


def holds_sidecars(directory: str | Path) -> bool:
    """Whether ``directory`` holds any of :data:`SIDECARS`, or the journal of one (records
    written but not yet folded into it). A path the system cannot look at (a name too long,
    no permission) holds none."""
    return any(
        os.path.exists(sidecar_path(directory, name)) or os.path.exists(journal_path(sidecar_path(directory, name)))
        for name in SIDECARS
    )


def edit_backup_path(directory: str | Path) -> Path:
    """``<directory>_old``: where ``lerobot-edit-dataset`` moves a dataset it edits in place
    (``docs/editing.md``)."""
    directory = Path(directory)
    return directory.with_name(f"{directory.name}_old")


def moved_by_edit(directory: str | Path) -> Path | None:
    """``<directory>_old`` when it holds a sidecar and ``directory`` holds none: where
    ``lerobot-edit-dataset`` moved the original dataset, sidecars included, when it edited it in
    place (``docs/editing.md``); None otherwise."""
    if holds_sidecars(directory):
        return None
    old = edit_backup_path(directory)
    return old if holds_sidecars(old) else None


def remap_hint(directory: str | Path) -> str:
    """A sentence pointing at the sidecars an in-place edit moved away (:func:`moved_by_edit`),
    with the command that carries them back; empty when there are none."""
    old = moved_by_edit(directory)
    if old is None:
        return ""
    return (
        f" The sidecars are in {old} (lerobot-edit-dataset moved the dataset there when it edited it in place): "
        f"carry them with `strands-labels remap {directory} --from {old}` (docs/editing.md)."
    )


def labels_dir_key_path(directory: str | Path) -> Path:
    """The key naming the dataset a ``labels_dir`` belongs to (``storage.labels_dir``)."""
    return state_dir(directory) / "dataset-key.json"


def temp_dir(target: Path) -> Path:
    """Where an atomic write of ``target`` makes its temp file: the state folder for a
    sidecar (a crash leaves nothing else beside the sidecars), else beside ``target``."""
    target = Path(target)
    return state_dir(target.parent) if target.name in SIDECARS else target.parent


#: The subfolder of :data:`STATE_DIR` holding the judge's episode leases.
LEASES = "leases"


def lease_path(directory: str | Path, episode: int) -> Path:
    """The lease a judge run holds on ``episode`` while it judges it (``storage.lease``)."""
    return state_dir(directory) / LEASES / f"episode-{int(episode)}.lock"


def temp_prefix(target: Path) -> str:
    """The name prefix of the temp files an atomic write of ``target`` creates in :func:`temp_dir`."""
    target = Path(target)
    return f"{target.name}." if target.name in SIDECARS else f".{target.name}."


# -- names left by earlier versions (beside the sidecar; adopted by ``storage.state_dir``) --


def _beside(sidecar: Path, suffix: str) -> Path:
    sidecar = Path(sidecar)
    return sidecar.with_name(f".{sidecar.name}{suffix}")


def legacy_lock_path(sidecar: Path) -> Path:
    """The lock file earlier versions kept beside ``sidecar``."""
    return _beside(sidecar, ".lock")


def legacy_journal_path(sidecar: Path) -> Path:
    """The journal earlier versions kept beside ``sidecar``."""
    return _beside(sidecar, ".journal")


def legacy_files(sidecar: Path) -> dict[str, Path]:
    """Every derived file an earlier version kept beside ``sidecar``, keyed by the name of
    the function above that gives its place now (caches map to ``None``-free names too)."""
    return {
        "journal_base_path": _beside(sidecar, ".journal.base"),
        "journal_path": _beside(sidecar, ".journal"),
        "rejected_path": _beside(sidecar, ".journal.rejected"),
        "conflicts_path": _beside(sidecar, ".conflicts.jsonl"),
        "index_cache_path": _beside(sidecar, ".index.npz"),
        "fingerprints_npz": _beside(sidecar, ".fingerprints.npz"),
        "fingerprints_json": _beside(sidecar, ".fingerprints.json"),
    }


def legacy_temp_prefix(sidecar: Path) -> str:
    """The prefix of the temp files earlier versions wrote beside ``sidecar``."""
    return f".{Path(sidecar).name}."


def legacy_labels_dir_key_path(directory: str | Path) -> Path:
    """The labels-directory key earlier versions kept in the directory itself."""
    return Path(directory) / ".strands-labels-dataset.json"


def legacy_remap_intent_path(directory: str | Path) -> Path:
    """The remap intent earlier versions kept in the directory itself."""
    return Path(directory) / ".remap-intent.json"

"""The ``episode_labels.json`` document: where it lives, how it is checked, its store.

The layout is docs/sidecar-format.md's (the one strands-robots 0.5.3 writes). A file at the
sidecar path that is not this layout (another tool's file, a future ``schema_version``,
truncated JSON) is refused with :class:`SidecarError` and never overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_robots.episode_labels.vocab import (
    FAILURE_MODES,
    QUALITY_GRADES,
    SCHEMA_VERSION,
    SIDECAR_FILENAME,
)
from strands_robots.errors import LabelsNotFoundError
from strands_robots.storage.labels_dir import check_labels_dir, create_labels_dir, require_directory
from strands_robots.storage.record_store import RecordStore, check_document, keyed_record_problem


def labels_path(root: str | Path, *, labels_dir: str | Path | None = None) -> Path:
    """``<root>/episode_labels.json`` (beside ``meta/``, not inside it), or in ``labels_dir``
    (e.g. for a dataset in a read-only cache). The arguments are checked where they enter:
    :class:`~strands_robots.labels.Labels`."""
    return Path(root if labels_dir is None else labels_dir) / SIDECAR_FILENAME


def empty_document(benchmark: str = "") -> dict[str, Any]:
    """A new document with no episodes."""
    return {"schema_version": SCHEMA_VERSION, "benchmark": benchmark, "episodes": {}}


def _header_problem(document: dict[str, Any]) -> str | None:
    version = document.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        return f"it has schema_version {version!r}; this build reads version {SCHEMA_VERSION}"
    if not isinstance(document.get("benchmark", ""), str):
        return "'benchmark' is not a string"
    return None


def validate_document(document: Any, path: Path) -> None:
    """Check a loaded document, record by record.

    Raises:
        SidecarError: not ``schema_version: 1`` (a bool ``true`` is not 1), no ``episodes``
            object, a key that is not the decimal spelling of its ``episode_index``, or a
            block whose verdict/grade is outside its domain.
    """
    check_document(document, path, _header_problem, record_problem, "these labels")


def record_problem(key: str, record: Any) -> str | None:
    """Why ``episodes[key]`` is not a readable record, or None."""
    problem = keyed_record_problem(key, record, index_required=False)
    if problem:
        return problem
    for block in ("deterministic", "judge", "review"):
        if block in record and not isinstance(record[block], dict):
            return f"episodes[{key!r}].{block} is {type(record[block]).__name__}, expected a JSON object"
    det = record.get("deterministic")
    if det is not None:
        if type(det.get("success")) is not bool:
            return f"episodes[{key!r}].deterministic has no boolean 'success'"
        if "failure" in det and type(det["failure"]) is not bool:
            return f"episodes[{key!r}].deterministic.failure is not a boolean"
    judge = record.get("judge")
    if judge is not None:
        if judge.get("quality") not in QUALITY_GRADES:
            return f"episodes[{key!r}].judge.quality is not one of {QUALITY_GRADES}"
        mode = judge.get("failure_mode")
        if mode is not None and mode not in FAILURE_MODES:
            return f"episodes[{key!r}].judge.failure_mode is {mode!r}, which is not None or one of {FAILURE_MODES}"
        if "disputes_verdict" in judge and type(judge["disputes_verdict"]) is not bool:
            return f"episodes[{key!r}].judge.disputes_verdict is not a boolean"
    return None


def open_store(root: str | Path, labels_dir: str | Path | None = None, *, write: bool = True) -> RecordStore:
    """The process-wide :class:`RecordStore` of this dataset's ``episode_labels.json``.

    Args:
        root: Dataset root.
        labels_dir: Directory of the sidecar (default ``root``). For a write a missing one
            is created when its parent exists.
        write: The caller writes: a new ``labels_dir`` is created and keyed to the dataset.
            A read creates nothing.

    Raises:
        RootNotFoundError: the dataset root (or ``labels_dir``, named as such) is not an
            existing directory.
        LabelsDirMismatchError: ``labels_dir`` holds another dataset's labels.
    """
    directory = Path(root if labels_dir is None else labels_dir)
    if labels_dir is not None and write:
        create_labels_dir(directory)
    require_directory(directory, "Dataset root" if labels_dir is None else "Labels directory")
    check_labels_dir(root, labels_dir, write_key=write)
    return _store(root, labels_dir)


def _store(root: str | Path, labels_dir: str | Path | None) -> RecordStore:
    path = os.path.join(root if labels_dir is None else labels_dir, SIDECAR_FILENAME)  # labels_path's place, as text
    return RecordStore.open(
        path, validate=validate_document, empty=empty_document, check_record=_journal_record_problem
    )


def _journal_record_problem(key: str, record: Any) -> str | None:
    """Why a journal line's record may not be applied (a delete, ``None``, always may)."""
    return None if record is None else record_problem(key, record)


def existing_store(root: str | Path, labels_dir: str | Path | None = None) -> RecordStore:
    """The store of a sidecar that exists (:func:`open_store` for a read, then the sidecar or
    its journal must be there).

    Raises:
        LabelsNotFoundError: no sidecar yet (record verdicts first).
        RootNotFoundError, SidecarError, LabelsDirMismatchError: as :func:`open_store`.
    """
    store = _store(root, labels_dir)
    if labels_dir is None and store.exists():
        return store  # (so its directory exists, and no labels_dir is to be checked: open_store's checks pass)
    open_store(root, labels_dir, write=False)
    if not store.exists():
        from strands_robots.storage.side_files import remap_hint

        hint = remap_hint(store.path.parent) or (
            " Record deterministic verdicts first (record_deterministic_verdicts or `strands-labels verdicts ROOT FILE`)."
        )
        raise LabelsNotFoundError(f"No label sidecar at {store.path}.{hint}")
    return store


def query_document(root: str | Path, fn: Callable[[dict[str, Any]], Any], labels_dir: str | Path | None = None) -> Any:
    """Run ``fn(document)`` on the merged document under the lock (no copy; do not mutate).

    Raises:
        FileNotFoundError: no sidecar yet.
        SidecarError: see :func:`validate_document`.
    """
    return existing_store(root, labels_dir).query(fn)


def check_readable(root: str | Path, labels_dir: str | Path | None = None) -> None:
    """Raise :class:`SidecarError` now if ``episode_labels.json`` exists but cannot be used.

    Used before multi-sidecar edits (``strands-labels remap``) so a refusal changes nothing.
    """
    store = open_store(root, labels_dir)
    if store.exists():
        store.query(lambda document: None)

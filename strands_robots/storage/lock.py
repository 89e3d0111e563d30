"""The inter-process lock held around every read-modify-write of a sidecar."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import filelock

from strands_robots.errors import StorageError

#: Seconds a writer waits for another writer before giving up.
LOCK_TIMEOUT_S = float(os.environ.get("STRANDS_LABELS_LOCK_TIMEOUT", "120"))


def lock_path(sidecar: Path) -> Path:
    """``<dir>/.<name>.lock`` beside the sidecar."""
    return sidecar.with_name(f".{sidecar.name}.lock")


_locks: dict[str, filelock.FileLock] = {}
os.register_at_fork(after_in_child=_locks.clear)  # a child takes its own locks


def _file_lock(sidecar: Path) -> filelock.FileLock:
    """One FileLock object per lock file and process (creating one per call is costly)."""
    key = str(lock_path(sidecar))
    lock = _locks.get(key)
    if lock is None:
        lock = _locks.setdefault(key, filelock.FileLock(key, timeout=LOCK_TIMEOUT_S))
    return lock


@contextlib.contextmanager
def sidecar_lock(sidecar: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the exclusive inter-process lock of ``sidecar``.

    Re-entrant within a thread (filelock counts nested acquisitions).

    Raises:
        StorageError: the lock could not be taken within ``timeout`` seconds (another
            writer holds it), or the lock file cannot be created.
    """
    lock = _file_lock(sidecar)
    try:
        lock.acquire(timeout=LOCK_TIMEOUT_S if timeout is None else timeout)
    except filelock.Timeout as exc:
        raise StorageError(
            f"another process has held the lock on {sidecar} for over {lock.timeout:.0f} s; wait for it to "
            "finish (or set STRANDS_LABELS_LOCK_TIMEOUT) and retry."
        ) from exc
    except OSError as exc:
        raise StorageError(
            f"cannot create the lock file {lock_path(sidecar)}: {exc.strerror or exc}; make the directory "
            "writable or pass labels_dir= (CLI: --labels-dir)."
        ) from exc
    try:
        yield
    finally:
        lock.release()

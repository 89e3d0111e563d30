"""The inter-process lock held around every read-modify-write of a sidecar."""

from __future__ import annotations

import contextlib
import errno
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
def sidecar_lock(sidecar: Path, timeout: float | None = None, *, reading: bool = False) -> Iterator[None]:
    """Hold the exclusive inter-process lock of ``sidecar``.

    Re-entrant within a thread (filelock counts nested acquisitions).

    Args:
        sidecar: The sidecar file the lock guards.
        timeout: Seconds to wait for another holder (default ``STRANDS_LABELS_LOCK_TIMEOUT``).
        reading: The caller only reads. When the lock file cannot be created because the
            directory is read-only (a read-only mount or cache), nobody can write the
            sidecar there either, so the read goes ahead without the lock.

    Raises:
        StorageError: the lock could not be taken within ``timeout`` seconds (another
            writer holds it), or the lock file cannot be created for a write.
    """
    lock = _file_lock(sidecar)
    try:
        lock.acquire(timeout=LOCK_TIMEOUT_S if timeout is None else timeout)
    except OSError as exc:
        unlocked_read = reading and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
        if not unlocked_read:
            raise _lock_error(sidecar, lock, exc) from exc
    else:
        unlocked_read = False
    if unlocked_read:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _lock_error(sidecar: Path, lock: filelock.FileLock, exc: OSError) -> StorageError:
    if isinstance(exc, filelock.Timeout):
        return StorageError(
            f"another process has held the lock on {sidecar} for over {lock.timeout:.0f} s; wait for it to "
            "finish (or set STRANDS_LABELS_LOCK_TIMEOUT) and retry."
        )
    return StorageError(
        f"cannot create the lock file {lock_path(sidecar)}: {exc.strerror or exc}; make the directory "
        "writable or pass labels_dir= (CLI: --labels-dir)."
    )

"""The inter-process lock held around every read-modify-write of a sidecar: a thin wrapper
of :class:`filelock.FileLock`.

The lock file is ``.strands-labels/<name>.lock`` (``storage.side_files.lock_path``), opened
without following a symbolic link (filelock opens it ``O_NOFOLLOW``; a link there is refused
by name). Re-entrant within a thread, exclusive between threads and processes. While a lock
file an earlier version kept beside the sidecar (``.<name>.lock``) exists, it is taken too,
after the new one, so a process of that version still running is excluded as before, and
what that version left beside the sidecar is moved into the folder
(:func:`storage.state_dir.adopt_legacy`). strands-robots 0.5.3 takes no lock at all (it
replaces the file without one): what mixing with it guarantees is in
``docs/compatibility.md``.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path
from typing import Any

import filelock

from strands_robots.errors import StorageError
from strands_robots.storage import state_dir
from strands_robots.storage.side_files import legacy_lock_path, lock_path

log = logging.getLogger(__name__)

#: Seconds a writer waits for another writer before giving up.
LOCK_TIMEOUT_S = float(os.environ.get("STRANDS_LABELS_LOCK_TIMEOUT", "120"))


def _file_lock(path: Path) -> Any:
    """The process's lock object of one lock file (filelock keeps one per path)."""
    return filelock.FileLock(path, timeout=LOCK_TIMEOUT_S, is_singleton=True)


def sidecar_lock(sidecar: Path, timeout: float | None = None, *, reading: bool = False) -> SidecarLock:
    """Hold the exclusive inter-process lock of ``sidecar`` (``with sidecar_lock(path): ...``).

    Re-entrant within a thread.

    Args:
        sidecar: The sidecar file the lock guards.
        timeout: Seconds to wait for another holder (default ``STRANDS_LABELS_LOCK_TIMEOUT``).
        reading: The caller only reads. When the lock file cannot be created because the
            directory is read-only (a read-only mount or cache), nobody can write the
            sidecar there either, so the read goes ahead without the lock.

    Raises:
        StorageError: (on entering) the lock could not be taken within ``timeout`` seconds
            (another writer holds it), or the lock file cannot be created for a write.
        SidecarError: (on entering) a symbolic link is where the state folder or the lock
            file goes.
    """
    return SidecarLock(Path(sidecar), timeout, reading)


class SidecarLock:
    """The context manager :func:`sidecar_lock` returns."""

    __slots__ = ("_held", "reading", "sidecar", "timeout")

    def __init__(self, sidecar: Path, timeout: float | None, reading: bool) -> None:
        self.sidecar = sidecar
        self.timeout = timeout
        self.reading = reading
        self._held: list[Any] = []

    def __enter__(self) -> None:
        wait = LOCK_TIMEOUT_S if self.timeout is None else self.timeout
        path = lock_path(self.sidecar)
        try:
            state_dir.ensure(self.sidecar.parent)
            self._take(path, wait)
        except filelock.Timeout as exc:
            raise _timeout_error(self.sidecar, wait) from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise state_dir.refuse_link(path) from exc
            if not (self.reading and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)):
                raise _create_error(path, exc) from exc
            return  # a read in a read-only directory goes ahead unlocked
        legacy = legacy_lock_path(self.sidecar)
        try:
            if stat.S_ISREG(os.lstat(legacy).st_mode):
                self._take(legacy, wait)
                state_dir.adopt_legacy(self.sidecar)
        except FileNotFoundError:
            pass
        except filelock.Timeout as exc:
            self.__exit__()
            raise _timeout_error(self.sidecar, wait) from exc
        except OSError as exc:  # adopted on a later write; an earlier version's files stay readable
            log.warning("could not move the files an earlier version left beside %s: %s", self.sidecar, exc)
        except BaseException:
            self.__exit__()
            raise

    def _take(self, path: Path, wait: float) -> None:
        lock = _file_lock(path)
        lock.acquire(timeout=wait)
        self._held.append(lock)

    def __exit__(self, *exc_info: object) -> None:
        while self._held:
            self._held.pop().release()


def _timeout_error(sidecar: Path, wait: float) -> StorageError:
    return StorageError(
        f"another process has held the lock on {sidecar} for over {wait:.0f} s; wait for it to finish (or set "
        "STRANDS_LABELS_LOCK_TIMEOUT) and retry."
    )


def _create_error(path: Path, exc: OSError) -> StorageError:
    err = StorageError(
        f"cannot create the lock file {path}: {exc.strerror or exc}; make the directory writable or pass "
        "labels_dir= (CLI: --labels-dir)."
    )
    err.errno = exc.errno
    return err


__all__ = ["LOCK_TIMEOUT_S", "lock_path", "sidecar_lock"]

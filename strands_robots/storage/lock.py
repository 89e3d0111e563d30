"""The inter-process lock held around every read-modify-write of a sidecar.

An exclusive ``flock`` on ``.<name>.lock`` beside the sidecar (the primitive filelock's
``UnixFileLock`` uses), with the lock file kept open for the life of the process: taking
the lock is one ``flock`` and one ``stat`` (~20 µs) instead of filelock's per-acquire
open, path resolution and fork bookkeeping (~250 µs, more than the fsync it guards).
Re-entrant within a thread, exclusive between threads and processes. A lock file that
was removed or replaced while waiting is re-opened, so two processes never hold locks on
different files. A forked child closes the inherited descriptors and opens its own.
Platforms without ``fcntl`` use ``filelock.FileLock``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from pathlib import Path
from typing import Any

from strands_robots.errors import StorageError
from strands_robots.storage.side_files import lock_path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: Seconds a writer waits for another writer before giving up.
LOCK_TIMEOUT_S = float(os.environ.get("STRANDS_LABELS_LOCK_TIMEOUT", "120"))


class LockTimeout(TimeoutError):
    """Another holder kept the lock past the timeout."""


class ProcessFileLock:
    """An exclusive, thread-re-entrant ``flock`` on one lock file, its descriptor kept open.

    Args:
        path: The lock file (created with mode 0644 if missing).
        timeout: Default seconds :meth:`acquire` waits.
    """

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._mutex = threading.RLock()
        self._fd: int | None = None
        self._ino = 0  # inode of the open lock file (an open file's inode never changes)
        self._depth = 0

    def acquire(self, timeout: float | None = None) -> None:
        """Take the lock (nested calls in the holding thread only count).

        Raises:
            LockTimeout: not taken within ``timeout`` seconds.
            OSError: the lock file cannot be created (read-only directory, permissions).
        """
        timeout = max(self.timeout if timeout is None else timeout, 0.0)
        deadline = None  # the clock is read only when there is something to wait for
        if not self._mutex.acquire(blocking=False):
            deadline = time.monotonic() + timeout
            if not self._mutex.acquire(timeout=timeout):
                raise LockTimeout(self.path)
        try:
            if self._depth == 0:
                self._lock_file(timeout, deadline)
            self._depth += 1
        except BaseException:
            self._mutex.release()
            raise

    def release(self) -> None:
        """Release one acquisition; the file lock goes with the last."""
        if self._depth == 1 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._depth -= 1
        self._mutex.release()

    def _lock_file(self, timeout: float, deadline: float | None) -> None:
        pause = 0.0005
        while True:
            if self._fd is None:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                try:
                    self._ino = os.fstat(fd).st_ino
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
                _opened(self)
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                now = time.monotonic()
                if deadline is None:
                    deadline = now + timeout
                if now >= deadline:
                    raise LockTimeout(self.path) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
                continue
            try:  # the file at the path is still the one locked (one stat: the descriptor's inode is known)
                same = os.stat(self.path).st_ino == self._ino
            except FileNotFoundError:
                same = False
            if same:
                return
            # the file was removed or replaced: a lock on the old inode excludes nobody
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def forget(self) -> None:
        """Close the descriptor (in a forked child: it shares the parent's lock state)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


_locks: dict[str, Any] = {}
#: The lock of each sidecar path seen (a store passes the same ``Path`` object every time,
#: whose hash is cached), so taking the lock builds no lock-file path.
_by_sidecar: dict[Any, Any] = {}
#: Sidecar paths whose lock is looked up without building its path (more are looked up the slow way).
MAX_SIDECAR_PATHS = 4096
#: Lock files kept open at most (a process touching many datasets closes idle ones first).
MAX_OPEN_LOCK_FILES = 64
_open_lock = threading.Lock()
_open: dict[ProcessFileLock, None] = {}  # insertion order: least recently opened first


def _opened(lock: ProcessFileLock) -> None:
    with _open_lock:
        _open.pop(lock, None)
        _open[lock] = None
        for other in list(_open):
            if len(_open) <= MAX_OPEN_LOCK_FILES:
                break
            if other is lock or not other._mutex.acquire(blocking=False):
                continue
            try:
                if other._depth == 0:  # idle: the next acquire re-opens the file
                    other.forget()
                    _open.pop(other, None)
            finally:
                other._mutex.release()


def _forget_after_fork() -> None:  # a child takes its own locks
    global _open_lock
    _open_lock = threading.Lock()  # another thread of the parent may have held it
    for lock in _locks.values():
        if isinstance(lock, ProcessFileLock):
            lock.forget()
    _locks.clear()
    _by_sidecar.clear()
    _open.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def _file_lock(sidecar: Path) -> Any:
    """One lock object per lock file and process."""
    lock = _by_sidecar.get(sidecar)
    if lock is not None:
        return lock
    key = str(lock_path(Path(sidecar)))
    lock = _locks.get(key)
    if lock is None:
        if fcntl is not None:
            lock = ProcessFileLock(key, timeout=LOCK_TIMEOUT_S)
        else:  # pragma: no cover - not POSIX
            import filelock

            lock = filelock.FileLock(key, timeout=LOCK_TIMEOUT_S)
        lock = _locks.setdefault(key, lock)
    if len(_by_sidecar) < MAX_SIDECAR_PATHS:
        _by_sidecar[sidecar] = lock
    return lock


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
    """
    return SidecarLock(sidecar, timeout, reading)


class SidecarLock:
    """The context manager :func:`sidecar_lock` returns (a class: no generator frame per hold)."""

    __slots__ = ("_held", "reading", "sidecar", "timeout")

    def __init__(self, sidecar: Path, timeout: float | None, reading: bool) -> None:
        self.sidecar = sidecar
        self.timeout = timeout
        self.reading = reading
        self._held: Any = None

    def __enter__(self) -> None:
        lock = _file_lock(self.sidecar)
        try:
            lock.acquire(timeout=LOCK_TIMEOUT_S if self.timeout is None else self.timeout)
        except OSError as exc:
            if not (self.reading and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)):
                raise _lock_error(self.sidecar, lock, exc) from exc
            return  # a read in a read-only directory goes ahead unlocked
        self._held = lock

    def __exit__(self, *exc_info: object) -> None:
        lock, self._held = self._held, None
        if lock is not None:
            lock.release()


def _lock_error(sidecar: Path, lock: Any, exc: OSError) -> StorageError:
    if isinstance(exc, TimeoutError):
        return StorageError(
            f"another process has held the lock on {sidecar} for over {lock.timeout:.0f} s; wait for it to "
            "finish (or set STRANDS_LABELS_LOCK_TIMEOUT) and retry."
        )
    return StorageError(
        f"cannot create the lock file {lock_path(sidecar)}: {exc.strerror or exc}; make the directory "
        "writable or pass labels_dir= (CLI: --labels-dir)."
    )

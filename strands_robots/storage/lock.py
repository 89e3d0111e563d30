"""The inter-process lock held around every read-modify-write of a sidecar.

An exclusive ``flock`` on ``.strands-labels/<name>.lock`` (``storage.side_files.lock_path``),
opened ``O_NOFOLLOW`` at each acquisition and closed at release; re-entrant within a
thread, exclusive between threads, processes and forked children. While the lock file an
earlier version kept beside the sidecar exists it is taken too, and what that version left
there is adopted (:func:`storage.state_dir.adopt_legacy`). docs/sidecar-format.md, "Files
beside it"; mixing with strands-robots 0.5.3 (no lock): docs/compatibility.md.

Why not filelock: filelock 4.3 spends ~320 µs of CPU per acquire and release (its fork
bookkeeping, realpath and singleton lookup) where open, ``flock`` and close take ~20 µs;
every ``annotate_episode`` takes the lock once, so with filelock the lock alone was twice
the fsync it guards (docs/performance.md, row ``annotate_loop``; the guard rail is one call
<= 2x the fsync floor). The judge's episode leases (:mod:`.lease`) take the same
:func:`flock_file`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from strands_robots.errors import StorageError
from strands_robots.storage import state_dir
from strands_robots.storage.side_files import legacy_lock_path, lock_path

log = logging.getLogger(__name__)

#: Seconds a writer waits for another writer before giving up.
LOCK_TIMEOUT_S = float(os.environ.get("STRANDS_LABELS_LOCK_TIMEOUT", "120"))

_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


class _FileLock:
    """This process's state of one lock file: a mutex between its threads, the owning thread,
    the re-entry depth and, while held, the descriptor carrying the ``flock``."""

    __slots__ = ("__weakref__", "depth", "fd", "mutex", "owner", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.mutex = threading.Lock()
        self.owner: int | None = None
        self.depth = 0
        self.fd: int | None = None

    def acquire(self, wait: float) -> _FileLock:
        """Take the lock, waiting up to ``wait`` seconds (< 0: forever); returns this state.

        Raises:
            TimeoutError: another thread or process held it for ``wait`` seconds.
            OSError: the lock file cannot be opened (``ELOOP``: a symbolic link is there).
        """
        me = threading.get_ident()
        if self.owner == me:
            self.depth += 1
            return self
        deadline = None if wait < 0 else time.monotonic() + wait
        if not self.mutex.acquire(timeout=-1 if deadline is None else max(wait, 0.0)):
            raise TimeoutError(self.path)
        try:
            self.fd = flock_file(self.path, deadline)
        except BaseException:
            self.mutex.release()
            raise
        self.owner, self.depth = me, 1
        return self

    def release(self) -> None:
        self.depth -= 1
        if self.depth:
            return
        fd, self.fd, self.owner = self.fd, None, None
        try:
            if fd is not None:
                os.close(fd)  # closing the only descriptor of the open file releases the flock
        finally:
            self.mutex.release()


def flock_file(path: str | Path, deadline: float | None) -> int:
    """Open ``path`` (created, never through a symbolic link) and take an exclusive ``flock``
    on it, retrying until ``deadline`` (``time.monotonic()``; None: forever, a past one: a
    single try). Returns the descriptor: closing it releases the lock.

    Raises:
        TimeoutError: another descriptor (of any process) held it until ``deadline``.
        OSError: the file cannot be opened (``ELOOP``: a symbolic link is there).
    """
    fd = os.open(path, _OPEN_FLAGS, 0o644)
    delay = 0.001
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(path) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
    except BaseException:
        os.close(fd)
        raise


#: The lock state of each lock file this process uses, alive while some caller holds or waits
#: for it or a :class:`SidecarLock` keeps it (weak values: nothing is remembered about a lock nobody uses).
_locks: weakref.WeakValueDictionary[str, _FileLock] = weakref.WeakValueDictionary()
_registry = threading.Lock()
_generation = 0  # forks seen: a lock state kept from before a fork is the parent's


def _file_lock(path: str | Path) -> _FileLock:
    key = os.fspath(path)
    with _registry:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = _FileLock(key)
        return lock


def _after_fork_in_child() -> None:
    """A forked child holds none of its parent's locks: it closes the inherited descriptors
    (their ``flock`` stays the parent's) and starts with fresh state."""
    global _locks, _registry, _generation
    for lock in list(_locks.values()):
        if lock.fd is not None:
            with contextlib.suppress(OSError):
                os.close(lock.fd)
            lock.fd = None
    _locks = weakref.WeakValueDictionary()
    _registry = threading.Lock()
    _generation += 1


os.register_at_fork(after_in_child=_after_fork_in_child)


def sidecar_lock(sidecar: Path, timeout: float | None = None, *, reading: bool = False) -> AbstractContextManager[bool]:
    """Hold the exclusive inter-process lock of ``sidecar`` (``with sidecar_lock(path): ...``).

    Re-entrant within a thread. ``SidecarLock(sidecar).hold(...)`` is the same lock, its file
    names computed once (a store that takes it on every call keeps one).

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
    return SidecarLock(sidecar).hold(timeout, reading=reading)


class SidecarLock:
    """The lock of one sidecar: the names of its lock file, the state folder and the lock file
    an earlier version kept beside the sidecar, computed once; :meth:`hold` takes it."""

    __slots__ = ("_kept", "legacy", "path", "sidecar", "state")

    def __init__(self, sidecar: Path) -> None:
        self.sidecar = Path(sidecar)
        self.path = os.fspath(lock_path(self.sidecar))
        self.state = os.path.dirname(self.path)  # the state folder (``storage.side_files``)
        self.legacy = os.fspath(legacy_lock_path(self.sidecar))
        self._kept: tuple[int, _FileLock] | None = None

    def acquire(self, timeout: float | None = None, *, reading: bool = False) -> tuple[list[_FileLock], bool]:
        """Take the lock (arguments and errors as :func:`sidecar_lock`); returns what
        :meth:`release` gives back, and False when no lock file of an earlier version is beside
        the sidecar (then nothing else that version leaves there can be: it takes its lock
        first, and :func:`storage.state_dir.adopt_legacy` removes the lock last)."""
        wait = LOCK_TIMEOUT_S if timeout is None else timeout
        held: list[_FileLock] = []
        try:
            state_dir.ensure_folder(self.state)
            held.append(self._state().acquire(wait))
        except OSError as exc:
            if isinstance(exc, TimeoutError):
                raise _timeout_error(self.sidecar, wait) from exc
            if exc.errno == errno.ELOOP:
                raise state_dir.refuse_link(Path(self.path)) from exc
            if not (reading and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)):
                raise _create_error(self.path, exc) from exc
            return held, True  # a read in a read-only directory goes ahead unlocked
        try:
            return held, self._take_legacy(held, wait)
        except BaseException:
            self.release(held)
            raise

    @staticmethod
    def release(held: list[_FileLock]) -> None:
        """Give back what :meth:`acquire` took."""
        while held:
            held.pop().release()

    @contextlib.contextmanager
    def hold(self, timeout: float | None = None, *, reading: bool = False) -> Iterator[bool]:
        """Hold the lock for the ``with`` block (:meth:`acquire`, then :meth:`release`); yields
        :meth:`acquire`'s flag."""
        held, legacy = self.acquire(timeout, reading=reading)
        try:
            yield legacy
        finally:
            self.release(held)

    def _state(self) -> _FileLock:
        """This process's state of the lock file, kept by this object (looked up again in a forked child)."""
        kept = self._kept
        if kept is None or kept[0] != _generation:
            kept = self._kept = (_generation, _file_lock(self.path))
        return kept[1]

    def _take_legacy(self, held: list[_FileLock], wait: float) -> bool:
        if not os.access(self.legacy, os.F_OK, follow_symlinks=False):
            return False  # (the common case, answered without an exception)
        try:
            if stat.S_ISREG(os.lstat(self.legacy).st_mode):
                held.append(_file_lock(self.legacy).acquire(wait))
                state_dir.adopt_legacy(self.sidecar)
        except FileNotFoundError:
            return False
        except TimeoutError as exc:
            raise _timeout_error(self.sidecar, wait) from exc
        except OSError as exc:  # adopted on a later write; an earlier version's files stay readable
            log.warning("could not move the files an earlier version left beside %s: %s", self.sidecar, exc)
        return True


def _timeout_error(sidecar: Path, wait: float) -> StorageError:
    return StorageError(
        f"another process has held the lock on {sidecar} for over {wait:.0f} s; wait for it to finish (or set "
        "STRANDS_LABELS_LOCK_TIMEOUT) and retry."
    )


def _create_error(path: str, exc: OSError) -> StorageError:
    err = StorageError(
        f"cannot create the lock file {path}: {exc.strerror or exc}; make the directory writable or pass "
        "labels_dir= (CLI: --labels-dir)."
    )
    err.errno = exc.errno
    return err

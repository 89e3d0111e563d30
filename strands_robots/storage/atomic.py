"""Atomic replacement of a file: unique temp file in the same directory, fsync, rename."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from strands_robots.errors import SidecarError, StorageError
from strands_robots.storage import state_dir
from strands_robots.storage.side_files import STATE_DIR, temp_dir, temp_prefix


def check_target(path: Path) -> bool:
    """Refuse a sidecar path that is a symlink or not a regular file.

    Returns:
        Whether ``path`` exists (a regular file); False when there is nothing there yet.

    Raises:
        SidecarError: ``path`` is a symlink, a directory or another non-regular file, or
            cannot be looked up (a name too long for the file system).
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:  # a name too long, a parent that is a file
        raise SidecarError(
            f"{str(path)[:120]}{'...' if len(str(path)) > 120 else ''} cannot be used ({exc.strerror or exc}); "
            "pass an existing dataset root (or labels dir) with a shorter path."
        ) from exc
    if stat.S_ISLNK(st.st_mode):
        raise SidecarError(
            f"{path} is a symbolic link; refusing to write through it. Replace the link with a regular "
            "file (or remove it) and run again."
        )
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise SidecarError(f"{path} is {kind}; move it away so the sidecar can be written there.")
    return True


def read_regular(path: Path | str) -> bytes:
    """The bytes of a regular file, opened without following a symbolic link.

    Raises:
        FileNotFoundError: nothing is there.
        SidecarError: a symbolic link, a directory or another non-regular file is there.
        OSError: the read failed.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR):
            check_target(Path(path))
        raise
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            check_target(Path(path))
            raise SidecarError(f"{path} is not a regular file; move it away and retry.")
        return handle.read()


#: ``renameat2`` flags (linux/fs.h): fail if the target exists; swap the two names atomically.
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100
#: errnos meaning "this kernel, C library or file system cannot do it": fall back to a rename.
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28 (musl, macOS): plain renames
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def rename_with(source: str | Path, target: str | Path, flags: int) -> bool:
    """``renameat2(source, target, flags)``: with :data:`RENAME_EXCHANGE` the two files swap
    names in one atomic step (``source`` then names the file ``target`` held); with
    :data:`RENAME_NOREPLACE` ``target`` must not exist.

    Returns:
        False when the system cannot (no ``renameat2`` in the C library, a file system
        without the flag): nothing was renamed, the caller falls back to :func:`os.replace`.

    Raises:
        OSError: the rename failed (``FileNotFoundError``: no ``target`` to exchange with;
            ``FileExistsError``: ``target`` exists under ``RENAME_NOREPLACE``).
    """
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(target))


def _install(tmp_name: str, path: Path, displaced: Callable[[str], None] | None) -> bool:
    """Put the temp file at ``path``; with ``displaced``, by an atomic exchange whose
    displaced file (then at ``tmp_name``) is handed to ``displaced`` before it is removed.
    Returns False when ``path`` appeared meanwhile where there was none (nothing installed)."""
    if displaced is not None:
        try:
            if rename_with(tmp_name, path, RENAME_EXCHANGE):
                displaced(tmp_name)
                return True
        except FileNotFoundError:  # no file at ``path`` to exchange with: create it, never clobber one
            try:
                if rename_with(tmp_name, path, RENAME_NOREPLACE):
                    return True
            except FileExistsError:
                return False
    os.replace(tmp_name, path)
    return True


def fsync_dir(directory: Path) -> None:
    """fsync a directory so a rename or a new file in it survives a power loss."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def storage_error(exc: OSError, path: Path, action: str) -> StorageError:
    """Wrap an ``OSError`` into a :class:`StorageError` whose message names the remedy."""
    if exc.errno == errno.ENOSPC:
        remedy = "free disk space"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        remedy = "make the directory writable or pass labels_dir= (CLI: --labels-dir) to keep labels elsewhere"
    else:
        remedy = "check the file system and retry"
    err = StorageError(f"could not {action} {path}: {exc.strerror or exc}; {remedy}. Nothing was changed.")
    err.errno = exc.errno
    return err


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably (see :func:`atomic_write_chunks`).

    Raises:
        SidecarError: ``path`` is a symlink or a directory.
        StorageError: the write failed (disk full, permission); ``path`` is unchanged.
    """
    atomic_write_chunks(path, (data,))


def atomic_write_chunks(
    path: Path,
    chunks: Iterable[bytes],
    *,
    before_replace: Callable[[os.stat_result], bool] | None = None,
    displaced: Callable[[str], None] | None = None,
    durable: bool = True,
) -> str | None:
    """Replace ``path`` with the concatenated ``chunks`` atomically and durably; returns their sha256.

    A uniquely named temp file (created ``O_EXCL | O_NOFOLLOW``) is written in the same
    directory (a sidecar's in the state folder beside it), fsynced, given the
    existing file's permission bits, renamed over ``path`` and the directory fsynced.
    Readers see the old or the new file, never a torn one. The chunks are written as
    they come (a large file is never whole in memory); an exception raised by the
    iterator removes the temp file and propagates unchanged, ``path`` untouched.

    Args:
        path: The file to replace.
        chunks: Its new bytes.
        before_replace: Called with the temp file's ``fstat`` (its identity once renamed)
            after the fsync, right before the rename; when it returns False the temp file
            is removed, ``path`` is left as it is and None is returned.
        displaced: When given, the new file is installed by an atomic exchange
            (:func:`rename_with`) and ``displaced(name)`` is called with the name the file
            it replaced now has, before that file is removed: the caller sees exactly
            what another writer (one taking no lock) put at ``path`` after
            ``before_replace`` looked, which a check-then-rename would silently drop.
            Where there was no file, ``path`` is created only if it still does not
            exist (else None is returned, nothing installed). On a system without
            ``renameat2`` it is a plain rename and ``displaced`` is not called.
        durable: False skips the fsyncs (a cache: atomic, but a lost one is rebuilt).

    Returns:
        The sha256 hex digest of the bytes written (None: ``before_replace`` declined,
        or a file appeared at ``path`` meanwhile).

    Raises:
        SidecarError: ``path`` is a symlink or a directory.
        StorageError: the write failed (disk full, permission); ``path`` is unchanged.
    """
    path = Path(path)
    digest = hashlib.sha256()
    check_target(path)
    mode: int | None = None
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(os.stat(path).st_mode)
    tmp_name = None
    try:
        directory = temp_dir(path)
        if directory.name == STATE_DIR:  # a sidecar's temp file, or a derived file
            state_dir.ensure(directory.parent)
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=temp_prefix(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
                digest.update(chunk)
            handle.flush()
            os.fchmod(handle.fileno(), mode if mode is not None else 0o644)
            if durable:
                os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
        if before_replace is not None and not before_replace(written):
            return None
        if not _install(tmp_name, path, displaced):
            return None
        if displaced is None:
            tmp_name = None
        if durable:
            fsync_dir(path.parent)
    except OSError as exc:
        raise storage_error(exc, path, "write") from exc
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    return digest.hexdigest()


def replace_cache_file(path: Path, data: bytes) -> bool:
    """Replace a cache file with ``data`` (:func:`atomic_write_chunks`, not fsynced: a lost
    cache is rebuilt). A cache that cannot be written (a read-only directory, a link at
    ``path``) only costs speed.

    Returns:
        Whether the cache was written.
    """
    try:
        atomic_write_chunks(path, (data,), durable=False)
    except (OSError, SidecarError):
        return False
    return True

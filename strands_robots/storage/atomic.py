"""Atomic replacement of a file: unique temp file in the same directory, fsync, rename."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from strands_robots.errors import SidecarError, StorageError
from strands_robots.storage.side_files import temp_prefix


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


def atomic_write_chunks(path: Path, chunks: Iterable[bytes]) -> str:
    """Replace ``path`` with the concatenated ``chunks`` atomically and durably; returns their sha256.

    A uniquely named temp file is written in the same directory, fsynced, given the
    existing file's permission bits, renamed over ``path`` and the directory fsynced.
    Readers see the old or the new file, never a torn one. The chunks are written as
    they come (a large file is never whole in memory); an exception raised by the
    iterator removes the temp file and propagates unchanged, ``path`` untouched.

    Returns:
        The sha256 hex digest of the bytes written.

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
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
                digest.update(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode if mode is not None else 0o644)
        os.replace(tmp_name, path)
        tmp_name = None
        fsync_dir(path.parent)
    except OSError as exc:
        raise storage_error(exc, path, "write") from exc
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    return digest.hexdigest()

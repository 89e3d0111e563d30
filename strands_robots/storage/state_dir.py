"""The hidden folder of derived state beside the sidecars, and the adoption of the files
earlier versions left beside them.

Every derived file (``storage.side_files``) lives in ``.strands-labels/`` next to the
sidecars. :func:`ensure` creates the folder and refuses one that is a symbolic link or not
a directory (nothing is ever created through a link). :func:`adopt_legacy` moves what an
earlier version kept beside a sidecar into the folder, once, under the sidecar's lock and
the earlier version's lock (docs/sidecar-format.md, "Files beside it").
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from strands_robots.errors import SidecarError
from strands_robots.storage import side_files


def refuse_link(path: Path, what: str = "file") -> SidecarError:
    """The error for a symbolic link (or other non-regular entry) found where a derived file goes."""
    return SidecarError(
        f"{path} is a symbolic link or not a regular {what}; refusing to create or write through it. "
        "Remove it (nothing of this package's is stored in a link) and run again."
    )


def ensure(directory: str | Path, subfolder: str | None = None) -> None:
    """Create the state folder of ``directory`` (and its ``subfolder``, e.g. ``leases``;
    mode 0755) when missing.

    Raises:
        SidecarError: a folder's name is taken by a symbolic link or a file.
        OSError: it cannot be created (read-only directory, permissions, a missing ``directory``).
    """
    folder = os.path.join(directory, side_files.STATE_DIR)
    for path in (folder, os.path.join(folder, subfolder)) if subfolder else (folder,):
        ensure_folder(path)


def ensure_folder(path: str) -> None:
    """Create the folder ``path`` (mode 0755) when missing: :func:`ensure` of one folder
    already named (a lock taken on every write names its state folder once).

    Raises:
        SidecarError, OSError: as :func:`ensure`.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process (a link: checked below)
            os.mkdir(path, 0o755)
        st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise refuse_link(Path(path), "directory")


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _append_and_remove(source: Path, target: Path) -> None:
    """Append the lines of ``source`` to ``target`` (``storage.jsonl``), then remove ``source``."""
    from strands_robots.storage.jsonl import append_encoded

    if not _regular(target):
        os.rename(source, target)
        return
    with open(source, "rb") as handle:
        data = handle.read()
    if data:
        append_encoded(target, data if data.endswith(b"\n") else data + b"\n")
    os.unlink(source)


def adopt_legacy(sidecar: Path) -> bool:
    """Move what an earlier version left beside ``sidecar`` into the state folder.

    Call holding the sidecar's lock and the earlier version's lock. Best effort for
    caches and temp files; a journal is moved only while the folder holds none.

    Returns:
        True when nothing of the earlier version is left beside the sidecar (its lock
        file included); False while its journal waits for the folder's own to be folded.

    Raises:
        OSError: a file could not be moved (nothing was lost: what was not moved stays
            where it was and is adopted on the next write).
    """
    sidecar = Path(sidecar)
    ensure(sidecar.parent)
    old = side_files.legacy_files(sidecar)
    for name in ("index_cache_path", "fingerprints_npz", "fingerprints_json"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old[name])
    remove_dead_temps(sidecar.parent, side_files.legacy_temp_prefix(sidecar))
    for name in ("rejected_path", "conflicts_path"):
        if _regular(old[name]):
            _append_and_remove(old[name], getattr(side_files, name)(sidecar))
    journal_left = False
    if _regular(old["journal_path"]):
        if _regular(side_files.journal_path(sidecar)):
            journal_left = True
        else:
            if _regular(old["journal_base_path"]):
                os.replace(old["journal_base_path"], side_files.journal_base_path(sidecar))
            os.rename(old["journal_path"], side_files.journal_path(sidecar))
    elif _regular(old["journal_base_path"]):
        os.unlink(old["journal_base_path"])  # a base without its journal applies to nothing
    if journal_left:
        return False
    with contextlib.suppress(FileNotFoundError):
        os.unlink(side_files.legacy_lock_path(sidecar))
    return True


def remove_dead_temps(directory: Path, prefix: str) -> int:
    """Remove the temp files ``<prefix>*.tmp`` in ``directory`` (call holding the lock every
    writer of those names holds: a temp file there is a write that never completed).

    Returns:
        How many were removed.
    """
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if name.startswith(prefix) and name.endswith(".tmp"):
            try:
                os.unlink(Path(directory) / name)
                removed += 1
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.EISDIR, errno.EPERM, errno.EACCES):
                    raise
    return removed

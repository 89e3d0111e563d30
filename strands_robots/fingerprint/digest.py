"""A change stamp and a content digest of a dataset's metadata files (no heavy import:
caches and stale checks use them cheaply)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any


def metadata_signature(root: str | Path) -> tuple[Any, ...]:
    """``(name, inode, size, mtime_ns)`` of every metadata file of ``root`` (a change stamp).

    Covers ``meta/info.json``, ``meta/*.jsonl``, ``meta/*.parquet`` and
    ``meta/episodes/*/*.parquet``; missing files are left out.
    """
    signature = []
    for path in metadata_files(root):
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        signature.append((os.path.basename(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(signature)


#: The version of the rules that read fingerprint values from the metadata
#: (:mod:`strands_robots.dataset.light_fingerprints`, :mod:`strands_robots.dataset.fingerprints`).
#: It is part of every metadata digest, so a fingerprint read by other rules is never taken
#: as matching: raise it with any change to the values those rules read from the same bytes.
FINGERPRINT_RULES = 1


def metadata_digest(root: str | Path) -> str | None:
    """16 hex digits of the sha256 of the metadata files' paths and bytes (those of
    :func:`metadata_signature`), or None when there are none or one that is listed cannot
    be opened (a dangling symlink, a directory, a file removed meanwhile).

    Unlike the signature, it survives a copy of the dataset (``cp -r``, a Hub download):
    equal digests mean byte-identical metadata read by the same :data:`FINGERPRINT_RULES`,
    so the fingerprints read from it are unchanged (``docs/sidecar-format.md``,
    ``fingerprint``: ``meta``).
    """
    digest = hashlib.sha256(b"fingerprint rules %d\n" % FINGERPRINT_RULES)
    meta = os.path.join(root, "meta")
    count = 0
    for path in metadata_files(root):
        try:
            with open(path, "rb") as handle:
                content = hashlib.file_digest(handle, "sha256").digest()
        except OSError:  # a dangling symlink too: the reader lists it and refuses it
            return None
        name = os.path.relpath(path, meta).encode("utf-8", "surrogateescape")
        digest.update(b"%d:%s:" % (len(name), name) + content)
        count += 1
    return digest.hexdigest()[:16] if count else None


def metadata_files(root: str | Path) -> list[str]:
    """Paths of the metadata files :func:`metadata_signature` covers, in its order
    (``info.json`` even when it is absent; a listed symlink may dangle)."""
    meta = os.path.join(root, "meta")
    names = _names(meta)  # one scandir per directory (a judge tool checks this twice per episode)
    files = [
        os.path.join(meta, "info.json"),
        *sorted(os.path.join(meta, n) for n in names if n.endswith(".jsonl")),
        *sorted(os.path.join(meta, n) for n in names if n.endswith(".parquet")),
    ]
    episodes = os.path.join(meta, "episodes")
    for chunk in sorted(_names(episodes, dirs_only=True)):
        folder = os.path.join(episodes, chunk)
        files.extend(sorted(os.path.join(folder, n) for n in _names(folder) if n.endswith(".parquet")))
    return files


def _names(directory: str, *, dirs_only: bool = False) -> list[str]:
    """Entry names of ``directory`` (only directories, symlinks followed, with ``dirs_only``); [] when unreadable."""
    try:
        with os.scandir(directory) as entries:
            return [e.name for e in entries if not dirs_only or e.is_dir()]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []

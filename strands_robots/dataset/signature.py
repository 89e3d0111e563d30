"""A change stamp of a dataset's metadata files (no heavy import: caches check it cheaply)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def metadata_signature(root: str | Path) -> tuple[Any, ...]:
    """``(name, inode, size, mtime_ns)`` of every metadata file of ``root`` (a change stamp).

    Covers ``meta/info.json``, ``meta/*.jsonl``, ``meta/*.parquet`` and
    ``meta/episodes/*/*.parquet``; missing files are left out.
    """
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
    signature = []
    for path in files:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        signature.append((os.path.basename(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(signature)


def _names(directory: str, *, dirs_only: bool = False) -> list[str]:
    """Entry names of ``directory`` (only directories, symlinks followed, with ``dirs_only``); [] when unreadable."""
    try:
        with os.scandir(directory) as entries:
            return [e.name for e in entries if not dirs_only or e.is_dir()]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []

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
    meta = Path(root) / "meta"
    files = [
        meta / "info.json",
        *sorted(meta.glob("*.jsonl")),
        *sorted(meta.glob("*.parquet")),
        *sorted(meta.glob("episodes/*/*.parquet")),
    ]
    signature = []
    for path in files:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        signature.append((path.name, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(signature)

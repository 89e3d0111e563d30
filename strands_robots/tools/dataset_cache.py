"""Open datasets once per process for tools called episode after episode.

A judge calls three tools per episode on the same root; re-reading the episodes
metadata each time would make a 10,000-episode run quadratic. The cache is keyed by the
resolved root and invalidated when ``meta/info.json`` or the episodes metadata changes
(size or modification time), so a dataset edited between calls is re-read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from strands_robots.dataset import open_dataset

_MAX_ROOTS = 8
_lock = threading.Lock()
_cache: OrderedDict[Path, tuple[tuple[Any, ...], Any]] = OrderedDict()


def _signature(root: Path) -> tuple[Any, ...]:
    parts: list[Any] = []
    for rel in ("meta/info.json", "meta/episodes.jsonl", "meta/episodes"):
        try:
            st = (root / rel).stat()
        except OSError:
            parts.append(None)
            continue
        parts.append((st.st_mtime_ns, st.st_size))
    return tuple(parts)


def cached_dataset(root: Path) -> Any:
    """``open_dataset(root)``, reused while the dataset's metadata is unchanged.

    Args:
        root: A resolved dataset root (see :mod:`strands_robots.tools.roots`).

    Raises:
        Whatever ``open_dataset`` raises (``DatasetError`` and subclasses).
    """
    signature = _signature(root)
    with _lock:
        hit = _cache.get(root)
        if hit is not None and hit[0] == signature:
            _cache.move_to_end(root)
            return hit[1]
    dataset = open_dataset(root)
    with _lock:
        _cache[root] = (signature, dataset)
        _cache.move_to_end(root)
        while len(_cache) > _MAX_ROOTS:
            _cache.popitem(last=False)
    return dataset


def clear() -> None:
    """Forget every cached dataset."""
    with _lock:
        _cache.clear()

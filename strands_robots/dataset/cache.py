"""Open each dataset once per process while its metadata is unchanged.

A judge calls three tools per episode on the same root, and label writers check every
episode against the dataset; re-reading the episodes metadata each time would make a
10,000-episode run quadratic. The cache is keyed by the resolved root and invalidated
when any metadata file the episodes table is read from changes (inode, size or mtime),
so a dataset edited between calls (LeRobot's ``delete_episodes``) is re-read.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from strands_robots.arguments import path_argument
from strands_robots.dataset.reader import Dataset, open_dataset
from strands_robots.dataset.signature import metadata_signature

_MAX_ROOTS = 8
_lock = threading.Lock()
_cache: OrderedDict[str, tuple[tuple[Any, ...], Dataset]] = OrderedDict()


def cached_dataset(root: str | Path) -> Dataset:
    """``open_dataset(root)``, reused while the dataset's metadata is unchanged.

    Raises:
        LabelArgumentError: ``root`` is not a path (str or Path).
        Whatever :func:`open_dataset` raises (``DatasetError`` and subclasses).
    """
    key = os.path.abspath(path_argument(root, "root"))
    signature = metadata_signature(key)
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == signature:
            _cache.move_to_end(key)
            return hit[1]
    dataset = open_dataset(key)
    with _lock:
        _cache[key] = (signature, dataset)
        _cache.move_to_end(key)
        while len(_cache) > _MAX_ROOTS:
            _cache.popitem(last=False)
    return dataset


def cached_dataset_if_present(root: str | Path) -> Dataset | None:
    """:func:`cached_dataset`, or None when ``root`` has no ``meta/info.json`` (a labels-only
    directory: label stores then skip their dataset checks)."""
    if not (Path(root) / "meta" / "info.json").is_file():
        return None
    return cached_dataset(root)


def clear_cache() -> None:
    """Forget every cached dataset."""
    with _lock:
        _cache.clear()

"""Open each dataset once per process while its metadata is unchanged.

A judge calls three tools per episode on the same root, and label writers check every
episode against the dataset; re-reading the episodes metadata each time would make a
10,000-episode run quadratic. The cache is keyed by the resolved root and invalidated
when any metadata file the episodes table is read from changes (inode, size or mtime),
so a dataset edited between calls (LeRobot's ``delete_episodes``) is re-read. The stamp
(:func:`metadata_signature`) needs no heavy import; the reader (pyarrow) loads on first open.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_robots.arguments import path_argument
from strands_robots.dataset.keys import INFO_JSON

if TYPE_CHECKING:
    from strands_robots.dataset.reader import Dataset


def metadata_signature(root: str | Path) -> tuple[Any, ...]:
    """``(name, inode, size, mtime_ns)`` of every metadata file of ``root`` (a change stamp).

    Covers ``meta/info.json``, ``meta/*.jsonl``, ``meta/*.parquet`` and
    ``meta/episodes/*/*.parquet``; missing files are left out.
    """
    return signature_of(metadata_files(root))


def signature_of(files: list[str] | tuple[str, ...]) -> tuple[Any, ...]:
    """``(name, inode, size, mtime_ns)`` of each of ``files`` that exists (:func:`metadata_signature`'s stamp)."""
    signature = []
    for path in files:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        signature.append((os.path.basename(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(signature)


def metadata_files(root: str | Path) -> list[str]:
    """Paths of the metadata files :func:`metadata_signature` covers, in its order
    (``info.json`` even when it is absent; a listed symlink may dangle)."""
    meta = os.path.join(root, "meta")
    names = _names(meta)  # one scandir per directory (a judge tool checks this twice per episode)
    files = [
        os.path.join(root, INFO_JSON),
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
    from strands_robots.dataset.reader import open_dataset

    dataset = open_dataset(key)
    with _lock:
        _cache[key] = (signature, dataset)
        _cache.move_to_end(key)
        while len(_cache) > _MAX_ROOTS:
            _cache.popitem(last=False)
    return dataset


def has_dataset_metadata(root: str | Path) -> bool:
    """True when ``root/meta/info.json`` exists (``root`` is a LeRobot dataset, not a labels-only directory)."""
    return os.path.isfile(os.path.join(root, INFO_JSON))


def cached_dataset_if_present(root: str | Path) -> Dataset | None:
    """:func:`cached_dataset`, or None when ``root`` has no ``meta/info.json`` (a labels-only
    directory: label stores then skip their dataset checks)."""
    if not has_dataset_metadata(root):
        return None
    return cached_dataset(root)


def clear_cache() -> None:
    """Forget every cached dataset."""
    with _lock:
        _cache.clear()

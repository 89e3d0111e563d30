"""The process registry of sidecar stores: one instance (and its cache) per file and process.

Every store type (``RecordStore`` for the JSON sidecars, ``OutcomeStore`` for
``episode_outcomes.jsonl``) keeps its instances in a :class:`ProcessRegistry`, keyed by
the absolute path. A forked child starts with empty registries (``os.register_at_fork``):
it must not reuse the parent's caches or thread locks, and it takes its own file locks
(:mod:`.lock`). Caches are validated by :func:`file_identity` (a whole file read at once)
and :func:`appended_since` (an append-only file read up to an offset: the record store's
journal, ``episode_outcomes.jsonl``): one rule for every store.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

Identity = tuple[int, int, int]


def file_identity(path: str | os.PathLike[str], *, strict: bool = True) -> Identity | None:
    """``(inode, size, mtime_ns)`` of ``path`` or None when it does not exist (``strict=False``:
    when it cannot be stat'ed at all, e.g. no permission or a NUL in the name)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        if strict and not isinstance(exc, FileNotFoundError):
            raise
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def appended_since(path: str | Path, identity: Identity | None, ino: int | None, offset: int) -> bool:
    """Whether an append-only file a cache read up to ``offset`` has only been appended to since.

    True when the file is the one the cache read (inode ``ino``; None: the cache saw no file
    and there is none), is at least ``offset`` bytes long, and the byte before ``offset``
    still ends a line (a file rewritten in place under the same inode is read again). A
    cache reads only the bytes after ``offset`` when this holds, and the whole file when
    it does not.

    Args:
        path: The file.
        identity: Its :func:`file_identity` now (None: it does not exist).
        ino: The inode the cache read (None: it read no file).
        offset: Bytes the cache has read (just after a complete line, or 0).
    """
    if identity is None:
        return ino is None
    if identity[0] != ino or identity[1] < offset:
        return False
    if offset == 0:
        return True
    try:
        with open(path, "rb") as handle:
            handle.seek(offset - 1)
            return handle.read(1) == b"\n"
    except OSError:
        return False


_registries: weakref.WeakSet[ProcessRegistry[object]] = weakref.WeakSet()


class ProcessRegistry[T]:
    """Instances keyed by absolute path, created on first use, emptied in a forked child."""

    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()
        _registries.add(self)  # type: ignore[arg-type]

    def get(self, path: str | Path, factory: Callable[[Path], T]) -> T:
        """The instance for ``path``, made by ``factory(absolute_path)`` the first time."""
        key = os.path.abspath(path)
        with self._lock:
            item = self._items.get(key)
            if item is None:
                item = self._items[key] = factory(Path(key))
            return item

    def _reset_after_fork(self) -> None:
        self._items = {}
        self._lock = threading.Lock()


def _after_fork_in_child() -> None:
    for registry in list(_registries):
        registry._reset_after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)

"""A JSON document of per-episode records, with O(1) single-record writes.

The canonical file (e.g. ``episode_labels.json``) stays the interchangeable format.
Small documents are rewritten whole on every write (write-through). Once the canonical
file passes ``write_through_bytes``, a write appends the changed records to a fsynced
journal beside it (``.<name>.journal``) instead; readers merge the journal over the
canonical file, and the journal is folded back into the canonical file when it grows
past the canonical size (amortised O(1): a fold rewrites at most about twice the bytes
journaled since the last one), on :meth:`RecordStore.flush`, and at the end of each CLI
run. Every read and write holds the sidecar's inter-process lock.

The journal's first line names the sha256 of the canonical file its entries apply to
(a content digest, so a copied dataset — ``cp -r``, rsync, tar — keeps its pending
labels). If another tool has replaced the canonical file since, the journal is stale: it
is never replayed over the newer file but moved aside to ``.<name>.journal.stale-<ns>``
for inspection.

Within one process the parsed document is cached under the canonical file's identity
(inode, size, mtime) and the journal's read offset, so a writer re-reads only new
journal lines. A process that journaled writes folds them at exit (``atexit``), and
caches are dropped in a forked child.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_robots.errors import SidecarError
from strands_robots.storage.atomic import atomic_write_bytes, check_target, fsync_dir
from strands_robots.storage.codec import dump_canonical, json_copy, load_json_bytes
from strands_robots.storage.jsonl import append_jsonl, read_jsonl
from strands_robots.storage.lock import sidecar_lock

log = logging.getLogger(__name__)

JOURNAL_VERSION = 2
WRITE_THROUGH_BYTES = 256 << 10
MIN_FOLD_BYTES = 1 << 20

Identity = tuple[int, int, int]


def file_identity(path: Path) -> Identity | None:
    """``(inode, size, mtime_ns)`` of ``path`` or None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class _Cached:
    identity: Identity | None
    digest: str | None  # sha256 of the canonical file's bytes (None: no file)
    journal_ino: int | None
    journal_offset: int
    document: dict[str, Any]


def content_digest(data: bytes) -> str:
    """sha256 hex digest of a canonical file's bytes (what a journal header names)."""
    return hashlib.sha256(data).hexdigest()


def journal_header_matches(header: Any, digest: str | None) -> bool:
    """True when a journal's first line says it applies to the canonical file of ``digest``."""
    return isinstance(header, dict) and header.get("journal") == JOURNAL_VERSION and header.get("base_sha256") == digest


@dataclass
class Change:
    """What a mutation changed: record keys (``None`` value = deleted) and top-level fields."""

    records: list[str]
    fields: list[str]


_registry_lock = threading.Lock()
_stores: dict[str, RecordStore] = {}
_pending: set[RecordStore] = set()  # stores this process journaled into since their last fold


def _flush_pending_at_exit() -> None:
    for store in list(_pending):
        try:
            store.flush()
        except Exception as exc:  # exit must not fail; the journal stays and is merged by readers
            log.warning("could not fold %s at exit: %s", store.journal, exc)


def _forget_after_fork() -> None:
    # a forked child must not reuse the parent's caches or thread locks
    _stores.clear()
    _pending.clear()


atexit.register(_flush_pending_at_exit)
os.register_at_fork(after_in_child=_forget_after_fork)


class RecordStore:
    """One sidecar document of records keyed by ``str(episode_index)``.

    Use :meth:`open` to get the process-wide instance for a path (it carries the cache).

    Args:
        path: The canonical JSON file.
        validate: ``validate(document, path)`` raises :class:`SidecarError` when a loaded
            document is not one this store may read or write (foreign file, future
            version); such a file is never overwritten.
        empty: Factory of the document to start from when the file does not exist.
        records_key: Top-level key holding the records mapping.
    """

    def __init__(
        self,
        path: Path,
        *,
        validate: Callable[[Any, Path], None],
        empty: Callable[[], dict[str, Any]],
        records_key: str = "episodes",
        write_through_bytes: int = WRITE_THROUGH_BYTES,
    ) -> None:
        self.path = Path(path)
        self.journal = self.path.with_name(f".{self.path.name}.journal")
        self.validate = validate
        self.empty = empty
        self.records_key = records_key
        self.write_through_bytes = write_through_bytes
        self._cache: _Cached | None = None
        self._thread_lock = threading.RLock()

    @classmethod
    def open(cls, path: Path, **kwargs: Any) -> RecordStore:
        """The process-wide store for ``path`` (created on first use)."""
        key = os.path.abspath(path)
        with _registry_lock:
            store = _stores.get(key)
            if store is None:
                store = cls(Path(key), **kwargs)
                _stores[key] = store
            return store

    # -- reading -----------------------------------------------------------------------------

    def _load_canonical(self) -> tuple[Identity | None, str | None, dict[str, Any]]:
        check_target(self.path)
        identity = file_identity(self.path)
        if identity is None:
            return None, None, self.empty()
        data = self.path.read_bytes()
        identity = file_identity(self.path)  # the bytes we read (lock held: no writer of ours)
        document = load_json_bytes(data, self.path)
        self.validate(document, self.path)
        return identity, content_digest(data), document

    def _apply(self, document: dict[str, Any], entries: list[Any]) -> None:
        records = document.setdefault(self.records_key, {})
        for entry in entries:
            if not isinstance(entry, dict):
                raise SidecarError(f"{self.journal} holds a non-object entry; move the journal away.")
            op = entry.get("op")
            if op == "put":
                if entry.get("record") is None:
                    records.pop(entry["key"], None)
                else:
                    records[entry["key"]] = entry["record"]
            elif op == "set":
                document[entry["field"]] = entry["value"]
            else:
                raise SidecarError(f"{self.journal} holds an unknown entry {op!r}; move the journal away.")

    def _discard_stale_journal(self) -> None:
        aside = self.journal.with_name(f"{self.journal.name}.stale-{time.time_ns()}")
        log.warning(
            "%s was written for another version of %s (the file was replaced by another tool since); "
            "it is not replayed and was moved to %s",
            self.journal,
            self.path,
            aside,
        )
        try:
            os.replace(self.journal, aside)
            fsync_dir(self.journal.parent)
        except OSError as exc:  # a read-only directory: still never replayed, just left in place
            log.warning("could not move %s aside: %s", self.journal, exc)

    def _refresh(self) -> _Cached:
        """Bring the cache up to date with disk. Caller holds both locks."""
        identity = file_identity(self.path)
        journal_identity = file_identity(self.journal)
        journal_ino = journal_identity[0] if journal_identity else None
        cached = self._cache
        if (
            cached is not None
            and cached.identity == identity
            and cached.journal_ino == journal_ino
            and (journal_identity is None or journal_identity[1] >= cached.journal_offset)
        ):
            if journal_identity is not None and journal_identity[1] > cached.journal_offset:
                entries, end = read_jsonl(self.journal, offset=cached.journal_offset)
                self._apply(cached.document, entries)
                cached.journal_offset = end
            return cached
        self._cache = None
        identity, digest, document = self._load_canonical()
        offset = 0
        if journal_identity is not None:
            check_target(self.journal)
            entries, end = read_jsonl(self.journal)
            header = entries[0] if entries else None
            if header is None:
                offset = end  # empty or only a torn first line: appends restart the file
            elif journal_header_matches(header, digest):
                self._apply(document, entries[1:])
                offset = end
            else:
                self._discard_stale_journal()
                journal_ino = None
        self._cache = _Cached(identity, digest, journal_ino, offset, document)
        return self._cache

    def read(self, *, copy_document: bool = True) -> dict[str, Any]:
        """The merged document (canonical file + journal).

        Args:
            copy_document: Return a deep copy (safe to mutate). ``False`` returns the
                cached object itself, for internal read-only use.

        Raises:
            SidecarError: the file is foreign, truncated, a future version, or not a file.
        """
        with self._thread_lock, sidecar_lock(self.path, reading=True):
            try:
                document = self._refresh().document
            except BaseException:
                self._cache = None
                raise
            return json_copy(document) if copy_document else document

    def query(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        """Run ``fn(document)`` on the merged document under the lock; returns its result.

        ``fn`` must not mutate the document (use :meth:`update`) nor keep a reference to
        it past the call. No copy is made, so this is the cheap way to compute over a
        large document.
        """
        with self._thread_lock, sidecar_lock(self.path, reading=True):
            try:
                document = self._refresh().document
            except BaseException:
                self._cache = None
                raise
            return fn(document)

    # -- writing -----------------------------------------------------------------------------

    def update(self, mutate: Callable[[dict[str, Any]], tuple[Change, Any]]) -> Any:
        """Apply ``mutate`` to the current document under the lock and persist what changed.

        ``mutate(document)`` validates first and raises before touching the document when
        the input is bad; it then changes the document in place and returns
        ``(Change(records=[...], fields=[...]), result)``. Durable when this returns.

        Returns:
            ``result`` from ``mutate``.

        Raises:
            SidecarError, StorageError: see :meth:`read` and :func:`atomic_write_bytes`;
                on any error nothing on disk changed and the cache is dropped.
        """
        with self._thread_lock, sidecar_lock(self.path):
            try:
                cached = self._refresh()
                change, result = mutate(cached.document)
                self._persist(cached, change)
            except BaseException:
                self._cache = None
                raise
            return result

    def _persist(self, cached: _Cached, change: Change) -> None:
        if not change.records and not change.fields:
            return
        canonical_size = cached.identity[1] if cached.identity else 0
        if canonical_size < self.write_through_bytes and cached.journal_offset == 0:
            self._fold(cached)
            return
        records = cached.document.get(self.records_key, {})
        entries: list[Any] = []
        if cached.journal_offset == 0:
            entries.append({"journal": JOURNAL_VERSION, "base_sha256": cached.digest})
        entries.extend({"op": "set", "field": f, "value": cached.document.get(f)} for f in change.fields)
        entries.extend({"op": "put", "key": k, "record": records.get(k)} for k in change.records)
        end = append_jsonl(self.journal, entries, valid_end=cached.journal_offset)
        if cached.journal_offset == 0:
            journal_identity = file_identity(self.journal)
            cached.journal_ino = journal_identity[0] if journal_identity else None
        cached.journal_offset = end
        _pending.add(self)
        if end > max(canonical_size, MIN_FOLD_BYTES):
            self._fold(cached)

    def _fold(self, cached: _Cached) -> None:
        data = dump_canonical(cached.document)
        atomic_write_bytes(self.path, data)
        cached.identity = file_identity(self.path)
        cached.digest = content_digest(data)
        if cached.journal_ino is not None or self.journal.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.journal)
            fsync_dir(self.journal.parent)
        cached.journal_ino = None
        cached.journal_offset = 0
        _pending.discard(self)

    def transform(self, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        """Replace the whole document with ``fn(copy_of_document)`` in one lock hold.

        For edits that touch many records at once (remap). ``fn`` raises to abort; then
        nothing changes. Returns the new document (not a copy).
        """
        with self._thread_lock, sidecar_lock(self.path):
            try:
                cached = self._refresh()
                document = fn(json_copy(cached.document))
                self.validate(document, self.path)
                cached.document = document
                self._fold(cached)
                return document
            except BaseException:
                self._cache = None
                raise

    def flush(self) -> bool:
        """Fold the journal into the canonical file. Returns True when there was one."""
        with self._thread_lock, sidecar_lock(self.path):
            try:
                cached = self._refresh()
                if cached.journal_offset == 0 and not self.journal.exists():
                    return False
                self._fold(cached)
                return True
            except BaseException:
                self._cache = None
                raise

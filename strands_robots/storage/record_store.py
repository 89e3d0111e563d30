"""A JSON document of per-episode records, with O(1) single-record writes.

The canonical file (e.g. ``episode_labels.json``) stays the interchangeable format. Small
documents are rewritten whole on every write (write-through). Once the canonical file passes
``write_through_bytes``, a write appends the changed records to the journal instead
(:mod:`.journal`: its format, screening, base and three-way merge); readers merge it over
the canonical file, and it is folded back when it grows past the canonical size (amortised
O(1)), on :meth:`RecordStore.flush`, at the end of each CLI run and at process exit. Every
read and write holds the sidecar's inter-process lock.

Within one process the parsed document is cached under the canonical file's identity and
the journal's read offset (``storage.registry``), and not re-read while the journal keeps
the stamp (device, inode, size, mtime, ctime) this cache's own last append or read left;
caches are dropped in a forked child.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import hashlib
import logging
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelsError, LabelValidationError, SidecarError, StorageError
from strands_robots.storage.atomic import atomic_write_chunks, check_target, read_regular
from strands_robots.storage.codec import dump_line, iter_canonical, json_copy, load_json_bytes, non_finite_at
from strands_robots.storage.episode_index import is_record_key
from strands_robots.storage.journal import (
    JournalTail,
    RecordCheck,
    Rejected,
    Screened,
    apply_ops,
    count_lines,
    entries_for,
    entry_line,
    journal_keys,
    keep_aside,
    load_base,
    read_lines,
    record_conflicts,
    remove_journal,
    screen,
    start_journal,
    three_way,
    version_digest,
)
from strands_robots.storage.jsonl import append_encoded
from strands_robots.storage.lock import SidecarLock
from strands_robots.storage.registry import Identity, ProcessRegistry, appended_since, file_identity
from strands_robots.storage.side_files import (
    conflicts_path,
    journal_path,
    legacy_journal_path,
    legacy_temp_prefix,
    rejected_path,
    remap_intent_path,
    temp_dir,
    temp_prefix,
)
from strands_robots.storage.state_dir import adopt_legacy, remove_dead_temps

log = logging.getLogger(__name__)

WRITE_THROUGH_BYTES = 256 << 10
MIN_FOLD_BYTES = 1 << 20
#: Versions of one record whose digests a store remembers having written (see ``_remember``;
#: docs/compatibility.md, "Both at the same time": 128 lost labels in the 40 s mixing run).
REMEMBERED_VERSIONS = 1_024
#: Records a store remembers its latest version of (the least recently written are forgotten).
REMEMBERED_RECORDS = 2_000
#: Writes of more records than this (a bulk import) are not remembered record by record.
REMEMBERED_PER_WRITE = 1_000
#: Attempts at replacing the canonical file while another tool keeps replacing it.
REPLACE_ATTEMPTS = 200


@dataclass
class _Cached:
    identity: Identity | None
    digest: str | None  # sha256 of the canonical file's bytes (None: no file)
    journal_ino: int | None
    journal_offset: int
    document: dict[str, Any]
    rejected: list[Rejected] = field(default_factory=list)  # journal lines not applied (kept aside on fold)
    transient: bool = False  # a merge that could not be stored: never cached nor written over
    # the journal's :func:`_seen` stamp when this cache last wrote it or read it to the end
    # (under the lock; always of a regular file): the same stamp now means nothing was
    # appended since, and that the journal is a regular file ``journal_offset`` bytes long
    journal_seen: Seen | None = None


#: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` of a file.
Seen = tuple[int, int, int, int, int]


def _seen(st: os.stat_result) -> Seen:
    """A stamp any write, truncation, replacement or ``utime`` changes (ctime cannot be set back)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _lstat(path: str | Path) -> os.stat_result | None:
    """The file itself (a symlink put at the journal's path has its own stamp: never ours)."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def content_digest(data: bytes) -> str:
    """sha256 hex digest of a canonical file's bytes (what a journal header names)."""
    return hashlib.sha256(data).hexdigest()


def check_document(
    document: Any,
    path: Path,
    header_problem: Callable[[dict[str, Any]], str | None],
    record_problem: RecordCheck,
    kept: str,
) -> None:
    """Refuse a loaded sidecar unless it is an object whose header ``header_problem`` accepts
    and whose ``episodes`` object holds only records ``record_problem(key, record)`` accepts.

    Raises:
        SidecarError: naming the problem, and ``labels_dir`` as where to keep ``kept`` instead.
    """
    problem = None
    if not isinstance(document, dict):
        problem = f"the top level is a {type(document).__name__}, not an object"
    elif not (problem := header_problem(document)):
        records = document.get("episodes")
        if not isinstance(records, dict):
            problem = "it has no 'episodes' object"
        else:
            problems = (record_problem(key, record) for key, record in records.items())
            problem = next((p for p in problems if p), None)
    if problem:
        raise SidecarError(
            f"{path} is not an {path.name} this version can use: {problem}. It was left untouched; move it away "
            f"(or pass labels_dir= / --labels-dir to keep {kept} elsewhere)."
        )


def keyed_record_problem(key: str, record: Any, *, index_required: bool = True) -> str | None:
    """Why ``episodes[key]`` is not an object filed under the decimal spelling of its
    ``episode_index`` (which, unless ``index_required``, may be left out), or None."""
    if not is_record_key(key):
        return f"episodes key {key!r} is not the decimal spelling of an episode_index"
    if not isinstance(record, dict):
        return f"episodes[{key!r}] is {type(record).__name__}, expected a JSON object"
    index = record.get("episode_index") if index_required else record.get("episode_index", int(key))
    if type(index) is not int or index != int(key):
        return f"episodes[{key!r}].episode_index is {index!r}"
    return None


@dataclass
class Change:
    """What a mutation changed: record keys (``None`` value = deleted) and top-level fields."""

    records: list[str]
    fields: list[str]


_stores: ProcessRegistry[RecordStore] = ProcessRegistry()
_pending: set[RecordStore] = set()  # stores this process journaled into since their last fold


def _flush_pending_at_exit() -> None:
    for store in list(_pending):
        try:
            store.flush()
        except Exception as exc:  # exit must not fail; the journal stays and is merged by readers
            log.warning("could not fold %s at exit: %s", store.journal, exc)


def _forget_after_fork() -> None:
    # a forked child must not reuse the parent's caches or thread locks
    _pending.clear()  # (the registry of stores empties itself in a child)


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
        check_record: ``check_record(key, record)`` returns why one record (None = a
            delete) may not be stored, or None; every journal line is screened with it
            (and with ``validate`` for top-level fields) before it is applied.
    """

    def __init__(
        self,
        path: Path,
        *,
        validate: Callable[[Any, Path], None],
        empty: Callable[[], dict[str, Any]],
        records_key: str = "episodes",
        write_through_bytes: int = WRITE_THROUGH_BYTES,
        check_record: RecordCheck | None = None,
    ) -> None:
        self.path = Path(path)
        self.journal = journal_path(self.path)
        # the two names as text, for the system calls of every access (no ``Path.__fspath__`` each)
        self._path_name, self._journal_name = os.fspath(self.path), os.fspath(self.journal)
        self._legacy_journal = legacy_journal_path(self.path)
        self._legacy_looked = False  # whether an earlier version's journal was looked for
        self._lock = SidecarLock(self.path)
        self._intent = os.fspath(remap_intent_path(self.path.parent))
        self.validate = validate
        self.empty = empty
        self.records_key = records_key
        self.write_through_bytes = write_through_bytes
        self.check_record = check_record
        self._cache: _Cached | None = None
        # per record key: (the dump_line of the latest version this process wrote, digests of its recent versions)
        self._ours: dict[str, tuple[bytes, list[str]]] = {}
        self._repairs: set[str] = set()  # records restored in memory, written by the next write or flush
        # digests of the records of the last small canonical file read whole (the versions our
        # next writes supersede; a large file's are in the journal's base)
        self._loaded: dict[str, str] = {}
        self._thread_lock = threading.RLock()

    @classmethod
    def open(cls, path: str | Path, **kwargs: Any) -> RecordStore:
        """The process-wide store for ``path`` (created on first use)."""
        return _stores.get(path, lambda key: cls(key, **kwargs))

    def exists(self) -> bool:
        """Whether the canonical file or its journal is there (something is stored)."""
        # ``access`` answers as ``os.path.exists`` does (following links), without building a stat result
        return os.access(self._path_name, os.F_OK) or os.access(self._journal_name, os.F_OK)

    # -- reading -----------------------------------------------------------------------------

    def _load_canonical(self) -> tuple[Identity | None, str | None, dict[str, Any]]:
        """The canonical document and the identity of the very file its bytes were read
        from (``fstat`` of the open descriptor: another tool may replace the path meanwhile)."""
        check_target(self.path)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None, None, self.empty()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                check_target(self.path)  # a link put there since: refused by name
            raise
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
        identity = (st.st_ino, st.st_size, st.st_mtime_ns)
        return identity, content_digest(data), self._decode(data, self.path)

    def _decode(self, data: bytes, path: Path) -> dict[str, Any]:
        """A document read from ``path`` (the file, its journal's base, a displaced copy), checked."""
        document = load_json_bytes(data, path)
        self.validate(document, self.path)
        return document

    def _field_problem(self, name: str, value: Any) -> str | None:
        candidate = self.empty()
        candidate[name] = value
        candidate[self.records_key] = {}
        try:
            self.validate(candidate, self.path)
        except SidecarError as exc:
            return str(exc)
        return None

    def screen_lines(self, lines: list[tuple[int, Any]], undecodable: list[Rejected], offset: int = 0) -> Screened:
        """Screen numbered journal lines (see :func:`.journal.screen`); refused lines are logged."""
        screened = screen(
            lines,
            records_key=self.records_key,
            offset=offset,
            check_record=self.check_record,
            check_field=self._field_problem,
        )
        screened.rejected[:0] = undecodable
        for item in screened.rejected:
            log.warning(
                "%s %s is not applied: %s; it is kept aside in %s when the journal is folded",
                self.journal,
                item.where(),
                item.reason,
                rejected_path(self.path),
            )
        return screened

    def _merge_stale(
        self,
        cached: _Cached,
        lines: list[tuple[int, Any]],
        undecodable: list[Rejected],
        end: int,
        *,
        writing: bool,
    ) -> _Cached:
        """Three-way merge of a journal whose base is not the canonical file (see ``storage.journal``)."""
        header = lines[0][1] if lines and lines[0][0] == 1 else None
        body = lines[1:] if header is not None else lines
        if header is None:
            undecodable = [item for item in undecodable if item.line != 1] + [
                Rejected(1, "the journal has no header line", None)
            ]
        screened = self.screen_lines(body, undecodable)
        base = load_base(self.path, header, self.empty, self._decode)
        ours_before = {key: digests for key, (_, digests) in self._ours.items()}
        merge = three_way(base, cached.document, screened.ops, self.records_key, ours_before)
        log.warning(
            "%s was written for another version of %s (another tool replaced the file since); merged per record: "
            "%d applied, %d conflicts kept in %s",
            self.journal,
            self.path,
            len(merge.applied),
            len(merge.conflicts),
            conflicts_path(self.path),
        )
        try:
            self.validate(merge.document, self.path)
            keep_aside(self.path, screened.rejected)
            record_conflicts(self.path, merge.conflicts)
            if merge.applied:
                journal_keys = [op["key"] for op in screened.ops if op["op"] == "put"]
                cached.digest, cached.identity = self._write_canonical(merge.document, cached.identity, journal_keys)
            remove_journal(self.path)
        except (OSError, LabelsError) as exc:
            if writing:
                raise StorageError(
                    f"{self.journal} holds labels written before another tool replaced {self.path}; merging them "
                    f"failed ({exc}). Nothing was changed and the journal is kept; fix the cause and retry."
                ) from exc
            log.warning("could not store the merge of %s (%s); it is read merged in memory", self.journal, exc)
            merged = _Cached(cached.identity, cached.digest, None, end, merge.document)
            merged.transient = True
            return merged
        cached.document = merge.document
        cached.journal_ino, cached.journal_offset, cached.journal_seen = None, 0, None
        return cached

    @contextlib.contextmanager
    def _refreshed(self, *, writing: bool = False, refuse_remap: bool = False) -> Iterator[_Cached]:
        """Hold the store's locks (thread lock, then file lock) with the cache brought up to
        date with disk; an error drops the cache (the next access reads the file again).

        A journal an earlier version left beside the file is adopted first
        (``storage.state_dir``; looked for on the store's first access, then only while
        that version's lock file is there: it creates it before writing, and it goes last):
        when the folder holds a journal of its own, that one is folded, then the earlier
        one moves in and is read as any journal is.
        """
        held, cached = self._hold(writing, refuse_remap)
        try:
            yield cached
        except BaseException:
            self._cache = None
            raise
        finally:
            self._let_go(held)

    def _hold(self, writing: bool, refuse_remap: bool) -> tuple[list[Any], _Cached]:
        """Take the thread lock, then the file lock, and refresh the cache (:meth:`_refreshed`
        without its ``with``: :meth:`update`, once a write, calls it directly). Returns what
        :meth:`_let_go` releases, and the cache. On an error nothing stays held (and an error
        after the file lock was taken drops the cache)."""
        self._thread_lock.acquire()
        try:
            held, legacy_lock = self._lock.acquire(reading=not writing)
        except BaseException:
            self._thread_lock.release()
            raise
        try:
            if refuse_remap:
                from strands_robots.storage.remap_txn import refuse_write_before_install  # (it imports this module)

                refuse_write_before_install(self.path, self._intent)
            if (legacy_lock or not self._legacy_looked) and _lstat(self._legacy_journal) is not None:
                self._adopt_legacy_journal(writing)
            self._legacy_looked = True
            return held, self._refresh(writing=writing)
        except BaseException:
            self._cache = None
            self._let_go(held)
            raise

    def _let_go(self, held: list[Any]) -> None:
        """Release what :meth:`_hold` took (the file lock, then the thread lock)."""
        try:
            self._lock.release(held)
        finally:
            self._thread_lock.release()

    def _adopt_legacy_journal(self, writing: bool) -> None:
        try:
            if not adopt_legacy(self.path):
                self._fold(self._refresh(writing=writing))
                adopt_legacy(self.path)
            self._cache = None
        except (OSError, LabelsError) as exc:  # it stays where it is, read again after a fold
            if writing:
                raise StorageError(
                    f"{self._legacy_journal} (left by an earlier version) holds labels that could not be moved "
                    f"into {journal_path(self.path).parent} ({exc}); nothing was changed. Make the directory "
                    "writable and retry."
                ) from exc
            log.warning("could not adopt %s: %s", self._legacy_journal, exc)

    def _refresh(self, *, writing: bool = False) -> _Cached:
        """Bring the cache up to date with disk (caller holds both locks).

        The cache stands while the canonical file keeps its :func:`file_identity`; of the
        journal it then reads only the lines appended since (:func:`appended_since`), and
        nothing when the journal's :func:`_seen` stamp is the one this cache last left or
        read it at (the common case of a process writing in a loop: no read at all).
        """
        identity = file_identity(self._path_name)
        journal_stat = _lstat(self._journal_name)
        cached = self._cache
        if cached is not None and cached.identity == identity:
            if journal_stat is not None and cached.journal_seen == _seen(journal_stat):
                return cached
            journal_identity = (
                (journal_stat.st_ino, journal_stat.st_size, journal_stat.st_mtime_ns) if journal_stat else None
            )
            if appended_since(self.journal, journal_identity, cached.journal_ino, cached.journal_offset):
                if journal_stat is not None and journal_stat.st_size > cached.journal_offset:
                    lines, undecodable, end = read_lines(self.journal, offset=cached.journal_offset)
                    screened = self.screen_lines(lines, undecodable, cached.journal_offset)
                    apply_ops(cached.document, screened.ops, self.records_key)
                    cached.rejected.extend(screened.rejected)
                    cached.journal_offset = end
                cached.journal_seen = _read_to_end(journal_stat, cached.journal_offset)
                return cached
        journal_ino = journal_stat.st_ino if journal_stat else None
        self._cache = None
        identity, digest, document = self._load_canonical()
        fresh = _Cached(identity, digest, None, 0, document)
        if journal_stat is not None:
            check_target(self.journal)
            lines, undecodable, end = read_lines(self.journal)
            empty = not lines and not undecodable  # (or a torn first line)
            if (entries := [] if empty else entries_for(lines, digest)) is not None:
                screened = self.screen_lines(entries, undecodable)
                apply_ops(document, screened.ops, self.records_key)
                fresh.rejected = screened.rejected
                fresh.journal_ino, fresh.journal_offset = journal_ino, end
                fresh.journal_seen = _read_to_end(journal_stat, end)
                if screened.rejected:
                    _pending.add(self)  # fold (keeping the refused lines aside) at exit
            else:
                fresh = self._merge_stale(fresh, lines, undecodable, end, writing=writing)
                if fresh.transient:
                    return fresh
        self._restore_ours(fresh.document)
        if identity is not None and identity[1] < self.write_through_bytes and not fresh.journal_offset:
            records = fresh.document.get(self.records_key, {})
            self._loaded = {key: version_digest(record) for key, record in records.items()}
        else:
            self._loaded = {}
        self._cache = fresh
        return fresh

    # -- mixing with another tool that rewrites the file without a lock (docs/compatibility.md) ---------

    def _remember(self, records: dict[str, Any], keys: list[str], lines: dict[str, bytes] | None = None) -> None:
        """Remember the versions of ``keys`` this process has just stored (acknowledged);
        ``lines``: their :func:`dump_line` when the write encoded them already."""
        if len(keys) > REMEMBERED_PER_WRITE:
            return
        for key in keys:
            line = lines[key] if lines else dump_line(records.get(key))
            kept = self._ours.pop(key, None)
            digests = kept[1] if kept is not None else []
            superseded = self._loaded.pop(key, None)  # the version read from the file, replaced now
            if superseded is not None and superseded not in digests:
                digests.append(superseded)
            digests.append(version_digest(None, line))
            if len(digests) > REMEMBERED_VERSIONS:
                del digests[:-REMEMBERED_VERSIONS]
            self._ours[key] = (line, digests)
        while len(self._ours) > REMEMBERED_RECORDS:
            del self._ours[next(iter(self._ours))]

    def forget_versions(self) -> None:
        """Forget the versions this process wrote (a remap renumbers every record: what a key
        held before says nothing about it after)."""
        with self._thread_lock:
            self._ours.clear()
            self._repairs.clear()

    def _restore_ours(self, document: dict[str, Any]) -> list[str]:
        """Put back every record of ours that a file re-read shows at an older version of ours
        (or without it): another tool wrote back a stale copy. Returns the keys restored;
        they are written by this store's next write or flush (or at exit)."""
        if not self._ours:
            return []
        records = document.setdefault(self.records_key, {})
        restored = []
        for key, (line, digests) in self._ours.items():
            current = records.get(key)
            if current is None or (latest := load_json_bytes(line, self.path)) == current:
                continue  # another tool deleted it (that stands), or it is ours
            if version_digest(current) not in digests:
                continue  # another tool changed it itself: that stands
            if latest is None:
                records.pop(key, None)
            else:
                records[key] = latest
            restored.append(key)
        if restored:
            log.warning(
                "%s: another tool wrote back older versions of %d record(s) this process stored (%s); ours stand",
                self.path,
                len(restored),
                ", ".join(restored[:5]) + (" ..." if len(restored) > 5 else ""),
            )
            self._repairs.update(restored)
            _pending.add(self)
        return restored

    def _take_theirs(self, document: dict[str, Any], keep: list[str], fields: list[str]) -> Identity | None:
        """Bring into ``document`` (in place) what another tool wrote to the canonical file
        meanwhile, keeping ``keep`` (the records being written now) and our earlier versions;
        returns the identity of the file read."""
        identity, _, theirs = self._load_canonical()
        self._restore_ours(theirs)
        mine, records = document.get(self.records_key, {}), theirs.setdefault(self.records_key, {})
        for key in keep:
            if key in mine:
                records[key] = mine[key]
            else:
                records.pop(key, None)
        for name in fields:
            theirs[name] = document.get(name)
        document.clear()
        document.update(theirs)
        return identity

    def read(self) -> dict[str, Any]:
        """The merged document (canonical file + journal), for the caller to own (safe to
        mutate): a deep copy of the cache, or, when this call had to read the file anyway,
        the freshly parsed document itself (the cache gives it up: no second copy in memory).

        Raises:
            SidecarError: the file is foreign, truncated, a future version, or not a file.
        """
        with self._thread_lock:
            before = self._cache
            with self._refreshed() as cached:
                return json_copy(cached.document) if cached is before else self._give_up(cached)

    def take(self) -> dict[str, Any]:
        """The merged document for the caller to own, without a copy: the cache gives it
        up, so the next access reads the file again. For a writer that returns the whole
        document once (a deep copy of a large document doubles the memory).

        Raises:
            SidecarError: see :meth:`read`.
        """
        with self._refreshed() as cached:
            return self._give_up(cached)

    def _give_up(self, cached: _Cached) -> dict[str, Any]:
        if self._cache is cached:
            self._cache = None
        return cached.document

    def query(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        """Run ``fn(document)`` on the merged document under the lock; returns its result.

        ``fn`` must not mutate the document (use :meth:`update`) nor keep a reference to
        it past the call. No copy is made, so this is the cheap way to compute over a
        large document.
        """
        with self._refreshed() as cached:
            return fn(cached.document)

    # -- writing -----------------------------------------------------------------------------

    def update(self, mutate: Callable[[dict[str, Any]], tuple[Change, Any]]) -> Any:
        """Apply ``mutate`` to the current document under the lock and persist what changed.

        ``mutate(document)`` validates first and raises before touching the document when
        the input is bad; it then changes the document in place and returns
        ``(Change(records=[...], fields=[...]), result)``. Durable when this returns: the
        changes of one call reach the file together or not at all.

        Returns:
            ``result`` from ``mutate``.

        Raises:
            SidecarError, StorageError: see :meth:`read` and :func:`atomic_write_bytes`;
                on any error nothing on disk changed (or the error says exactly what
                is stored) and the cache is dropped.
        """
        held, cached = self._hold(True, True)  # (no generator context manager: one is taken per write)
        try:
            change, result = mutate(cached.document)
            self._persist(cached, change)
            return result
        except BaseException:
            self._cache = None
            raise
        finally:
            self._let_go(held)

    def _write_canonical(
        self,
        document: dict[str, Any],
        expected: Identity | None,
        keep: list[str] | None = None,
        fields: list[str] | None = None,
    ) -> tuple[str, Identity]:
        """Stream the canonical encoding of ``document`` to the canonical file (atomic,
        durable); returns its sha256 and the identity of the file written. On any error the
        file is unchanged. Temp files of writers that died before renaming theirs (this lock
        is held by every writer of the file) are removed first.

        ``expected`` is the identity of the file ``document`` was read from. When, right
        before the rename, the file is no longer that one (another tool without a lock
        replaced it meanwhile), what that tool wrote is taken into ``document`` first
        (:meth:`_take_theirs`: ``keep`` and ``fields`` are what this write changes; None:
        the journal's records) and the write is made again.
        """
        remove_dead_temps(temp_dir(self.path), temp_prefix(self.path))
        remove_dead_temps(self.path.parent, legacy_temp_prefix(self.path))  # an earlier version's
        for _ in range(REPLACE_ATTEMPTS):
            written: list[Identity] = []
            displaced: list[dict[str, Any]] = []
            try:
                digest = atomic_write_chunks(
                    self.path,
                    iter_canonical(document),
                    before_replace=functools.partial(self._still, expected, written),
                    displaced=functools.partial(self._read_displaced, expected, displaced),
                )
            except LabelValidationError as exc:
                if non_finite_at(document) is None:
                    raise  # the caller's value (e.g. text that is not valid Unicode)
                raise self._non_finite(document) from exc
            if digest is not None and not displaced:
                return digest, written[0]
            if keep is None:
                keep = journal_keys(self.journal)  # the journal's records (ours, pending)
            if digest is None:
                expected = self._take_theirs(document, keep, fields or [])
            else:  # ours is in place, over what another tool wrote after the check: bring that in, write again
                self._merge_displaced(document, displaced[0], keep)
                expected = written[0]
        raise StorageError(
            f"another program keeps replacing {self.path} while this one writes it; nothing was changed. Stop it "
            "(or let it finish) and retry."
        )

    def _still(self, expected: Identity | None, written: list[Identity], st: os.stat_result) -> bool:
        """Whether the canonical file is still ``expected`` (then ``st``, the new file's, goes to ``written``)."""
        if file_identity(self.path) != expected:
            return False
        written.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return True

    def _read_displaced(self, expected: Identity | None, out: list[dict[str, Any]], name: str) -> None:
        """The file this write displaced (now at ``name``), into ``out`` when it is not the
        ``expected`` one: another tool replaced the canonical file after :meth:`_still` looked."""
        try:
            st = os.lstat(name)
            if (st.st_ino, st.st_size, st.st_mtime_ns) == expected:
                return
            document = self._decode(read_regular(Path(name)), self.path)
        except (OSError, LabelsError) as exc:  # ours is in place either way; what it displaced is unreadable
            log.warning("%s: another tool's version replaced by this write could not be read (%s)", self.path, exc)
            return
        out.append(document)

    def _merge_displaced(self, document: dict[str, Any], theirs: dict[str, Any], keep: list[str]) -> None:
        """Bring into ``document`` (just installed) what ``theirs`` (the file it displaced)
        changed: every record other than ``keep`` that differs, our earlier versions excepted.
        The versions superseded so are remembered like our own, so that a copy of the file
        just installed, written back by that tool before it sees the merge, cannot undo it."""
        self._restore_ours(theirs)
        mine, records = document.setdefault(self.records_key, {}), theirs.get(self.records_key, {})
        changed = [key for key in {*mine, *records} if key not in keep and mine.get(key) != records.get(key)]
        for key in changed:
            superseded = mine.get(key)
            if key in records:
                mine[key] = records[key]
            else:
                mine.pop(key, None)
            if superseded is not None:
                self._loaded[key] = version_digest(superseded)
        self._remember(mine, changed)
        for name, value in theirs.items():
            if name != self.records_key and name not in document:
                document[name] = value

    def _non_finite(self, value: Any) -> SidecarError:
        where = non_finite_at(value) or "?"
        return SidecarError(
            f"{self.path} (or its journal) holds a number JSON cannot store at {where} (NaN, or a value such as "
            "1e400 read as infinity); nothing was changed. Fix or remove that value in the file and retry."
        )

    def _persist(self, cached: _Cached, change: Change) -> None:
        if not change.records and not change.fields:
            return
        if self._repairs:
            change = Change(list(dict.fromkeys([*change.records, *self._repairs])), change.fields)
        canonical_size = cached.identity[1] if cached.identity else 0
        if canonical_size < self.write_through_bytes and cached.journal_offset == 0:
            self._fold(cached, change)
            self._remember(cached.document.get(self.records_key, {}), change.records)
            return
        records = cached.document.get(self.records_key, {})
        try:  # encoded once, before anything is touched: one line, all or nothing
            fields = {f: dump_line(cached.document.get(f)) for f in change.fields}
            lines = {k: dump_line(records.get(k)) for k in change.records}
        except LabelValidationError as exc:
            changed = {f: cached.document.get(f) for f in change.fields} | {k: records.get(k) for k in change.records}
            if non_finite_at(changed) is None:
                raise
            raise self._non_finite(changed) from exc
        payload = entry_line(fields, lines)
        if cached.journal_offset == 0:
            payload = start_journal(self.path, cached.digest) + payload
        end, after = append_encoded(self.journal, payload, valid_end=cached.journal_offset)
        cached.journal_ino = after.st_ino
        cached.journal_offset = end
        cached.journal_seen = _seen(after)
        _pending.add(self)
        self._repairs.clear()
        self._remember(records, change.records, lines)
        if end > max(canonical_size, MIN_FOLD_BYTES):
            try:
                self._fold(cached)
            except (OSError, LabelsError) as exc:  # the write is durable in the journal: it succeeded
                log.warning(
                    "the change is stored in %s, but folding it into %s failed (%s); it stays in the journal, "
                    "is read back by every reader and is folded again later",
                    self.journal,
                    self.path,
                    exc,
                )

    def _fold(self, cached: _Cached, change: Change | None = None) -> None:
        keep_aside(self.path, cached.rejected)
        keep = None if change is None or cached.journal_offset else change.records
        fields = None if change is None else change.fields
        cached.digest, cached.identity = self._write_canonical(cached.document, cached.identity, keep, fields)
        self._repairs.clear()
        cached.rejected = []
        had_journal = cached.journal_ino is not None or self.journal.exists()
        cached.journal_ino = None
        cached.journal_offset = 0
        cached.journal_seen = None
        _pending.discard(self)
        if had_journal:
            remove_journal(self.path)

    def flush(self) -> bool:
        """Fold the journal into the canonical file. Returns True when there was one.

        Raises:
            StorageError: the fold failed; the labels stay in the journal and are still
                read (the message says which file could not be written or removed).
        """
        with self._refreshed(writing=True) as cached:
            if cached.journal_offset == 0 and not self.journal.exists():
                if self._repairs:  # records of ours another tool wrote back older versions of
                    self._fold(cached, Change(sorted(self._repairs), []))
                _pending.discard(self)
                return False
            self._fold(cached)
            return True

    # -- derived views (indexes) -----------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the store's locks for a read, in the store's order (thread lock, then file lock).

        For views derived from the file (an index) that combine :meth:`journal_tail` with
        their own decode of the canonical file; both locks are re-entrant.
        """
        with self._thread_lock, self._lock.hold(reading=True):
            yield

    def journal_tail(self, digest: Callable[[], str | None], ino: int | None, offset: int) -> JournalTail | None:
        """The screened journal operations a derived view of the canonical file has not applied.

        Call inside :meth:`reading`.

        Args:
            digest: Returns the sha256 of the canonical file the view was built from
                (called only when the journal's header has to be checked).
            ino: Journal inode the view last read (None: none read yet).
            offset: Byte offset the view read the journal up to.

        Returns:
            ``JournalTail(ino, ops, end)`` (``ino`` None when there is no journal; ``ops``
            are the screened ``put``/``set`` entries after ``offset``, refused lines kept
            aside as for every read), or None when the journal was written for another
            version of the canonical file: then build the view from :meth:`read`, which
            merges it.
        """
        identity = file_identity(self.journal)
        if identity is None:
            return JournalTail(None, [], 0)
        start = offset if appended_since(self.journal, identity, ino, offset) else 0
        lines, undecodable, end = read_lines(self.journal, offset=start)
        if start == 0 and (lines or undecodable):
            entries = entries_for(lines, digest())
            if entries is None:
                return None
            lines = entries
        return JournalTail(identity[0], self.screen_lines(lines, undecodable, start).ops, end)

    def problems(self) -> dict[str, int]:
        """Counts of journal lines kept aside and of merge conflicts recorded beside the file."""
        return {
            "rejected": count_lines(rejected_path(self.path)),
            "conflicts": count_lines(conflicts_path(self.path)),
        }


def _read_to_end(journal_stat: os.stat_result | None, offset: int) -> Seen | None:
    """The journal's stamp when a read reached the end of a regular file (None: a torn tail,
    no journal, or not a regular file)."""
    if journal_stat is None or journal_stat.st_size != offset or not stat.S_ISREG(journal_stat.st_mode):
        return None
    return _seen(journal_stat)

"""The filter rule: which episodes clear the label bar, and the first rule each other one fails.

The rule (docs/sidecar-format.md, "Selecting episodes"; docs/review.md) is
:meth:`LabelIndex.drop_codes`, in the order of :data:`LABEL_DROP_REASONS`; ``filter_episodes``
and ``explain_filter`` both read it. It runs on columns of per-record facts (:func:`row_of`,
by the review rules of :mod:`.review`) sorted by ``episode_index``: the label index, decoded
with typed msgspec structs that skip every other field, kept per process under the canonical
file's identity and the journal offset it covers (later journal entries are applied on top).
For canonical files of 8 MB or more it is saved as
``.strands-labels/episode_labels.json.index.npz``, so the next process starts warm:
``benchmarks/filter_million.py``, row "warm" (docs/performance.md, "Fast filters").
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from strands_robots.episode_labels.review import dispute_open, effective_quality, effective_success
from strands_robots.episode_labels.vocab import (
    FAILURE_MODES,
    QUALITY_GRADES,
    QUALITY_RANK,
    SCHEMA_VERSION,
)
from strands_robots.fingerprint.stale import common_meta, meta_of
from strands_robots.storage.atomic import check_target, replace_cache_file
from strands_robots.storage.record_store import RecordStore, file_identity
from strands_robots.storage.side_files import index_cache_path

INDEX_VERSION = 4
PERSIST_MIN_BYTES = 8 << 20
#: The columns of the index and their dtypes, ``episode`` first.
_DTYPES = {
    "episode": np.int64,
    "has_verdict": bool,
    "verdict_success": bool,
    "success": bool,
    "has_judge": bool,
    "quality": np.int8,
    "open_dispute": bool,
    "has_fingerprint": bool,
}
COLUMNS = tuple(_DTYPES)
_NonNegative = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


def row_of(record: dict[str, Any]) -> tuple[bool, bool, bool, bool, int, bool, bool]:
    """The facts the rule reads of one record (a plain dict), in :data:`COLUMNS` order after
    ``episode``: ``(has_verdict, verdict_success, success, has_judge, quality_rank,
    open_dispute, has_fingerprint)``; ``success`` is the effective one and ``quality_rank``
    the effective grade's (-1: none), by the rules of :mod:`.review`."""
    verdict = record.get("deterministic")
    has_verdict = isinstance(verdict, dict)
    judge = record.get("judge")
    quality = effective_quality(record) if judge else None
    return (
        has_verdict,
        bool(verdict["success"]) if isinstance(verdict, dict) else False,
        bool(effective_success(record)) if has_verdict else False,
        bool(judge),
        QUALITY_RANK.get(quality, -1) if quality else -1,
        dispute_open(record),
        bool(record.get("fingerprint")),
    )


# Lean typed structs (no per-record default factories, not tracked by the garbage
# collector): the decode skips every field the index does not hold. A JSON null where a
# block is expected fails the decode, and the full reader then raises its precise error.


class _Verdict(msgspec.Struct, gc=False):
    success: bool
    failure: bool = False


class _Judge(msgspec.Struct, gc=False):
    quality: Literal[QUALITY_GRADES]  # type: ignore[valid-type]  # the vocabulary tuples of .vocab
    failure_mode: Literal[FAILURE_MODES] | None = None  # type: ignore[valid-type]
    disputes_verdict: bool = False


class _Present(msgspec.Struct, gc=False):
    """Any JSON object (its fields are skipped)."""


class _Record(msgspec.Struct, gc=False):
    episode_index: _NonNegative | UnsetType = UNSET
    deterministic: _Verdict | UnsetType = UNSET
    judge: _Judge | UnsetType = UNSET
    review: _Present | UnsetType = UNSET
    fingerprint: dict[str, Any] | None | UnsetType = UNSET


class _Document(msgspec.Struct):
    schema_version: int
    episodes: dict[str, _Record]
    benchmark: str = ""


class _RawDocument(msgspec.Struct):
    episodes: dict[str, msgspec.Raw]


_DECODER = msgspec.json.Decoder(_Document)


@dataclass
class LabelIndex:
    """The facts of every record as columns of equal length, sorted by ``episode``."""

    episode: np.ndarray  # int64
    has_verdict: np.ndarray  # bool
    verdict_success: np.ndarray  # bool: the recorded verdict's success
    success: np.ndarray  # bool: effective success
    has_judge: np.ndarray  # bool
    quality: np.ndarray  # int8: effective quality rank, -1 none
    open_dispute: np.ndarray  # bool
    has_fingerprint: np.ndarray  # bool: the record carries a dataset fingerprint (stale checks)
    identity: tuple[int, int, int] | None = None
    digest: str | None = None  # sha256 of the canonical file; None until a journal needs it
    journal_ino: int | None = None
    journal_offset: int = 0
    #: The metadata digest every fingerprinted record names (``fingerprint.meta``); None
    #: when they name several, or one names none.
    fp_meta: str | None = None

    def drop_codes(self, *, require_success: bool, min_rank: int, exclude_disputed: bool) -> np.ndarray:
        """Per record, 0 when it clears the bar, else ``1 +`` the position in
        :data:`LABEL_DROP_REASONS` of the first rule it fails (int8)."""
        codes = np.zeros(len(self.episode), dtype=np.int8)
        # the last rule first: each earlier rule overwrites, so the first one failed wins
        if exclude_disputed:
            codes[self.open_dispute] = 6
        codes[self.quality < min_rank] = 5
        if require_success:
            codes[~self.success & self.verdict_success] = 4
            codes[~self.success & ~self.verdict_success] = 3
        codes[~self.has_verdict] = 2
        codes[~self.has_judge] = 1
        return codes


def _empty_columns(n: int) -> dict[str, np.ndarray]:
    columns = {name: np.zeros(n, dtype=dtype) for name, dtype in _DTYPES.items()}
    columns["quality"][:] = -1
    return columns


class _InvalidForIndex(Exception):
    """The typed decode refused the file: the full reader decides (its error, or the slow build)."""


#: 10, 100, ... 10**18: an int64 ``e`` has ``1 + searchsorted(_POWERS, e, "right")`` digits.
_POWERS = 10 ** np.arange(1, 19, dtype=np.int64)


def _canonical_keys(keys: list[str], episode: np.ndarray) -> bool:
    """Every key is the plain decimal spelling of its parsed value (no sign, space, ``_`` or leading 0)."""
    joined = "".join(keys)
    if not (joined.isascii() and joined.isdigit()):
        return False
    return len(joined) == len(episode) + int(np.searchsorted(_POWERS, episode, side="right").sum())


def _decode(data: Any) -> _Document:
    enabled = gc.isenabled()
    gc.disable()  # millions of new objects, none of them cyclic: collections would only cost time
    try:
        return _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _InvalidForIndex(str(exc)) from exc
    finally:
        if enabled:
            gc.enable()


def _build(data: Any) -> tuple[dict[str, np.ndarray], str | None]:
    """Columns of a canonical file's bytes (typed decode, one pass over the records)."""
    document = _decode(data)
    if document.schema_version != SCHEMA_VERSION:
        raise _InvalidForIndex("schema_version")
    records = document.episodes
    n = len(records)
    keys = list(records)
    try:
        episode = np.fromiter(map(int, keys), dtype=np.int64, count=n)
    except (ValueError, OverflowError) as exc:
        raise _InvalidForIndex("key") from exc
    if not _canonical_keys(keys, episode):
        raise _InvalidForIndex("key")
    del keys
    values = list(records.values())
    del records, document
    stated = np.fromiter((-1 if r.episode_index is UNSET else r.episode_index for r in values), dtype=np.int64, count=n)
    if np.any((stated != episode) & (stated != -1)):
        raise _InvalidForIndex("episode_index")
    rank = QUALITY_RANK
    # one pass: bit 0 verdict, 1 success, 2 judge, 3-4 quality rank, 5 disputes, 6 review, 7 fingerprint
    codes = np.fromiter(
        (
            (0 if (d := r.deterministic) is UNSET else 1 | d.success << 1)
            | (0 if (j := r.judge) is UNSET else 4 | rank[j.quality] << 3 | j.disputes_verdict << 5)
            | (r.review is not UNSET) << 6
            | bool(r.fingerprint) << 7
            for r in values
        ),
        dtype=np.uint8,
        count=n,
    )
    columns = _empty_columns(n)
    columns["episode"] = episode
    columns["has_verdict"] = (codes & 1).astype(bool)
    columns["verdict_success"] = (codes & 2).astype(bool)
    columns["success"] = columns["verdict_success"].copy()
    columns["has_judge"] = (codes & 4).astype(bool)
    columns["quality"] = np.where(codes & 4, (codes >> 3) & 3, -1).astype(np.int8)
    columns["open_dispute"] = (codes & 32).astype(bool)
    columns["has_fingerprint"] = (codes & 128).astype(bool)
    # rare in files other tools wrote; every record in ours
    metas = {meta_of(values[i].fingerprint) for i in np.flatnonzero(codes & 128).tolist()}
    reviewed = np.flatnonzero(codes & 64).tolist()
    del values
    if reviewed:  # rare: decode those records whole and apply the review rules
        raw = list(msgspec.json.decode(data, type=_RawDocument).episodes.values())
        for i in reviewed:
            _set_row(columns, i, row_of(msgspec.json.decode(raw[i])))
        del raw
    return _sorted(columns), common_meta(metas)


def _set_row(columns: dict[str, np.ndarray], i: int, row: tuple[Any, ...]) -> None:
    for name, value in zip(COLUMNS[1:], row, strict=True):
        columns[name][i] = value


def _sorted(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    episode = columns["episode"]
    if len(episode) < 2 or bool(np.all(episode[1:] > episode[:-1])):
        return columns
    order = np.argsort(episode, kind="stable")
    return {name: column[order] for name, column in columns.items()}


def _build_from_document(document: dict[str, Any]) -> tuple[dict[str, np.ndarray], str | None]:
    """Columns of a merged document (plain dicts), for files the typed decode refuses."""
    records = document["episodes"]
    columns = _empty_columns(len(records))
    metas: set[Any] = set()
    for i, (key, record) in enumerate(records.items()):
        columns["episode"][i] = int(key)
        row = row_of(record)
        _set_row(columns, i, row)
        if row[-1]:
            metas.add(meta_of(record["fingerprint"]))
    return _sorted(columns), common_meta(metas)


def _apply_journal(index: LabelIndex, entries: list[Any]) -> None:
    latest: dict[int, dict[str, Any] | None] = {}
    for entry in entries:  # screened operations (see RecordStore.screen_lines)
        if entry["op"] == "put":
            latest[int(entry["key"])] = entry["record"]
    if not latest:
        return
    keys = np.fromiter(latest, dtype=np.int64, count=len(latest))
    positions = np.searchsorted(index.episode, keys)
    present = (
        (positions < len(index.episode)) & (index.episode[np.minimum(positions, len(index.episode) - 1)] == keys)
        if len(index.episode)
        else np.zeros(len(keys), bool)
    )
    # copy on write: a caller may still be reading the old arrays
    columns = {name: getattr(index, name).copy() for name in COLUMNS}
    empty = (False, False, False, False, -1, False, False)
    new_rows = []
    for key, pos, found in zip(keys.tolist(), positions.tolist(), present.tolist(), strict=True):
        record = latest[key]
        row = row_of(record) if record is not None else empty
        if row[-1] and meta_of(record["fingerprint"]) != index.fp_meta:  # type: ignore[index]
            index.fp_meta = None
        if found:
            _set_row(columns, pos, row)
        else:
            new_rows.append((key, *row))
    if new_rows:
        extra = list(zip(*new_rows, strict=True))
        for name, values in zip(COLUMNS, extra, strict=True):
            columns[name] = np.concatenate([columns[name], np.asarray(values, dtype=columns[name].dtype)])
        columns = _sorted(columns)
    for name, column in columns.items():
        setattr(index, name, column)


def _save(index: LabelIndex, path: Path) -> None:
    meta = json.dumps(
        {
            "version": INDEX_VERSION,
            "identity": list(index.identity or ()),
            "digest": index.digest,
            "fp_meta": index.fp_meta,
        }
    ).encode()
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(meta, dtype=np.uint8), **{name: getattr(index, name) for name in COLUMNS})
    replace_cache_file(path, buffer.getvalue())


def _load(path: Path, identity: tuple[int, int, int]) -> LabelIndex | None:
    try:
        with np.load(path) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if meta.get("version") != INDEX_VERSION or tuple(meta.get("identity", ())) != identity:
                return None
            return LabelIndex(
                **{name: data[name] for name in COLUMNS},
                identity=identity,
                digest=meta.get("digest"),
                fp_meta=meta["fp_meta"] if isinstance(meta.get("fp_meta"), str) else None,
            )
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def _mapped(path: Path, identity: tuple[int, int, int]) -> Any:
    """The canonical file's bytes, memory-mapped (no copy); None when it is no longer ``identity``."""
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        if (st.st_ino, st.st_size, st.st_mtime_ns) != identity:
            yield None
            return
        if st.st_size == 0:
            yield b""
            return
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mapped
        finally:
            mapped.close()


_memory: dict[str, LabelIndex] = {}


def _fresh(store: RecordStore, identity: tuple[int, int, int] | None) -> LabelIndex | None:
    """The index of the canonical file alone (no journal), or None when the file changed meanwhile."""
    if identity is None:
        return LabelIndex(**_empty_columns(0), identity=None)  # type: ignore[arg-type]
    check_target(store.path)  # a FIFO or a directory there: a typed refusal, never a hang in open()
    persisted = identity[1] >= PERSIST_MIN_BYTES
    index = _load(index_cache_path(store.path), identity) if persisted else None
    if index is not None:
        return index
    try:
        with _mapped(store.path, identity) as data:
            if data is None:
                return None
            columns, fp_meta = _build(data)
    except _InvalidForIndex:
        # the full reader raises SidecarError with the reason, or reads what the typed decode refused
        columns, fp_meta = store.query(_build_from_document)
    index = LabelIndex(**columns, identity=identity, fp_meta=fp_meta)  # type: ignore[arg-type]
    if persisted:
        _save(index, index_cache_path(store.path))
    return index


def label_index(store: RecordStore) -> LabelIndex:
    """The up-to-date index of ``store``'s sidecar (canonical file + journal).

    Takes the store's own locks in the store's order (thread lock, then file lock), so it
    can run beside writers in other threads. The canonical file is memory-mapped, and its
    sha256 is computed only when a journal beside it has to be checked against it.

    Raises:
        SidecarError: the file is not a sidecar this version reads (raised by the full reader).
    """
    with store.reading():
        identity = file_identity(store.path)
        key = str(store.path)
        index = _memory.get(key)
        if index is None or index.identity != identity or identity is None:
            index = _fresh(store, identity)
            if index is None:  # replaced while we looked (another tool takes no lock): start over
                return label_index(store)
        built = index

        def digest() -> str | None:  # sha256 of the canonical file while it is ``identity``: a journal header names it
            if built.digest is None and identity is not None:
                with _mapped(store.path, identity) as data:
                    built.digest = None if data is None else hashlib.sha256(data).hexdigest()
            return built.digest

        tail = store.journal_tail(digest, index.journal_ino, index.journal_offset)
        if tail is None:  # the journal is for a replaced file: the store merges it
            store.query(lambda _document: None)  # merges it, and stores the merge when it can
            _memory.pop(key, None)
            if store.journal.exists():  # the merge could not be stored (read-only): index it as read (no cache)
                columns, fp_meta = store.query(_build_from_document)
                return LabelIndex(**columns, fp_meta=fp_meta)  # type: ignore[arg-type]
            return label_index(store)  # both locks are re-entrant; the journal is gone now
        if tail.ino is None:
            index.journal_ino, index.journal_offset = None, 0
        else:
            _apply_journal(index, tail.ops)
            index.journal_ino, index.journal_offset = tail.ino, tail.end
        _memory[key] = index
        return index

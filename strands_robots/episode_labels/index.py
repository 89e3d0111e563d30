"""A columnar index of ``episode_labels.json`` for fast filtering (issue 5, target 2).

Per episode (sorted by ``episode_index``): whether it has a verdict and a judge block,
the effective success (the verdict, flipped by a current ``overrule_verdict`` review),
the effective quality rank (``-1`` when none) and whether a dispute is open. The rules
are those of :mod:`.review`; records without a review (nearly all) are decoded with
typed msgspec structs that skip every other field, so a 1,000,000-episode (~500 MB)
sidecar is indexed in a few seconds within about 1 GB.

The index is keyed by the identity (inode, size, mtime) of the canonical file (with its
sha256, which journal headers name) and the journal offset it covers. It is kept in memory per process and, for canonical files of
8 MB or more, saved beside the sidecar as ``.episode_labels.json.index.npz`` so the next
process starts warm. Journal entries written since are applied on top.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec
import numpy as np

from strands_robots.episode_labels.review import dispute_open, effective_quality, effective_success
from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES, QUALITY_RANK, SCHEMA_VERSION
from strands_robots.storage import RecordStore
from strands_robots.storage.jsonl import read_jsonl
from strands_robots.storage.lock import sidecar_lock
from strands_robots.storage.record_store import content_digest, file_identity, journal_header_matches

INDEX_VERSION = 2
PERSIST_MIN_BYTES = 8 << 20
COLUMNS = ("episode", "has_verdict", "success", "has_judge", "quality", "open_dispute", "has_fingerprint")


class _Verdict(msgspec.Struct):
    success: bool
    failure: bool = False


class _Judge(msgspec.Struct):
    quality: Literal[QUALITY_GRADES]  # type: ignore[valid-type]  # the vocabulary tuples of .vocab
    failure_mode: Literal[FAILURE_MODES] | None = None  # type: ignore[valid-type]
    disputes_verdict: bool = False


_ABSENT_VERDICT = _Verdict(success=False)  # sentinels: a JSON null block is refused, absence is not
_ABSENT_JUDGE = _Judge(quality="low")


class _Record(msgspec.Struct):
    episode_index: int = -1
    deterministic: _Verdict = msgspec.field(default_factory=lambda: _ABSENT_VERDICT)
    judge: _Judge = msgspec.field(default_factory=lambda: _ABSENT_JUDGE)
    review: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    fingerprint: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class _Document(msgspec.Struct):
    schema_version: int
    episodes: dict[str, _Record]
    benchmark: str = ""


class _FullRecord(msgspec.Struct):
    deterministic: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    judge: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    review: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


class _FullDocument(msgspec.Struct):
    episodes: dict[str, _FullRecord]


@dataclass
class LabelIndex:
    """Columns of equal length, sorted by ``episode``."""

    episode: np.ndarray  # int64
    has_verdict: np.ndarray  # bool
    success: np.ndarray  # bool: effective success
    has_judge: np.ndarray  # bool
    quality: np.ndarray  # int8: effective quality rank, -1 none
    open_dispute: np.ndarray  # bool
    has_fingerprint: np.ndarray  # bool: the record carries a dataset fingerprint (stale checks)
    identity: tuple[int, int, int] | None = None
    digest: str | None = None
    journal_ino: int | None = None
    journal_offset: int = 0

    def select(self, *, require_success: bool, min_rank: int, exclude_disputed: bool) -> np.ndarray:
        """Episodes passing the filter rules (see ``filter_episodes``)."""
        mask = self.has_judge & self.has_verdict & (self.quality >= min_rank)
        if require_success:
            mask &= self.success
        if exclude_disputed:
            mask &= ~self.open_dispute
        return self.episode[mask]

    def with_fingerprint(self, episodes: np.ndarray | list[int]) -> list[int]:
        """Those of ``episodes`` whose record carries a fingerprint (the only ones that can be stale)."""
        positions = np.searchsorted(self.episode, np.asarray(episodes, dtype=np.int64))
        return np.asarray(episodes, dtype=np.int64)[self.has_fingerprint[positions]].tolist() if len(episodes) else []


def row_of(record: dict[str, Any]) -> tuple[bool, bool, bool, int, bool, bool]:
    """Index row of one record (a plain dict), by the rules of :mod:`.review`."""
    has_verdict = isinstance(record.get("deterministic"), dict)
    judge = record.get("judge")
    quality = effective_quality(record) if judge else None
    return (
        has_verdict,
        bool(effective_success(record)) if has_verdict else False,
        bool(judge),
        QUALITY_RANK.get(quality, -1) if quality else -1,
        dispute_open(record),
        bool(record.get("fingerprint")),
    )


class _InvalidForIndex(Exception):
    """The typed decode refused the file: let the full reader raise its precise error."""


def _build(data: bytes) -> dict[str, np.ndarray]:
    try:
        document = msgspec.json.decode(data, type=_Document)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _InvalidForIndex(str(exc)) from exc
    if document.schema_version != SCHEMA_VERSION:
        raise _InvalidForIndex("schema_version")
    records = document.episodes
    n = len(records)
    if not all(k.isdigit() and (k[0] != "0" or k == "0") for k in records):
        raise _InvalidForIndex("key")
    episode = np.fromiter((int(k) for k in records), dtype=np.int64, count=n)
    values = list(records.values())
    stated = np.fromiter((r.episode_index for r in values), dtype=np.int64, count=n)
    if np.any((stated != episode) & (stated != -1)):
        raise _InvalidForIndex("episode_index")
    has_verdict = np.fromiter((r.deterministic is not _ABSENT_VERDICT for r in values), dtype=bool, count=n)
    success = np.fromiter(
        (r.deterministic is not _ABSENT_VERDICT and r.deterministic.success for r in values), dtype=bool, count=n
    )
    has_judge = np.fromiter((r.judge is not _ABSENT_JUDGE for r in values), dtype=bool, count=n)
    quality = np.fromiter(
        (QUALITY_RANK[r.judge.quality] if r.judge is not _ABSENT_JUDGE else -1 for r in values), dtype=np.int8, count=n
    )
    open_dispute = np.fromiter(
        (r.judge is not _ABSENT_JUDGE and r.judge.disputes_verdict for r in values), dtype=bool, count=n
    )
    has_fingerprint = np.fromiter(
        (len(r.fingerprint) > 0 and bytes(r.fingerprint) not in (b"null", b"{}") for r in values), dtype=bool, count=n
    )
    reviewed = [i for i, r in enumerate(values) if len(r.review) and bytes(r.review) != b"null"]
    del values, records, document
    if reviewed:  # rare: decode those records whole and apply the review rules
        full = msgspec.json.decode(data, type=_FullDocument).episodes
        keys = list(full)
        for i in reviewed:
            raw = full[keys[i]]
            record = {
                name: msgspec.json.decode(getattr(raw, name))
                for name in ("deterministic", "judge", "review")
                if len(getattr(raw, name))
            }
            has_verdict[i], success[i], has_judge[i], quality[i], open_dispute[i], _ = row_of(record)
    order = np.argsort(episode, kind="stable")
    columns = {
        "episode": episode,
        "has_verdict": has_verdict,
        "success": success,
        "has_judge": has_judge,
        "quality": quality,
        "open_dispute": open_dispute,
        "has_fingerprint": has_fingerprint,
    }
    return {name: column[order] for name, column in columns.items()}


def _apply_journal(index: LabelIndex, entries: list[Any]) -> None:
    latest: dict[int, dict[str, Any] | None] = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("op") == "put":
            latest[int(entry["key"])] = entry.get("record")
    if not latest:
        return
    keys = np.fromiter(latest, dtype=np.int64, count=len(latest))
    positions = np.searchsorted(index.episode, keys)
    present = (
        (positions < len(index.episode)) & (index.episode[np.minimum(positions, len(index.episode) - 1)] == keys)
        if len(index.episode)
        else np.zeros(len(keys), bool)
    )
    for name in COLUMNS:  # copy on write: a caller may still be reading the old arrays
        setattr(index, name, getattr(index, name).copy())
    new_rows = []
    for key, pos, found in zip(keys.tolist(), positions.tolist(), present.tolist(), strict=True):
        record = latest[key]
        row = row_of(record) if record is not None else (False, False, False, -1, False, False)
        if found:
            (
                index.has_verdict[pos],
                index.success[pos],
                index.has_judge[pos],
                index.quality[pos],
                index.open_dispute[pos],
                index.has_fingerprint[pos],
            ) = row
        else:
            new_rows.append((key, *row))
    if new_rows:
        columns = {name: getattr(index, name) for name in COLUMNS}
        extra = list(zip(*new_rows, strict=True))
        for name, values in zip(COLUMNS, extra, strict=True):
            columns[name] = np.concatenate([columns[name], np.asarray(values, dtype=columns[name].dtype)])
        order = np.argsort(columns["episode"], kind="stable")
        for name in COLUMNS:
            setattr(index, name, columns[name][order])


def _index_path(sidecar: Path) -> Path:
    return sidecar.with_name(f".{sidecar.name}.index.npz")


def _save(index: LabelIndex, path: Path) -> None:
    meta = json.dumps(
        {"version": INDEX_VERSION, "identity": list(index.identity or ()), "digest": index.digest}
    ).encode()
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(meta, dtype=np.uint8), **{name: getattr(index, name) for name in COLUMNS})
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(buffer.getvalue())
        os.replace(tmp, path)
    except OSError:  # a cache: a read-only directory only costs speed
        with contextlib.suppress(OSError):
            tmp.unlink()


def _load(path: Path, identity: tuple[int, int, int]) -> LabelIndex | None:
    try:
        with np.load(path) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if meta.get("version") != INDEX_VERSION or tuple(meta.get("identity", ())) != identity:
                return None
            return LabelIndex(**{name: data[name] for name in COLUMNS}, identity=identity, digest=meta.get("digest"))
    except (OSError, ValueError, KeyError):
        return None


_memory: dict[str, LabelIndex] = {}


def label_index(store: RecordStore) -> LabelIndex:
    """The up-to-date index of ``store``'s sidecar (canonical file + journal).

    Takes the store's own locks in the store's order (thread lock, then file lock), so it
    can run beside writers in other threads.

    Raises:
        SidecarError: the file is not a sidecar this version reads (raised by the full reader).
    """
    with store._thread_lock, sidecar_lock(store.path, reading=True):
        identity = file_identity(store.path)
        journal_identity = file_identity(store.journal)
        journal_ino = journal_identity[0] if journal_identity else None
        key = str(store.path)
        index = _memory.get(key)
        if index is None or index.identity != identity or identity is None:
            index = None
            if identity is not None and identity[1] >= PERSIST_MIN_BYTES:
                index = _load(_index_path(store.path), identity)
            if index is None:
                digest = None
                if identity is None:
                    columns = {name: np.zeros(0, dtype=np.int64 if name == "episode" else bool) for name in COLUMNS}
                    columns["quality"] = np.zeros(0, dtype=np.int8)
                else:
                    data = store.path.read_bytes()
                    digest = content_digest(data)
                    try:
                        columns = _build(data)
                    except _InvalidForIndex:
                        store.read(copy_document=False)  # raises SidecarError with the reason
                        raise
                index = LabelIndex(**columns, identity=identity, digest=digest)  # type: ignore[arg-type]
                if identity is not None and identity[1] >= PERSIST_MIN_BYTES:
                    _save(index, _index_path(store.path))
        if journal_ino is None:
            index.journal_ino, index.journal_offset = None, 0
        else:
            offset = index.journal_offset if index.journal_ino == journal_ino else 0
            entries, end = read_jsonl(store.journal, offset=offset)
            if offset == 0 and entries:
                if not journal_header_matches(entries[0], index.digest):
                    store.read(copy_document=False)  # moves the stale journal aside
                    _memory.pop(key, None)
                    return label_index(store)  # both locks are re-entrant; the journal is gone now
                entries = entries[1:]
            _apply_journal(index, entries)
            index.journal_ino, index.journal_offset = journal_ino, end
        _memory[key] = index
        return index

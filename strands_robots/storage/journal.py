"""Journal entries of a :class:`~strands_robots.storage.record_store.RecordStore`: screening,
the three-way merge over a canonical file another tool replaced, and the files kept aside.

A journal is JSON Lines. Its first line is the header ``{"journal": 2, "base_sha256": ...}``
naming the canonical file its entries apply to; each later line is one entry:

- ``{"op": "put", "key": "<episode_index>", "record": {...} | null}`` (null deletes),
- ``{"op": "set", "field": "<top-level field>", "value": ...}``,
- ``{"op": "batch", "entries": [put | set, ...]}``: the entries of one write, applied
  together or not at all (one line, so a torn write is always a torn, ignored line).

Every entry is checked before it is applied (:func:`screen`; refused lines are kept aside,
never folded); entries written for a canonical file another tool replaced since are merged
per record (:func:`three_way`) over the base, a hard link to the file the journal started
from. See docs/sidecar-format.md, "Files beside it" (the journal, its base, refused lines
and conflicts).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from strands_robots.errors import LabelsError, StorageError
from strands_robots.storage.atomic import atomic_write_bytes, fsync_dir, read_regular
from strands_robots.storage.codec import dump_line
from strands_robots.storage.episode_index import is_record_key
from strands_robots.storage.jsonl import append_jsonl, read_jsonl
from strands_robots.storage.side_files import conflicts_path, journal_base_path, journal_path, rejected_path

log = logging.getLogger(__name__)

#: ``check_record(key, record) -> reason | None`` (``record`` None = a delete).
RecordCheck = Callable[[str, Any], "str | None"]
#: ``check_field(field, value) -> reason | None``.
FieldCheck = Callable[[str, Any], "str | None"]

MISSING = object()  # "no such record" in a merge (distinct from a JSON null)
#: The version the header line names (``{"journal": 2, "base_sha256": ...}``).
JOURNAL_VERSION = 2


def entries_for(lines: list[tuple[int, Any]], digest: str | None) -> list[tuple[int, Any]] | None:
    """The numbered lines after the header when the journal's first line says it applies to
    the canonical file of ``digest`` (its sha256); None when it names another file or is missing."""
    header = lines[0][1] if lines and lines[0][0] == 1 else None
    if isinstance(header, dict) and header.get("journal") == JOURNAL_VERSION and header.get("base_sha256") == digest:
        return lines[1:]
    return None


def start_journal(sidecar: Path, digest: str | None) -> bytes:
    """Keep the canonical file a new journal starts from (a hard link, for a later three-way
    merge; a copy when the file system has no links) and return the header line naming it."""
    base = journal_base_path(sidecar)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(base)
    if digest is not None:
        try:
            os.link(sidecar, base, follow_symlinks=False)
        except OSError:
            try:
                atomic_write_bytes(base, read_regular(sidecar))
            except (OSError, LabelsError) as exc:  # a later merge only gets more cautious
                log.warning("could not keep the journal's base %s: %s", base, exc)
    return dump_line({"journal": JOURNAL_VERSION, "base_sha256": digest})


def load_base(
    sidecar: Path, header: Any, empty: Callable[[], dict[str, Any]], decode: Callable[[bytes, Path], dict[str, Any]]
) -> dict[str, Any] | None:
    """The document a journal was written against (``decode(bytes, path)`` checks it), or None when it is lost."""
    if not isinstance(header, dict) or header.get("journal") != JOURNAL_VERSION:
        return None
    want = header.get("base_sha256")
    if want is None:
        return empty()
    base = journal_base_path(sidecar)
    try:
        data = read_regular(base)
        return decode(data, base) if hashlib.sha256(data).hexdigest() == want else None
    except (OSError, LabelsError):
        return None


def remove_journal(sidecar: Path) -> None:
    """Delete the journal of ``sidecar`` and its base (after their entries reached the canonical file).

    Raises:
        StorageError: a file could not be removed; the message says the labels are stored.
    """
    journal = journal_path(sidecar)
    for path in (journal, journal_base_path(sidecar)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            err = StorageError(
                f"the labels are stored in {sidecar}, but {path} could not be removed ({exc.strerror or exc}); "
                "nothing is lost. Remove that file (or make the directory writable) - until then it is "
                "re-checked against the file on every load."
            )
            err.errno = exc.errno
            raise err from exc
    with contextlib.suppress(OSError):
        fsync_dir(journal.parent)


@dataclass
class JournalTail:
    """Journal operations after a byte offset (see ``RecordStore.journal_tail``)."""

    ino: int | None
    ops: list[Any]
    end: int


def journal_keys(journal: Path) -> list[str]:
    """The record keys a journal on disk holds entries for (header excluded; none when unreadable)."""
    try:
        lines, _, _ = read_lines(journal)
    except OSError:
        return []
    keys: list[str] = []
    for _, entry in lines[1:]:
        entries = entry.get("entries", []) if isinstance(entry, dict) and entry.get("op") == "batch" else [entry]
        keys.extend(e["key"] for e in entries if isinstance(e, dict) and isinstance(e.get("key"), str))
    return keys


@dataclass
class Rejected:
    """One journal line that was skipped."""

    line: int  # counted from the byte offset the read started at
    reason: str
    entry: Any
    after_byte: int = 0

    def where(self) -> str:
        return f"line {self.line}" + (f" after byte {self.after_byte}" if self.after_byte else "")

    def as_json(self, journal: Path) -> dict[str, Any]:
        return {"journal": journal.name, "line": self.where(), "reason": self.reason, "entry": self.entry}


@dataclass
class Screened:
    """The applicable operations of some journal lines and the lines refused."""

    ops: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def _op_problem(
    entry: Any, records_key: str, check_record: RecordCheck | None, check_field: FieldCheck | None
) -> str | None:
    if not isinstance(entry, dict):
        return f"the entry is a {type(entry).__name__}, not an object"
    op = entry.get("op")
    if op == "put":
        key = entry.get("key", MISSING)
        if key is MISSING:
            return "a 'put' entry without 'key'"
        if not is_record_key(key):
            return f"key {key!r} is not the decimal spelling of an episode_index"
        if "record" not in entry:
            return "a 'put' entry without 'record'"
        record = entry["record"]
        if record is not None and not isinstance(record, dict):
            return f"the record of key {key!r} is a {type(record).__name__}, not an object"
        return check_record(key, record) if check_record is not None else None
    if op == "set":
        name = entry.get("field", MISSING)
        if not isinstance(name, str) or not name:
            return "a 'set' entry without a 'field' name"
        if name == records_key:
            return f"a 'set' entry replacing the whole {records_key!r} mapping (document-level edits are not journaled)"
        if "value" not in entry:
            return "a 'set' entry without 'value'"
        return check_field(name, entry["value"]) if check_field is not None else None
    return f"unknown op {op!r} (expected 'put', 'set' or 'batch')"


def screen(
    entries: list[tuple[int, Any]],
    *,
    records_key: str,
    offset: int = 0,
    check_record: RecordCheck | None = None,
    check_field: FieldCheck | None = None,
) -> Screened:
    """Split numbered journal lines into applicable operations and refused lines.

    Args:
        entries: ``(line_number, decoded_line)`` pairs (the header excluded).
        records_key: The document's records mapping (a ``set`` of it is refused).
        offset: Byte offset the line numbers count from (for the report).
        check_record: Store rule for one record; returns why it is refused, or None.
        check_field: Store rule for one top-level field value.

    Returns:
        A :class:`Screened`; a ``batch`` line is applicable only when all its entries are.
    """
    out = Screened()
    for number, entry in entries:
        if isinstance(entry, dict) and entry.get("op") == "batch":
            inner = entry.get("entries")
            if not isinstance(inner, list) or not inner:
                out.rejected.append(Rejected(number, "a 'batch' entry without a list of 'entries'", entry, offset))
                continue
            bad = next(filter(None, (_op_problem(e, records_key, check_record, check_field) for e in inner)), None)
            if bad:
                out.rejected.append(Rejected(number, f"a batch entry is refused: {bad}", entry, offset))
            else:
                out.ops.extend(inner)
            continue
        problem = _op_problem(entry, records_key, check_record, check_field)
        if problem:
            out.rejected.append(Rejected(number, problem, entry, offset))
        else:
            out.ops.append(entry)
    return out


def apply_ops(document: dict[str, Any], ops: list[dict[str, Any]], records_key: str) -> None:
    """Apply screened operations in order."""
    records = document.setdefault(records_key, {})
    for op in ops:
        if op["op"] == "put":
            if op["record"] is None:
                records.pop(op["key"], None)
            else:
                records[op["key"]] = op["record"]
        else:
            document[op["field"]] = op["value"]


def read_lines(path: Path, offset: int = 0) -> tuple[list[tuple[int, Any]], list[Rejected], int]:
    """Numbered lines of a journal from ``offset``; lines that are not JSON are refused.

    Returns:
        ``(lines, undecodable, end)``: line numbers count from the start of the read.
    """
    bad: list[tuple[int, bytes]] = []
    records, end = read_jsonl(path, offset=offset, bad_lines=bad)
    refused = [
        Rejected(number, "the line is not valid JSON", raw.decode("utf-8", "replace"), offset) for number, raw in bad
    ]
    return records, refused, end


def keep_aside(sidecar: Path, rejected: list[Rejected]) -> None:
    """Append refused journal lines to :func:`~.side_files.rejected_path` (durably) before a
    fold deletes the journal.

    Raises:
        StorageError: the append failed (the fold must then not delete the journal).
    """
    if rejected:
        journal = journal_path(sidecar)
        append_jsonl(rejected_path(sidecar), [item.as_json(journal) for item in rejected])


def count_lines(path: Path) -> int:
    """Complete lines in a JSON Lines file (0 when absent or unreadable)."""
    try:
        records, _ = read_jsonl(path, bad_lines=[])
    except OSError:
        return 0
    return len(records)


@dataclass
class Merge:
    """The result of :func:`three_way`."""

    document: dict[str, Any]
    applied: list[str]
    conflicts: list[dict[str, Any]]


def version_digest(record: Any, line: bytes | None = None) -> str:
    """The digest of one version of a record (its canonical JSON line, ``line`` when the
    caller has it already): how a version this package wrote is recognised when another
    tool writes it back. 32 hex characters of BLAKE2b (Python's own implementation: every
    write takes one, and a ``sha256`` from OpenSSL 3 costs ~8 us of a ~120 us write in
    ``benchmarks/annotate_loop.py``, its algorithm looked up at each call); kept in memory only."""
    return hashlib.blake2b(dump_line(record) if line is None else line, digest_size=16).hexdigest()


def entry_line(fields: dict[str, bytes], records: dict[str, bytes]) -> bytes:
    """The journal line of one write from the :func:`~.codec.dump_line` of each value set
    and record put (so a record is encoded once: for this line and for its
    :func:`version_digest`); byte for byte ``dump_line`` of the entry, a ``batch`` of more
    than one."""
    ops = [{"op": "set", "field": name, "value": msgspec.Raw(value[:-1])} for name, value in fields.items()]
    ops += [{"op": "put", "key": key, "record": msgspec.Raw(record[:-1])} for key, record in records.items()]
    entry = ops[0] if len(ops) == 1 else {"op": "batch", "entries": ops}
    return msgspec.json.encode(entry, order="sorted") + b"\n"


def three_way(
    base: dict[str, Any] | None,
    theirs: dict[str, Any],
    ops: list[dict[str, Any]],
    records_key: str,
    ours_before: dict[str, list[str]] | None = None,
) -> Merge:
    """Merge pending journal operations over a canonical file another tool rewrote.

    Args:
        base: The document the journal was written against, or None when it is lost
            (then only records the other tool left equal to ours are kept; every other
            pending record is a conflict).
        theirs: The current canonical document (modified in place and returned).
        ops: The journal's screened operations.
        records_key: The records mapping's key.
        ours_before: Per record key, the :func:`version_digest` of versions this package
            wrote earlier. A record the other tool holds at one of them is a
            stale copy of ours that tool wrote back (strands-robots 0.5.3 re-saves the whole
            file it read), not a change of its own: ours stands. The journal's own earlier
            ``put`` entries count as such versions too.

    Returns:
        A :class:`Merge`; ``conflicts`` entries hold ``kind`` (record/field), ``key``,
        ``base``, ``ours`` and ``theirs`` (``None`` for an absent record).
    """
    ours_records = {op["key"]: op["record"] for op in ops if op["op"] == "put"}  # the last of each key
    ours_fields = {op["field"]: op["value"] for op in ops if op["op"] == "set"}
    before: dict[str, set[str]] = {k: set(v) for k, v in (ours_before or {}).items()}
    for op in ops[:-1]:
        if op["op"] == "put" and op["record"] is not None:
            before.setdefault(op["key"], set()).add(version_digest(op["record"]))
    records = theirs.setdefault(records_key, {})
    base_records = base.get(records_key, {}) if base is not None else {}
    applied: list[str] = []
    conflicts: list[dict[str, Any]] = []
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def decide(kind: str, key: str, mine: Any, current: Any, original: Any) -> bool:
        if current == mine:
            return False
        if base is not None and current == original:
            return True
        if kind == "record" and key in before and current is not MISSING and version_digest(current) in before[key]:
            return True  # a stale copy of one of our own versions: not the other tool's change
        conflicts.append(
            {
                "kind": kind,
                "key": key,
                "base": None if original is MISSING else original,
                "ours": mine,
                "theirs": None if current is MISSING else current,
                "base_known": base is not None,
                "at": now,
            }
        )
        return False

    for key, mine in ours_records.items():
        current = records.get(key, MISSING)
        original = base_records.get(key, MISSING)
        mine_value = MISSING if mine is None else mine
        if decide("record", key, mine_value, current, original):
            applied.append(key)
            if mine is None:
                records.pop(key, None)
            else:
                records[key] = mine
    for name, mine in ours_fields.items():
        current = theirs.get(name, MISSING)
        original = base.get(name, MISSING) if base is not None else MISSING
        if decide("field", name, mine, current, original):
            applied.append(f"field:{name}")
            theirs[name] = mine
    for item in conflicts:  # MISSING is not JSON
        if item["ours"] is MISSING:
            item["ours"] = None
    return Merge(theirs, applied, conflicts)


def record_conflicts(canonical: Path, conflicts: list[dict[str, Any]]) -> None:
    """Append conflicts to ``.<name>.conflicts.jsonl`` durably, skipping ones already kept.

    Raises:
        StorageError: the append failed.
    """
    if not conflicts:
        return
    path = conflicts_path(canonical)
    try:
        pairs, _ = read_jsonl(path, bad_lines=[])
    except OSError:
        pairs = []
    existing = [item for _, item in pairs]

    def ident(item: Any) -> str:
        if not isinstance(item, dict):
            return ""
        return json.dumps([item.get("kind"), item.get("key"), item.get("ours"), item.get("theirs")], sort_keys=True)

    seen = {ident(item) for item in existing}
    fresh = [item for item in conflicts if ident(item) not in seen]
    if fresh:
        append_jsonl(path, fresh)

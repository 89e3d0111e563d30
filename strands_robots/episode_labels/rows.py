"""One record's filter row and stored-fingerprint row, in plain Python (no numpy).

The rules every filter path shares: the columnar index (:mod:`.index`, numpy) builds its
columns from these rows when it cannot use its typed decode, and small sidecars are
filtered with them directly (:func:`select_small`), so a filter of a few thousand
episodes does not pay numpy's import (docs/performance.md, "Small sidecars"). The two
paths are held to the same answers by ``tests/labels/test_labels_small_path.py``.
"""

from __future__ import annotations

from typing import Any

from strands_robots.episode_labels.review import dispute_open, effective_quality, effective_success
from strands_robots.episode_labels.vocab import QUALITY_RANK
from strands_robots.fingerprint import META_KEY
from strands_robots.storage import RecordStore
from strands_robots.storage.registry import file_identity

#: Bits of a stored fingerprint's keys (``fp_keys`` of the index). ``FP_OTHER``: it stores
#: something the columns do not hold (an unknown key, an unusual value); such records are
#: checked against the dataset by the record rule of :mod:`strands_robots.fingerprint`.
FP_LENGTH, FP_RANGE, FP_TASKS, FP_CONTENT, FP_OTHER = 1, 2, 4, 8, 16
#: Width of a content digest (16 ASCII characters).
CONTENT_WIDTH = 16
#: The keys the columns hold, in the order a mismatch is reported (the stored file's sorted order).
COLUMN_KEYS = (("content", FP_CONTENT), ("index_range", FP_RANGE), ("length", FP_LENGTH), ("tasks", FP_TASKS))
#: Sidecars (canonical file plus journal) below this many bytes are filtered without the
#: columnar index: below it, numpy's import costs more than the Python loop.
SMALL_BYTES = 2 << 20


def row_of(record: dict[str, Any]) -> tuple[bool, bool, bool, int, bool, bool]:
    """``(has_verdict, success, has_judge, quality_rank, open_dispute, has_fingerprint)`` of a
    record (a plain dict), by the rules of :mod:`.review` (``quality_rank`` -1: none)."""
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


def _non_negative(value: Any) -> bool:
    return type(value) is int and 0 <= value < 2**63


class TaskCodes:
    """Distinct stored task lists, coded as small integers."""

    def __init__(self, lists: list[tuple[str, ...]] | None = None) -> None:
        self.lists = list(lists or [])
        self.codes = {tasks: code for code, tasks in enumerate(self.lists)}

    def code(self, tasks: tuple[str, ...]) -> int:
        code = self.codes.get(tasks)
        if code is None:
            code = self.codes[tasks] = len(self.lists)
            self.lists.append(tasks)
        return code


def fingerprint_row(fingerprint: Any, tasks: TaskCodes) -> tuple[int, int, int, int, int, bytes]:
    """``(fp_keys, fp_length, fp_from, fp_to, fp_tasks, fp_content)`` of a stored fingerprint (a dict)."""
    keys, length, start, end, task, content = 0, -1, -1, -1, -1, b""
    if not fingerprint or not isinstance(fingerprint, dict):
        return keys, length, start, end, task, content
    for key, value in fingerprint.items():
        if key == "length" and _non_negative(value):
            keys, length = keys | FP_LENGTH, value
        elif (
            key == "index_range"
            and isinstance(value, list)
            and len(value) == 2
            and _non_negative(value[0])
            and _non_negative(value[1])
        ):
            keys, start, end = keys | FP_RANGE, value[0], value[1]
        elif key == "tasks" and isinstance(value, list) and all(isinstance(t, str) for t in value):
            keys, task = keys | FP_TASKS, tasks.code(tuple(value))
        elif key == "content" and isinstance(value, str) and len(value) == CONTENT_WIDTH and value.isascii():
            keys, content = keys | FP_CONTENT, value.encode("ascii")
        elif key == META_KEY:  # where the values were read from, not a value (see .stale)
            continue
        else:
            keys |= FP_OTHER
    return keys, length, start, end, task, content


def common_meta(metas: set[Any]) -> str | None:
    """The one metadata digest (``fingerprint.meta``) the fingerprinted records name, or None
    when they name several or one names none (the rule of ``stale.read_from``)."""
    if len(metas) != 1:
        return None
    (meta,) = metas
    return meta if isinstance(meta, str) else None


def is_small(store: RecordStore) -> bool:
    """True when the sidecar (canonical file plus journal) is below :data:`SMALL_BYTES`."""
    canonical, journal = file_identity(store.path), file_identity(store.journal)
    return (canonical[1] if canonical else 0) + (journal[1] if journal else 0) < SMALL_BYTES


def select_rows(
    document: dict[str, Any], *, require_success: bool, min_rank: int, exclude_disputed: bool
) -> tuple[list[int], list[int]]:
    """``(chosen, fingerprinted)``: sorted episodes passing the filter rules (see
    ``filter_episodes``), and those of them whose record carries a fingerprint."""
    chosen, fingerprinted = [], []
    rank_of = QUALITY_RANK.get
    for key, record in document["episodes"].items():
        if "review" in record:  # rare: the review rules
            has_verdict, success, has_judge, rank, open_dispute, has_fingerprint = row_of(record)
            if not (has_judge and has_verdict and rank >= min_rank):
                continue
        else:  # row_of without a review, inlined (most records)
            verdict, judge = record.get("deterministic"), record.get("judge")
            if not judge or not isinstance(verdict, dict) or rank_of(judge.get("quality"), -1) < min_rank:
                continue
            success, open_dispute = bool(verdict["success"]), bool(judge.get("disputes_verdict"))
            has_fingerprint = record.get("fingerprint")
        if (require_success and not success) or (exclude_disputed and open_dispute):
            continue
        chosen.append(int(key))
        if has_fingerprint:
            fingerprinted.append(int(key))
    chosen.sort()
    fingerprinted.sort()
    return chosen, fingerprinted


def select_labelled(
    store: RecordStore, *, require_success: bool, min_rank: int, exclude_disputed: bool
) -> tuple[list[int], list[int]]:
    """:func:`select_rows` of the merged sidecar: read whole when small, else from the columnar index.

    Raises:
        SidecarError: the file is not a sidecar this version reads.
    """
    if is_small(store):
        return store.query(
            lambda document: select_rows(
                document, require_success=require_success, min_rank=min_rank, exclude_disputed=exclude_disputed
            )
        )
    from strands_robots.episode_labels.index import label_index  # numpy: only for large sidecars

    index = label_index(store)
    chosen = index.select(
        require_success=require_success, min_rank=min_rank, exclude_disputed=exclude_disputed
    ).tolist()
    return chosen, index.with_fingerprint(chosen)

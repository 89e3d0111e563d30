"""SARM's subtask columns in ``meta/episodes`` as segments, and segments as SARM's columns
(docs/segments.md, "LeRobot's subtasks: import, review, export"; frames half-open).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, did_you_mean
from strands_robots.segments.validate import segments_from_starts

PREFIXES = ("sparse", "dense")
FIELDS = ("subtask_names", "subtask_start_times", "subtask_end_times", "subtask_start_frames", "subtask_end_frames")


def check_prefix(prefix: str) -> str:
    """``sparse`` or ``dense``.

    Raises:
        LabelValidationError: another value.
    """
    if prefix not in PREFIXES:
        raise LabelValidationError(f"sarm={prefix!r}; use sparse or dense.{did_you_mean(prefix, PREFIXES)}")
    return prefix


def columns(prefix: str) -> list[str]:
    """SARM's five column names for ``prefix``."""
    return [f"{check_prefix(prefix)}_{name}" for name in FIELDS]


def source_name(prefix: str) -> str:
    """The annotator name of proposals read from SARM's columns (``sarm-sparse``)."""
    return f"sarm-{check_prefix(prefix)}"


def episode_files(root: Path) -> list[Path]:
    """The ``meta/episodes`` parquet files, in name order."""
    return sorted(Path(root).glob("meta/episodes/*/*.parquet"))


def read_spans(root: Path, prefix: str) -> dict[int, list[tuple[str, float | None, float | None, Any, Any]]]:
    """Per episode ``[(name, start_time, end_time, start_frame, end_frame)]`` as stored.

    Episodes whose names are null are left out. For ``sparse`` the legacy unprefixed
    columns are read when the prefixed ones are absent (as SARM does).
    """
    import pyarrow.parquet as pq

    found: dict[int, list[tuple[str, float | None, float | None, Any, Any]]] = {}
    wanted = columns(prefix)
    for path in episode_files(root):
        names = pq.read_schema(path).names
        cols = wanted
        if cols[0] not in names and prefix == "sparse" and FIELDS[0] in names:
            cols = list(FIELDS)
        if cols[0] not in names:
            continue
        present = [c for c in cols if c in names]
        table = pq.read_table(path, columns=["episode_index", *present]).to_pydict()
        for i, ep in enumerate(table["episode_index"]):
            labels = table[cols[0]][i]
            if labels is None:
                continue
            values = [(table[c][i] if c in table else None) or [] for c in cols[1:]]  # a missing value is None
            spans = itertools.islice(itertools.zip_longest(labels, *values), len(labels))
            found[int(ep)] = [(str(name), *times_and_frames) for name, *times_and_frames in spans]
    return found


def spans_to_segments(
    spans: list[tuple[str, float | None, float | None, Any, Any]], length: int, fps: float
) -> tuple[list[dict[str, Any]], list[str]]:
    """Segments (frames, half-open, covering ``[0, length)``) and what needed fixing.

    Frames come from the ``..._frames`` columns, else from the times at ``fps`` (rounded).
    Fixed and reported: spans out of order (sorted), zero-length or unnamed spans
    (dropped), spans past the end (clipped or dropped), overlaps (the earlier span ends
    where the later starts), gaps (the earlier span runs on), a first span after frame 0
    and a last one ending before the episode's end (extended).
    """
    changes: list[str] = []
    items: list[list[Any]] = []
    for k, (name, st, et, sf, ef) in enumerate(spans):
        name = " ".join(str(name or "").split())
        if sf is not None and ef is not None:
            start, end = int(sf), int(ef)
        elif st is not None and et is not None:
            start, end = int(round(float(st) * fps)), int(round(float(et) * fps))
            changes.append(f"span {k} ({name!r}) has no frames: read from its times at {fps:g} fps")
        else:
            changes.append(f"span {k} ({name!r}) has neither frames nor times: dropped")
            continue
        if not name:
            changes.append(f"span {k} at frames [{start}, {end}) has no name: dropped")
            continue
        if start >= length:
            changes.append(f"span {k} ({name!r}) starts at frame {start}, past the episode's {length} frames: dropped")
            continue
        if end > length:
            changes.append(f"span {k} ({name!r}) ends at frame {end}, past the episode's end: clipped to {length}")
            end = length
        if end <= start:
            changes.append(f"span {k} ({name!r}) at frames [{start}, {end}) is zero-length: dropped")
            continue
        items.append([max(start, 0), end, name, k])
    order = sorted(items, key=lambda it: (it[0], it[1], it[3]))
    if order != items:
        changes.append("spans out of order: sorted by start frame")
    for prev, it in zip(order, order[1:], strict=False):
        if it[0] < prev[1]:
            changes.append(
                f"spans {prev[2]!r} and {it[2]!r} overlap at frames [{it[0]}, {prev[1]}): "
                f"{prev[2]!r} now ends at {it[0]}"
            )
            if it[0] == prev[0]:
                changes.append(f"span {prev[2]!r} became zero-length: dropped")
        elif it[0] > prev[1]:
            changes.append(f"frames [{prev[1]}, {it[0]}) between spans: {prev[2]!r} runs on")
    if order and order[0][0] > 0:
        changes.append(f"frames [0, {order[0][0]}) before the first span: folded into it")
    if order and order[-1][1] < length:
        changes.append(f"frames [{order[-1][1]}, {length}) after the last span: it runs to the episode's end")
    return segments_from_starts([(start, name) for start, _, name, _ in order], length), changes


def episode_values(segments: list[dict[str, Any]], fps: float) -> list[list[Any]]:
    """SARM's five values of one episode, in :data:`FIELDS` order: names, times (s), frames."""
    return [
        [str(s["label"]) for s in segments],
        [int(s["start"]) / fps for s in segments],
        [int(s["end"]) / fps for s in segments],
        [int(s["start"]) for s in segments],
        [int(s["end"]) for s in segments],
    ]


def arrow_types() -> list[tuple[Any, Any]]:
    """The Arrow type of each of SARM's columns, in :data:`FIELDS` order, with None for the rows of other episodes."""
    import pyarrow as pa

    return [(pa.list_(kind), None) for kind in (pa.string(), pa.float64(), pa.float64(), pa.int64(), pa.int64())]


def temporal_proportions(segmentations: dict[int, list[dict[str, Any]]]) -> dict[str, float]:
    """The prior SARM reads: per subtask name, its share of an episode's frames averaged over
    the episodes it occurs in, normalised to sum to 1, in order of first appearance.

    A name that occurs twice in an episode counts both segments' frames.
    """
    shares: dict[str, list[float]] = defaultdict(list)
    for segments in segmentations.values():
        per: Counter[str] = Counter()
        for s in segments:
            per[str(s["label"])] += int(s["end"]) - int(s["start"])
        if (total := per.total()) > 0:
            for name, frames in per.items():
                shares[name].append(frames / total)
    mean = {name: sum(v) / len(v) for name, v in shares.items()}
    norm = sum(mean.values())
    return {name: value / norm for name, value in mean.items()} if norm > 0 else {}


def proportions_path(root: Path, prefix: str) -> Path:
    """``meta/temporal_proportions_PREFIX.json``."""
    return Path(root) / "meta" / f"temporal_proportions_{check_prefix(prefix)}.json"

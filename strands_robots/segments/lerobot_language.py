"""LeRobot's language rows (v3.0 ``language_persistent``) as segments, and segments as rows
(docs/segments.md, "LeRobot's subtasks: import, review, export": a row of a style is active from
its ``timestamp`` until the next row of that style).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from strands_robots.errors import DatasetError, LabelValidationError, did_you_mean
from strands_robots.segments import sarm
from strands_robots.segments.validate import segments_from_starts

LANGUAGE_PERSISTENT = "language_persistent"
LANGUAGE_EVENTS = "language_events"
#: The style LeRobot's subtask rows carry (``lerobot/datasets/language.py``).
SUBTASK_STYLE = "subtask"
#: Styles LeRobot keeps in ``language_persistent``.
PERSISTENT_STYLES = ("subtask", "plan", "memory", "motion", "task_aug")
#: The annotator name of proposals read from language rows.
SOURCE_NAME = "lerobot-annotate"
#: ``meta/info.json`` feature entries LeRobot gives its two language columns.
LANGUAGE_FEATURES = {
    LANGUAGE_PERSISTENT: {"dtype": "language", "shape": [1], "names": None},
    LANGUAGE_EVENTS: {"dtype": "language", "shape": [1], "names": None},
}


def check_style(style: str) -> str:
    """``style``, or a :class:`LabelValidationError` naming :data:`PERSISTENT_STYLES` when it is none of them."""
    if style not in PERSISTENT_STYLES:
        raise LabelValidationError(
            f"style={style!r} is not a persistent language style; use one of {', '.join(PERSISTENT_STYLES)}."
            + did_you_mean(style, PERSISTENT_STYLES)
        )
    return style


def rows_arrow_type(*, timestamp: bool = True) -> Any:
    """The Arrow type of a new ``language_persistent`` column (LeRobot's row structs, ``tool_calls``
    as text), or with ``timestamp=False`` of a new ``language_events`` column."""
    import pyarrow as pa

    fields = [("role", pa.string()), ("content", pa.string()), ("style", pa.string())]
    fields += [("timestamp", pa.float32())] if timestamp else []
    fields += [("camera", pa.string()), ("tool_calls", pa.list_(pa.string()))]
    return pa.list_(pa.struct(fields))


@dataclass
class EpisodeRows:
    """One episode as stored in the data files.

    Attributes:
        episode_index: The episode.
        timestamps: Per-frame ``timestamp`` in ``frame_index`` order, float32 as stored.
        persistent: The episode's ``language_persistent`` list (of its first frame).
        uneven: True when frames of the episode carry different lists.
    """

    episode_index: int
    timestamps: np.ndarray
    persistent: list[dict[str, Any]] = field(default_factory=list)
    uneven: bool = False


def data_files(root: Path) -> list[Path]:
    """The data files of a v3.0 dataset, in name order."""
    return sorted(Path(root).glob("data/*/*.parquet"))


def open_v3(root: Path, style: str = SUBTASK_STYLE, sarm_prefix: str | None = None) -> Any:
    """The opened dataset, refused unless it is v3.0 (LeRobot's language columns are v3.0's), after
    checking which annotations are asked for: SARM's ``sarm_prefix`` columns, else the rows of ``style``.

    Raises:
        UnsupportedVersionError: another codebase version (v2.1 ...).
        DatasetError: not a readable LeRobot dataset.
        LabelValidationError: an unknown style or SARM prefix.
    """
    from strands_robots.dataset import open_dataset
    from strands_robots.errors import UnsupportedVersionError

    if sarm_prefix is not None:
        sarm.check_prefix(sarm_prefix)
    else:
        check_style(style)
    dataset = open_dataset(root)
    version = dataset.codebase_version
    if not str(version).startswith("v3"):
        raise UnsupportedVersionError(
            f"{root} is a {version} dataset; LeRobot's language rows and SARM's columns exist in v3.0 datasets only. "
            "Convert it first (lerobot's convert_dataset_v21_to_v30), then import or export again."
        )
    return dataset


def read_episodes(root: Path) -> dict[int, EpisodeRows]:
    """Every episode's frame timestamps and persistent language rows, from the data files.

    Raises:
        DatasetError: a data file without ``episode_index``, ``frame_index`` or ``timestamp``.
    """
    import pyarrow.parquet as pq

    parts: dict[int, list[tuple[Any, ...]]] = defaultdict(list)  # per file: frames, timestamps, first/last rows
    for path in data_files(root):
        names = pq.read_schema(path).names
        columns = ["episode_index", "frame_index", "timestamp"]
        if missing := [c for c in columns if c not in names]:
            raise DatasetError(f"{path} has no {missing} column(s); it is not a LeRobot v3.0 data file.")
        if LANGUAGE_PERSISTENT in names:
            columns.append(LANGUAGE_PERSISTENT)
        table = pq.read_table(path, columns=columns)
        episodes = table.column("episode_index").to_numpy()
        frames = table.column("frame_index").to_numpy()
        times = table.column("timestamp").to_numpy().astype(np.float32)
        language = table.column(LANGUAGE_PERSISTENT) if LANGUAGE_PERSISTENT in names else None
        for ep in np.unique(episodes):
            rows = np.flatnonzero(episodes == ep)
            ends = [language[int(r)].as_py() or [] for r in (rows[0], rows[-1])] if language is not None else [[], []]
            parts[int(ep)].append((frames[rows], times[rows], *ends))
    found: dict[int, EpisodeRows] = {}
    for ep, chunks in parts.items():
        in_files, at, firsts, lasts = zip(*chunks, strict=True)
        timestamps = np.concatenate(at)[np.argsort(np.concatenate(in_files), kind="stable")]
        persistent: list[dict[str, Any]] = next((rows for rows in firsts if rows), [])
        found[ep] = EpisodeRows(ep, timestamps, persistent, any(a != b for a, b in zip(firsts, lasts, strict=True)))
    return found


def style_rows(persistent: list[dict[str, Any]], style: str) -> list[dict[str, Any]]:
    """The rows of ``style`` in ``persistent``, as stored."""
    return [r for r in persistent if isinstance(r, dict) and r.get("style") == style]


def rows_digest(rows: Sequence[Any]) -> str:
    """A short digest of rows (what an export checks the dataset still holds)."""
    text = json.dumps(rows, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def frame_at(timestamp: float, timestamps: np.ndarray, fps: float) -> int | None:
    """The frame whose timestamp is within half a frame of ``timestamp``, else None."""
    if len(timestamps) == 0:
        return None
    pos = int(np.argmin(np.abs(timestamps.astype(np.float64) - float(timestamp))))
    return pos if abs(float(timestamps[pos]) - float(timestamp)) <= 0.5 / fps + 1e-6 else None


def rows_to_segments(
    rows: list[dict[str, Any]], timestamps: np.ndarray, fps: float
) -> tuple[list[dict[str, Any]], list[str]]:
    """Segments (frames, half-open, the last one to ``len(timestamps)``) from rows of one style,
    and what needed fixing (docs/segments.md, "Import (`import-lerobot`)" lists the fixes).
    """
    length = len(timestamps)
    changes: list[str] = []
    starts: list[tuple[int, str, float]] = []
    last_ts = float("-inf")
    for i, row in enumerate(rows):
        ts = float(row.get("timestamp", float("nan")))
        text = " ".join(str(row.get("content") or "").split())
        if ts < last_ts:
            changes.append(f"row {i} at {ts:.3f} s comes before the row above it: sorted by timestamp")
        last_ts = max(last_ts, ts)
        if not text:
            changes.append(f"row {i} at {ts:.3f} s has no content: dropped")
            continue
        frame = frame_at(ts, timestamps, fps)
        if frame is None:
            end = float(timestamps[-1]) if length else 0.0
            where = "past the episode's end" if ts > end else "not within half a frame of any frame"
            changes.append(f"row {i} ({text!r}) at {ts:.3f} s is {where} ({length} frames): dropped")
            continue
        if abs(float(timestamps[frame]) - ts) > 1e-4:
            changes.append(f"row {i} at {ts:.4f} s snapped to frame {frame} ({float(timestamps[frame]):.4f} s)")
        starts.append((frame, text, ts))
    starts.sort(key=lambda s: (s[0], s[2]))
    for (frame, text, _), (after, later, _) in zip(starts, starts[1:], strict=False):
        if after == frame:
            changes.append(f"rows {text!r} and {later!r} start at the same frame {frame} (zero-length): kept {later!r}")
    if starts and starts[0][0] > 0:
        changes.append(f"frames [0, {starts[0][0]}) before the first row: folded into the first segment")
    return segments_from_starts([(frame, text) for frame, text, _ in starts], length), changes


def segment_rows(segments: list[dict[str, Any]], timestamps: np.ndarray, style: str) -> list[dict[str, Any]]:
    """One persistent row per segment, at its start frame's stored timestamp."""
    return [
        {
            "role": "assistant",
            "content": str(seg["label"]),
            "style": style,
            "timestamp": float(timestamps[int(seg["start"])]),
            "camera": None,
            "tool_calls": None,
        }
        for seg in segments
    ]


def merge_rows(persistent: list[dict[str, Any]], new: list[dict[str, Any]], style: str) -> list[dict[str, Any]]:
    """``persistent`` with its ``style`` rows replaced by ``new``, in LeRobot's order.

    Rows of other styles keep their values and relative order; the list is ordered by
    ``(timestamp, style, role)`` with a stable sort, as LeRobot's writer orders it.
    """
    merged = [r for r in persistent if r.get("style") != style] + list(new)
    return sorted(merged, key=lambda r: (float(r["timestamp"]), r.get("style") or "", r.get("role") or ""))

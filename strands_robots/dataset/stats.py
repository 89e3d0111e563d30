"""Whole-dataset feature ranges from the statistics LeRobot stores, and the readers of its
statistics files shared with the fingerprint's content digest (:mod:`strands_robots.fingerprint.columns`).

LeRobot writes per-episode feature statistics: v3.0 as ``stats/<feature>/{min,max,mean,...}``
columns of ``meta/episodes/*/*.parquet``, v2.1 as ``meta/episodes_stats.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from strands_robots.dataset.text import json_object_lines
from strands_robots.errors import DatasetError

#: Remedy named by every refusal of a statistics line.
REWRITE_STATS = "rewrite meta/episodes_stats.jsonl (one {episode_index, stats} object per line) or delete it"


def check_unique_columns(path: Path, names: list[str], columns: list[str]) -> None:
    """Refuse an episodes file naming one of ``columns`` twice (pyarrow cannot pick one)."""
    repeated = sorted({c for c in columns if names.count(c) > 1})
    if repeated:
        raise DatasetError(
            f"{path}: columns {repeated} repeat; rewrite the episodes metadata with one column of each name."
        )


def stats_line(path: Path, lineno: int, entry: dict[str, Any], feature: str) -> tuple[int | None, dict[str, Any]]:
    """``(episode_index or None when not an integer, the feature's statistics object or {})``
    of one ``meta/episodes_stats.jsonl`` line's object.

    Raises:
        DatasetError: ``stats`` (or its feature entry) not an object, or an integer
            ``episode_index`` beyond the int64 range.
    """
    stats = entry.get("stats") or {}
    if not isinstance(stats, dict):
        raise DatasetError(f"{path} line {lineno}: stats is {type(stats).__name__}, not an object; {REWRITE_STATS}.")
    stored = stats.get(feature) or {}
    if not isinstance(stored, dict):
        raise DatasetError(
            f"{path} line {lineno}: stats[{feature!r}] is {type(stored).__name__}, not an object; {REWRITE_STATS}."
        )
    index = entry.get("episode_index")
    if not isinstance(index, int):  # (True counts as 1, as the light reader reads it)
        return None, stored
    if not -(2**63) <= index < 2**63:
        raise DatasetError(f"{path} line {lineno}: episode_index {index} is beyond the int64 range; {REWRITE_STATS}.")
    return index, stored


def _as_vector(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    try:
        vector = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return None
    return vector if vector.size else None


def feature_range(root: str | Path, feature: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The per-component ``(min, max)`` of ``feature`` across the whole dataset, from its statistics.

    Read from ``meta/stats.json`` (v3.0, v2.x), else aggregated over the per-episode
    statistics (``stats/<feature>/min``/``max`` columns of ``meta/episodes/*/*.parquet`` in
    v3.0, ``meta/episodes_stats.jsonl`` in v2.1). No frame data is read.

    Returns:
        Two arrays of shape ``(components,)``, or None when the dataset stores no
        statistics of ``feature`` (the caller then scans the frames).

    Raises:
        DatasetError: An episodes file names a statistics column twice, or
            ``meta/episodes_stats.jsonl`` is not UTF-8 or has a line that is not a JSON object
            with object ``stats`` (a mean/min/max that is not numbers is skipped).
    """
    root = Path(root)
    stats_json = root / "meta" / "stats.json"
    if stats_json.is_file():
        try:
            entry = (json.loads(stats_json.read_text(encoding="utf-8")) or {}).get(feature) or {}
        except (OSError, ValueError, AttributeError):
            entry = {}
        lo, hi = _as_vector(entry.get("min")), _as_vector(entry.get("max"))
        if lo is not None and hi is not None and lo.shape == hi.shape:
            return lo, hi
    lows: list[np.ndarray] = []
    highs: list[np.ndarray] = []

    def add(low: Any, high: Any) -> None:  # an episode's (min, max) when both are vectors
        lo, hi = _as_vector(low), _as_vector(high)
        if lo is not None and hi is not None:
            lows.append(lo)
            highs.append(hi)

    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    columns = [f"stats/{feature}/min", f"stats/{feature}/max"]
    for path in files:
        names = pq.read_schema(path).names
        if not set(columns) <= set(names):
            continue
        check_unique_columns(path, names, columns)
        table = pq.ParquetFile(path).read(columns=columns)
        for lo_row, hi_row in zip(*(table.column(c).to_pylist() for c in columns), strict=True):
            add(lo_row, hi_row)
    stats_file = root / "meta" / "episodes_stats.jsonl"
    if not lows and stats_file.is_file():
        for lineno, line in json_object_lines(stats_file, REWRITE_STATS):
            _, entry = stats_line(stats_file, lineno, line, feature)
            add(entry.get("min"), entry.get("max"))
    shapes = {v.shape for v in lows + highs}
    if not lows or len(shapes) != 1:
        return None
    return np.min(np.stack(lows), axis=0), np.max(np.stack(highs), axis=0)

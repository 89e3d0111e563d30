"""Per-episode content digests and whole-dataset feature ranges from the statistics LeRobot stores.

LeRobot writes per-episode feature statistics: v3.0 as ``stats/<feature>/mean`` columns
of ``meta/episodes/*/*.parquet``, v2.1 as ``meta/episodes_stats.jsonl``. The mean of
``observation.state`` over an episode differs between episodes of equal length, so its
digest tells whether an ``episode_index`` still names the same recording after a dataset
edit (used by the label fingerprints). Datasets without these statistics (v2.0, minimal
datasets) give no digests.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from strands_robots.dataset.keys import STATE_KEY
from strands_robots.dataset.text import json_object_lines
from strands_robots.errors import DatasetError

#: The feature whose stored mean the content digest hashes.
FEATURE = STATE_KEY


def _digest(mean: Any) -> str | None:
    if mean is None:
        return None
    values = np.asarray(mean, dtype=np.float32).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)):
        return None
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


def _column_digests(table: Any, column: str, path: Path) -> tuple[np.ndarray, list[str | None]]:
    """Digests of one parquet table's list column, row by row, without a Python list per row.

    Raises:
        DatasetError: A row's mean is not an array of numbers (a struct, ragged lists).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    indices = table.column("episode_index").to_numpy().astype(np.int64)
    means = table.column(column).combine_chunks()
    if not (pa.types.is_list(means.type) or pa.types.is_large_list(means.type)):
        return indices, [_checked_digest(path, f"column {column!r}", v) for v in means.to_pylist()]
    values = pc.list_flatten(means)
    if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):  # nested: row by row
        return indices, [_checked_digest(path, f"column {column!r}", v) for v in means.to_pylist()]
    offsets = means.offsets.to_numpy()
    valid = means.is_valid().to_numpy(zero_copy_only=False)
    flat = values.to_numpy(zero_copy_only=False).astype(np.float32)
    if values.null_count:
        flat[~values.is_valid().to_numpy(zero_copy_only=False)] = np.nan
    start = offsets[:-1] - offsets[0]
    stop = offsets[1:] - offsets[0]
    finite = np.isfinite(flat)
    # rows whose values are all finite: a prefix-sum of non-finite counts per row
    bad = np.concatenate([[0], np.cumsum(~finite)])
    good = valid & (stop > start) & (bad[stop] == bad[start])
    sha = hashlib.sha256
    digests: list[str | None] = [
        sha(flat[a:b].tobytes()).hexdigest()[:16] if ok else None
        for a, b, ok in zip(start.tolist(), stop.tolist(), good.tolist(), strict=True)
    ]
    return indices, digests


def episode_content_digest_columns(root: str | Path, feature: str = FEATURE) -> tuple[np.ndarray, np.ndarray]:
    """``(episode_index int64, digest S16)`` of the episodes that have statistics of ``feature``.

    The column form of :func:`episode_content_digests` (same digests), for comparing a
    million fingerprints at once.
    """
    digests = episode_content_digests(root, feature)
    indices = np.fromiter(digests, dtype=np.int64, count=len(digests))
    values = np.array([d.encode("ascii") for d in digests.values()], dtype="S16")
    return indices, values


def episode_content_digests(root: str | Path, feature: str = FEATURE) -> dict[int, str]:
    """``{episode_index: digest}`` of each episode's stored ``feature`` mean.

    Reads only ``episode_index`` and the one statistics column (v3.0) or the stats lines
    (v2.1). Episodes without statistics are absent from the result.
    """
    root = Path(root)
    column = f"stats/{feature}/mean"
    digests: dict[int, str] = {}
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if files:
        for path in files:
            names = pq.read_schema(path).names
            if column not in names:
                continue
            _check_unique_columns(path, names, ["episode_index", column])
            table = pq.ParquetFile(path).read(columns=["episode_index", column])
            indices, row_digests = _column_digests(table, column, path)
            for index, digest in zip(indices.tolist(), row_digests, strict=True):
                if digest is not None:
                    digests[index] = digest
        return digests
    stats_file = root / "meta" / "episodes_stats.jsonl"
    if stats_file.is_file():
        for lineno, line in json_object_lines(stats_file, _REWRITE_STATS):
            index, stored = _stats_line(stats_file, lineno, line, feature)
            digest = _checked_digest(stats_file, f"line {lineno}", stored.get("mean"))
            if digest is not None and index is not None:
                digests[index] = digest
    return digests


#: Remedy named by every refusal of a statistics line.
_REWRITE_STATS = "rewrite meta/episodes_stats.jsonl (one {episode_index, stats} object per line) or delete it"


def _check_unique_columns(path: Path, names: list[str], columns: list[str]) -> None:
    """Refuse an episodes file naming one of ``columns`` twice (pyarrow cannot pick one)."""
    repeated = sorted({c for c in columns if names.count(c) > 1})
    if repeated:
        raise DatasetError(
            f"{path}: columns {repeated} repeat; rewrite the episodes metadata with one column of each name."
        )


def _stats_line(path: Path, lineno: int, entry: dict[str, Any], feature: str) -> tuple[int | None, dict[str, Any]]:
    """``(episode_index or None when not an integer, the feature's statistics object or {})``
    of one ``meta/episodes_stats.jsonl`` line's object.

    Raises:
        DatasetError: ``stats`` (or its feature entry) not an object, or an integer
            ``episode_index`` beyond the int64 range.
    """
    stats = entry.get("stats") or {}
    if not isinstance(stats, dict):
        raise DatasetError(f"{path} line {lineno}: stats is {type(stats).__name__}, not an object; {_REWRITE_STATS}.")
    stored = stats.get(feature) or {}
    if not isinstance(stored, dict):
        raise DatasetError(
            f"{path} line {lineno}: stats[{feature!r}] is {type(stored).__name__}, not an object; {_REWRITE_STATS}."
        )
    index = entry.get("episode_index")
    if not isinstance(index, int):  # (True counts as 1, as the light reader reads it)
        return None, stored
    if not -(2**63) <= index < 2**63:
        raise DatasetError(f"{path} line {lineno}: episode_index {index} is beyond the int64 range; {_REWRITE_STATS}.")
    return index, stored


def _checked_digest(path: Path, where: str, mean: Any) -> str | None:
    """:func:`_digest` of one stored mean; a mean that is not an array of numbers is refused."""
    try:
        return _digest(mean)
    except (TypeError, ValueError) as exc:  # numpy's refusals of a ragged or non-numeric mean
        remedy = _REWRITE_STATS if path.suffix == ".jsonl" else "rewrite the episodes metadata's statistics"
        raise DatasetError(
            f"{path} {where}: a {FEATURE!r} mean is not a rectangular array of numbers ({exc}); {remedy}."
        ) from exc


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
            with object ``stats`` (a mean/min/max that is not numbers is skipped, as before).
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
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    columns = [f"stats/{feature}/min", f"stats/{feature}/max"]
    for path in files:
        names = pq.read_schema(path).names
        if not set(columns) <= set(names):
            continue
        _check_unique_columns(path, names, columns)
        table = pq.ParquetFile(path).read(columns=columns)
        for lo_row, hi_row in zip(
            table.column(columns[0]).to_pylist(), table.column(columns[1]).to_pylist(), strict=True
        ):
            lo, hi = _as_vector(lo_row), _as_vector(hi_row)
            if lo is not None and hi is not None:
                lows.append(lo)
                highs.append(hi)
    stats_file = root / "meta" / "episodes_stats.jsonl"
    if not lows and stats_file.is_file():
        for lineno, line in json_object_lines(stats_file, _REWRITE_STATS):
            _, entry = _stats_line(stats_file, lineno, line, feature)
            lo, hi = _as_vector(entry.get("min")), _as_vector(entry.get("max"))
            if lo is not None and hi is not None:
                lows.append(lo)
                highs.append(hi)
    shapes = {v.shape for v in lows + highs}
    if not lows or len(shapes) != 1:
        return None
    return np.min(np.stack(lows), axis=0), np.max(np.stack(highs), axis=0)

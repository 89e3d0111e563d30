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

#: The feature whose stored mean the content digest hashes.
FEATURE = STATE_KEY


def _digest(mean: Any) -> str | None:
    if mean is None:
        return None
    values = np.asarray(mean, dtype=np.float32).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)):
        return None
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


def _column_digests(table: Any, column: str) -> tuple[np.ndarray, list[str | None]]:
    """Digests of one parquet table's list column, row by row, without a Python list per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    indices = table.column("episode_index").to_numpy().astype(np.int64)
    means = table.column(column).combine_chunks()
    if not (pa.types.is_list(means.type) or pa.types.is_large_list(means.type)):
        return indices, [_digest(v) for v in means.to_pylist()]
    values = pc.list_flatten(means)
    if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):  # nested: row by row
        return indices, [_digest(v) for v in means.to_pylist()]
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
            if column not in pq.read_schema(path).names:
                continue
            table = pq.ParquetFile(path).read(columns=["episode_index", column])
            indices, row_digests = _column_digests(table, column)
            for index, digest in zip(indices.tolist(), row_digests, strict=True):
                if digest is not None:
                    digests[index] = digest
        return digests
    stats_file = root / "meta" / "episodes_stats.jsonl"
    if stats_file.is_file():
        with open(stats_file, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                entry = json.loads(line)
                digest = _digest(((entry.get("stats") or {}).get(feature) or {}).get("mean"))
                if digest is not None and isinstance(entry.get("episode_index"), int):
                    digests[entry["episode_index"]] = digest
    return digests


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
        if not set(columns) <= set(pq.read_schema(path).names):
            continue
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
        with open(stats_file, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                entry = ((json.loads(line).get("stats") or {}).get(feature)) or {}
                lo, hi = _as_vector(entry.get("min")), _as_vector(entry.get("max"))
                if lo is not None and hi is not None:
                    lows.append(lo)
                    highs.append(hi)
    shapes = {v.shape for v in lows + highs}
    if not lows or len(shapes) != 1:
        return None
    return np.min(np.stack(lows), axis=0), np.max(np.stack(highs), axis=0)

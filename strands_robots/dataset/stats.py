"""Per-episode content digests from the statistics LeRobot stores in the episodes metadata.

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

FEATURE = "observation.state"


def _digest(mean: Any) -> str | None:
    if mean is None:
        return None
    values = np.asarray(mean, dtype=np.float32).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)):
        return None
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


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
            table = pq.read_table(path, columns=["episode_index", column])
            for index, mean in zip(
                table.column("episode_index").to_pylist(), table.column(column).to_pylist(), strict=True
            ):
                digest = _digest(mean)
                if digest is not None:
                    digests[int(index)] = digest
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

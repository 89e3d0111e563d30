"""Small builders for label tests: a minimal dataset as the seed snippet writes it, and the
verdicts of ``examples/toy_dataset`` (episodes 0 and 1 succeed, 2 fails)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

TOY_VERDICTS = [{"episode": 0, "success": True}, {"episode": 1, "success": True}, {"episode": 2, "success": False}]


def make_minimal_dataset(root: Path, lengths: dict[int, int], fps: int = 30) -> Path:
    """``meta/info.json`` + one episodes parquet (episode_index, length): the docs' minimal toy dataset.

    See docs/dataset.md, "What `open_dataset(root)` reads".
    """
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True, exist_ok=True)
    indices = sorted(lengths)
    pq.write_table(
        pa.table({"episode_index": indices, "length": [lengths[i] for i in indices]}),
        root / "meta/episodes/chunk-000/file-000.parquet",
    )
    (root / "meta/info.json").write_text(
        json.dumps({"total_episodes": len(indices), "total_frames": sum(lengths.values()), "fps": fps, "features": {}})
    )
    return root


def verdict(episode: int, success: bool, **extra) -> dict:
    """A verdict dict as a benchmark evaluation reports it."""
    return {
        "episode": episode,
        "success": success,
        "failure": not success,
        "steps": 90,
        "cumulative_reward": 1.0 if success else 0.0,
        "seed": episode,
        **extra,
    }

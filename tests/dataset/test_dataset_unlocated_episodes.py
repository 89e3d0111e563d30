"""Episodes whose metadata names no data file (docs/dataset.md, "Episodes spread over several
data files"): every data file is read, a damaged one refuses the episode by name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots.dataset import open_dataset
from strands_robots.errors import DatasetError

PER_SHARD, SHARDS = 6, 3


def _write(root: Path, episodes: int = 2) -> list[Path]:
    """Episode e's frames spread over three shards: shard k holds frames [6k, 6k+6) of every episode."""
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True)
    (root / "data" / "chunk-000").mkdir(parents=True)
    length = PER_SHARD * SHARDS
    (root / "meta" / "info.json").write_text(
        json.dumps(
            {
                "fps": 10,
                "total_episodes": episodes,
                "total_frames": length * episodes,
                "features": {"observation.state": {"dtype": "float32", "shape": [1], "names": ["pan"]}},
            }
        )
    )
    pq.write_table(
        pa.table({"episode_index": list(range(episodes)), "length": [length] * episodes}),
        root / "meta" / "episodes" / "chunk-000" / "file-000.parquet",
    )
    shards = []
    for k in range(SHARDS):
        # stored out of frame order: the reader sorts
        rows = [(e, f) for e in range(episodes) for f in reversed(range(k * PER_SHARD, (k + 1) * PER_SHARD))]
        path = root / "data" / "chunk-000" / f"file-{k:03d}.parquet"
        pq.write_table(
            pa.table(
                {
                    "episode_index": [e for e, _ in rows],
                    "frame_index": [f for _, f in rows],
                    "observation.state": [[e * 100 + 0.5 * f] for e, f in rows],
                }
            ),
            path,
        )
        shards.append(path)
    return shards


def test_every_shard_is_read_and_the_rows_are_in_frame_order(tmp_path):
    _write(tmp_path)
    ds = open_dataset(tmp_path)
    assert ds.episodes[1].data_located is False
    frames = ds.read_frames(1, ["frame_index", "observation.state"])
    assert frames["frame_index"].tolist() == list(range(18))
    assert frames["observation.state"][:, 0].tolist() == [100 + 0.5 * f for f in range(18)]
    assert [p.kind for p in ds.problems if p.kind == "missing_data_file"] == []


def test_a_half_truncated_shard_is_named_with_the_count(tmp_path):
    shards = _write(tmp_path)
    data = shards[1].read_bytes()
    shards[1].write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError) as caught:
        open_dataset(tmp_path).read_frames(0, ["observation.state"])
    message = str(caught.value)
    assert "1 of 3 data shard(s)" in message and "data/chunk-000/file-001.parquet" in message and "hole" in message


def test_a_table_without_episode_index_is_passed_over(tmp_path):
    _write(tmp_path)
    pq.write_table(pa.table({"unrelated": [1, 2]}), tmp_path / "data" / "chunk-000" / "extra.parquet")
    state = open_dataset(tmp_path).read_frames(0, ["observation.state"])["observation.state"]
    assert np.allclose(state[:, 0], [0.5 * f for f in range(18)])


def test_a_located_dataset_reads_only_its_own_file(tmp_path, mixed_lengths):
    """The control: metadata with file pointers is read as before."""
    ds = open_dataset(mixed_lengths)
    assert ds.episodes[0].data_located is True
    assert ds.read_frames(0, ["frame_index"])["frame_index"].tolist() == list(range(60))

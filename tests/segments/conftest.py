"""A small real LeRobot v3.0 dataset (parquet via pyarrow) with a base-velocity feature.

Episodes 0, 1 and 3 (non-contiguous on purpose) at 10 fps. Episode 0 (60 frames) drives
the base during frames [10, 30) at 0.3 m/s and stands still elsewhere; episodes 1 and 3
never move the base. No videos: segmentation needs only lengths, tasks and state.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

FPS = 10
EPISODES = {
    0: (60, "pick the mug from the counter and place it in the sink"),
    1: (40, "pick the mug from the counter and place it in the sink"),
    3: (50, "place two ice cubes in each glass"),
}
DRIVE = (10, 30)


def base_velocity(episode: int, length: int) -> np.ndarray:
    v = np.zeros((length, 2), dtype=np.float32)
    if episode == 0:
        v[DRIVE[0] : DRIVE[1], 0] = 0.3
    return v


def build_dataset(root: Path, episodes: dict[int, tuple[int, str]] = EPISODES, fps: int = FPS) -> Path:
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True)
    (root / "data" / "chunk-000").mkdir(parents=True)
    tasks = sorted({t for _, t in episodes.values()})
    features = {
        "observation.base_velocity": {"dtype": "float32", "shape": [2], "names": ["vx", "vy"]},
        "observation.state": {"dtype": "float32", "shape": [3], "names": ["x", "y", "z"]},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "frame_index": {"dtype": "int64", "shape": [1], "names": None},
        "episode_index": {"dtype": "int64", "shape": [1], "names": None},
        "index": {"dtype": "int64", "shape": [1], "names": None},
        "task_index": {"dtype": "int64", "shape": [1], "names": None},
    }
    total = sum(n for n, _ in episodes.values())
    info = {
        "codebase_version": "v3.0",
        "robot_type": "test",
        "total_episodes": len(episodes),
        "total_frames": total,
        "total_tasks": len(tasks),
        "chunks_size": 1000,
        "fps": fps,
        "splits": {"train": f"0:{len(episodes)}"},
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
        "features": features,
    }
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=2))
    pq.write_table(pa.table({"task_index": list(range(len(tasks))), "task": tasks}), root / "meta" / "tasks.parquet")
    rows: dict[str, list] = {
        k: []
        for k in (
            "observation.base_velocity",
            "observation.state",
            "timestamp",
            "frame_index",
            "episode_index",
            "index",
            "task_index",
        )
    }
    meta: dict[str, list] = {
        k: []
        for k in (
            "episode_index",
            "length",
            "tasks",
            "data/chunk_index",
            "data/file_index",
            "dataset_from_index",
            "dataset_to_index",
        )
    }
    index = 0
    for ep, (length, task) in sorted(episodes.items()):
        vel = base_velocity(ep, length)
        for f in range(length):
            rows["observation.base_velocity"].append(vel[f].tolist())
            rows["observation.state"].append([0.0, 0.0, float(f)])
            rows["timestamp"].append(f / fps)
            rows["frame_index"].append(f)
            rows["episode_index"].append(ep)
            rows["index"].append(index + f)
            rows["task_index"].append(tasks.index(task))
        for key, value in (
            ("episode_index", ep),
            ("length", length),
            ("tasks", [task]),
            ("data/chunk_index", 0),
            ("data/file_index", 0),
            ("dataset_from_index", index),
            ("dataset_to_index", index + length),
        ):
            meta[key].append(value)
        index += length
    data = pa.table(
        {
            "observation.base_velocity": pa.array(rows["observation.base_velocity"], pa.list_(pa.float32(), 2)),
            "observation.state": pa.array(rows["observation.state"], pa.list_(pa.float32(), 3)),
            "timestamp": pa.array(rows["timestamp"], pa.float32()),
            "frame_index": pa.array(rows["frame_index"], pa.int64()),
            "episode_index": pa.array(rows["episode_index"], pa.int64()),
            "index": pa.array(rows["index"], pa.int64()),
            "task_index": pa.array(rows["task_index"], pa.int64()),
        }
    )
    pq.write_table(data, root / "data" / "chunk-000" / "file-000.parquet")
    pq.write_table(pa.table(meta), root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    return root


@pytest.fixture
def dataset(tmp_path) -> Path:
    """A writable v3.0 dataset (see the module doc)."""
    return build_dataset(tmp_path / "ds")


#: A valid RoboCasa365 segmentation of episode 0 (60 frames): navigate while the base moves.
VALID_EP0 = [
    {"start": 0, "end": 10, "label": "open the left cabinet door"},
    {"start": 10, "end": 30, "label": "navigate to the counter"},
    {"start": 30, "end": 42, "label": "pick up the mug from the counter"},
    {"start": 42, "end": 55, "label": "place the mug in the sink"},
    {"start": 55, "end": 60, "label": "TASK_COMPLETE"},
]


@pytest.fixture
def valid_ep0() -> list[dict]:
    """A fresh copy of :data:`VALID_EP0`."""
    return [dict(s) for s in VALID_EP0]

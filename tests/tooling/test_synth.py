"""``tests/synth.py``'s one dataset writer (``write_dataset``), which the benchmarks use too:
arbitrary per-episode arrays, tasks and camera clips come back through the reader as written,
in both layouts."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from strands_robots.dataset import open_dataset
from tests.synth import EpisodeArrays, episodes_meta_columns, lossless_video, write_dataset

CAM = "observation.images.top"


def _episodes() -> list[EpisodeArrays]:
    rng = np.random.default_rng(7)
    out = []
    for k, (length, task) in enumerate([(5, "stack"), (7, "wipe"), (4, "stack")]):
        state = rng.normal(size=(length, 3)).astype(np.float32)
        action = rng.normal(size=(length, 2)).astype(np.float32)
        levels = (40 + 30 * k + 10 * np.arange(length)).astype(np.uint8)  # one flat grey per frame
        clip = np.broadcast_to(levels[:, None, None, None], (length, 16, 24, 3))
        out.append(EpisodeArrays(state, action, task, {CAM: clip}))
    return out


@pytest.mark.parametrize(("layout", "version", "per_file"), [("v3", "v3.0", 2), ("v2", "v2.1", None)])
def test_written_arrays_tasks_and_frames_read_back(tmp_path, layout, version, per_file):
    episodes = _episodes()
    root = write_dataset(
        tmp_path / "ds",
        episodes,
        fps=10,
        layout=layout,
        codebase_version=version,
        episode_indices=[2, 5, 9],
        state_names=["x", "y", "z"],
        action_names=["a", "b"],
        cameras=[CAM],
        video_options=lossless_video(2),
        episodes_per_file=per_file,
    )
    ds = open_dataset(root)
    assert ds.codebase_version == version and list(ds.episodes) == [2, 5, 9]
    assert dict(ds.tasks) == {0: "stack", 1: "wipe"}  # default: the episodes' tasks, sorted
    assert [ds.episodes[e].tasks for e in (2, 5, 9)] == [("stack",), ("wipe",), ("stack",)]
    assert [ds.episodes[e].index_range for e in (2, 5, 9)] == [(0, 5), (5, 12), (12, 16)]
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info["features"]["action"]["names"] == ["a", "b"] and info["features"][CAM]["shape"] == [16, 24, 3]
    for e, episode in zip((2, 5, 9), episodes, strict=True):
        rows = ds.read_frames(e)
        assert np.array_equal(rows["observation.state"], episode.state)
        assert np.array_equal(rows["action"], episode.action)
        assert rows["frame_index"].tolist() == list(range(episode.length))
        assert np.allclose(rows["timestamp"], np.arange(episode.length) / 10)
        images = ds.decode_frames(e, CAM, [0, episode.length - 1])
        for image, f in zip(images, [0, episode.length - 1], strict=True):
            assert abs(float(image.mean()) - float(episode.video[CAM][f, 0, 0, 0])) <= 2, (e, f)
    assert ds.problems == []


def test_a_state_only_dataset_has_no_action_feature_and_one_row_group_per_episode(tmp_path):
    states = [np.full((n, 2), n, dtype=np.float32) for n in (3, 4, 5, 6, 7)]
    root = write_dataset(tmp_path / "ds", [EpisodeArrays(s, task="lift") for s in states], fps=30, episodes_per_file=2)
    info = json.loads((root / "meta" / "info.json").read_text())
    assert "action" not in info["features"] and info["video_path"] is None and not (root / "videos").exists()
    files = sorted((root / "data" / "chunk-000").iterdir())
    assert [f.name for f in files] == ["file-000.parquet", "file-001.parquet", "file-002.parquet"]
    assert [pq.ParquetFile(f).num_row_groups for f in files] == [2, 2, 1]
    ds = open_dataset(root)
    assert [ds.episodes[e].length for e in range(5)] == [3, 4, 5, 6, 7] and dict(ds.tasks) == {0: "lift"}
    assert ds.read_frames(4)["observation.state"].tolist() == [[7.0, 7.0]] * 7


def test_episodes_meta_columns_put_each_file_episodes_back_to_back():
    cols = episodes_meta_columns([4, 5, 6], [30, 15, 45], [100, 130, 145], ["t"] * 3, file_index=2, fps=30,
                                 video_keys=["cam"], drift=[0.0, 0.5, 0.0])  # fmt: skip
    assert cols["dataset_to_index"].to_pylist() == [130, 145, 190]
    assert cols["data/file_index"].to_pylist() == [2, 2, 2] and cols["videos/cam/file_index"].to_pylist() == [2, 2, 2]
    assert cols["videos/cam/from_timestamp"].to_pylist() == [0.0, 1.5, 1.5]
    assert cols["videos/cam/to_timestamp"].to_pylist() == [1.0, 2.0, 3.0]
    assert cols["tasks"].to_pylist() == [["t"], ["t"], ["t"]]

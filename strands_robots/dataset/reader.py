"""``open_dataset``: the read-only view of one LeRobot dataset (v3.x, v2.1, v2.0).

No lerobot import. Rules: docs/dataset.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from strands_robots.arguments import path_argument
from strands_robots.dataset.episodes import Episode, EpisodeTable, load_episodes_v2, load_episodes_v3
from strands_robots.dataset.frames import Frames, read_frames
from strands_robots.dataset.info import STATE_KEY, DatasetInfo, feature_names, load_info_document, parse_info
from strands_robots.dataset.problems import Problem, file_status, find_problems
from strands_robots.dataset.tasks import load_tasks_v2, load_tasks_v3


class Dataset:
    """A LeRobot dataset opened read-only. Build it with :func:`open_dataset`.

    Attributes:
        root: Dataset root (absolute).
        info: The validated header (:class:`~strands_robots.dataset.info.DatasetInfo`).
        codebase_version: ``"v3.0"``, ``"v2.1"``, ... (see ``DatasetInfo.codebase_version``).
        fps: Frames per second.
        features: Feature key -> spec, as in ``meta/info.json`` (read-only view).
        camera_keys: Sorted full keys of every ``video`` or ``image`` feature.
        state_names: Names of ``observation.state``'s channels (``()`` when not declared).
        tasks: ``task_index`` -> task string.
        episodes: ``episode_index`` -> :class:`Episode` (keyed by the real index).
    """

    def __init__(self, root: Path, info: DatasetInfo, episodes: EpisodeTable, tasks: dict[int, str]) -> None:
        self._root = root
        self._info = info
        self._episodes = episodes
        self._tasks = MappingProxyType(tasks)

    root = property(lambda self: self._root)
    info = property(lambda self: self._info)
    episodes = property(lambda self: self._episodes)
    tasks = property(lambda self: self._tasks)

    @property
    def codebase_version(self) -> str:
        return self._info.codebase_version

    @property
    def fps(self) -> int | float:
        return self._info.fps

    @property
    def robot_type(self) -> str | None:
        return self._info.robot_type

    @property
    def features(self) -> Mapping[str, dict[str, Any]]:
        return MappingProxyType(self._info.features)

    @property
    def camera_keys(self) -> tuple[str, ...]:
        return self._info.camera_keys

    @property
    def video_keys(self) -> tuple[str, ...]:
        """Sorted keys of the ``video`` (mp4) camera features."""
        return self._info.video_keys

    @property
    def state_names(self) -> tuple[str, ...]:
        return feature_names(self._info.features.get(STATE_KEY))

    @property
    def total_frames(self) -> int:
        """Sum of episode lengths (from the episodes metadata, not the header)."""
        return int(self._episodes.lengths.sum())

    def feature_names(self, key: str) -> tuple[str, ...]:
        """Flattened ``names`` of any feature (``()`` when not declared)."""
        return feature_names(self._info.features.get(key))

    @cached_property
    def problems(self) -> list[Problem]:
        """Cross-check findings that do not stop reading (computed on first access).

        See ``strands_robots.dataset.problems`` for which checks raise and which are listed.
        """
        return find_problems(self)

    def video_status(self) -> dict[str, tuple[int, int]]:
        """Camera key -> (mp4 files present, mp4 files referenced) for every ``video`` feature."""
        out = {}
        for key in self.video_keys:
            status = file_status(self, key)
            out[key] = (sum(1 for _, ok, _ in status if ok), len(status))
        return out

    def read_frames(self, episode: int | Episode, columns: list[str] | None = None) -> Frames:
        """One episode's rows; see :func:`strands_robots.dataset.frames.read_frames`."""
        return read_frames(self, episode, columns)

    def decode_frames(
        self,
        episode: int | Episode,
        camera: str,
        frame_indices: Sequence[int],
        max_side: int | None = None,
        timestamps: np.ndarray | None = None,
    ) -> list[np.ndarray]:
        """Camera images of chosen frames; see :func:`strands_robots.dataset.video.decode_frames`."""
        from strands_robots.dataset.video import decode_frames  # PyAV and Pillow: only when decoding

        return decode_frames(self, episode, camera, frame_indices, max_side, timestamps)

    def __repr__(self) -> str:
        return (
            f"<Dataset {self._root} {self.codebase_version} fps={self.fps} episodes={len(self._episodes)} "
            f"cameras={list(self.camera_keys)}>"
        )


def open_dataset(root: str | Path) -> Dataset:
    """Open a LeRobot dataset read-only.

    Reads ``meta/info.json``, the episodes metadata (v3: every ``meta/episodes/*/*.parquet``;
    v2.x: ``meta/episodes.jsonl``) and the tasks. Frames and videos are read on demand.

    Args:
        root: The dataset root (holding ``meta/``).

    Returns:
        A :class:`Dataset`.

    Raises:
        DatasetError: Not a dataset, or metadata that cannot be read correctly (listed in
            ``strands_robots.dataset.problems``' docstring and ``docs/dataset.md``).
        UnsupportedVersionError: A ``codebase_version`` other than v3.*, v2.1, v2.0.
    """
    root = path_argument(root, "root").expanduser().resolve()
    info = parse_info(load_info_document(root), root)
    if info.major == 3:
        episodes = load_episodes_v3(root, info)
        tasks = load_tasks_v3(root)
    else:
        episodes = load_episodes_v2(root, info)
        tasks = load_tasks_v2(root)
    return Dataset(root, info, episodes, tasks)

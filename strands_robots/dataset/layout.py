"""The layout of one LeRobot dataset: what its metadata says, without reading frames.

:class:`Layout` is what the reader's helpers (``frames``, ``video``, ``problems``) are
handed; the :class:`~strands_robots.dataset.reader.Dataset` facade builds on it, so no
helper imports the facade that imports it (docs/dataset.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from strands_robots.dataset.episodes import EpisodeTable
from strands_robots.dataset.info import DatasetInfo, feature_names
from strands_robots.dataset.keys import STATE_KEY


class Layout:
    """What a LeRobot dataset's metadata says: its root, header, episodes and tasks.

    The reader's helpers (frames, video, problems) take a layout; :class:`Dataset` is a
    layout with the reading methods on top (built by :func:`open_dataset`).

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

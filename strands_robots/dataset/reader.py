"""``open_dataset``: the read-only view of one LeRobot dataset (v3.x, v2.1, v2.0).

No lerobot import. Rules: docs/dataset.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from strands_robots.arguments import path_argument
from strands_robots.dataset.check import CheckReport, check_files
from strands_robots.dataset.episodes import Episode, load_episodes_v2, load_episodes_v3
from strands_robots.dataset.frames import Frames, read_frames
from strands_robots.dataset.hub import hub_dataset_of
from strands_robots.dataset.info import load_info_document, parse_info
from strands_robots.dataset.layout import Layout
from strands_robots.dataset.problems import Problem, file_status, find_problems
from strands_robots.dataset.tasks import load_tasks_v2, load_tasks_v3


class Dataset(Layout):
    """A LeRobot dataset opened read-only: a :class:`~strands_robots.dataset.layout.Layout` with the
    reading methods on top (docs/dataset.md). Build it with :func:`open_dataset`.

    Attributes:
        problems: Cross-check findings that do not stop reading.
    """

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
        root: The dataset root (holding ``meta/``), or a Hub repo id
            (``"lerobot/pusht[@REVISION]"``: its local copy, docs/dataset.md, "Datasets by repo id").

    Returns:
        A :class:`Dataset`.

    Raises:
        DatasetError: Not a dataset, or metadata that cannot be read correctly (docs/dataset.md,
            "Which checks raise and which are listed").
        UnsupportedVersionError: A ``codebase_version`` other than v3.*, v2.1, v2.0.
    """
    hub = hub_dataset_of(root)
    root = path_argument(root if hub is None else hub.root, "root").expanduser().resolve()
    info = parse_info(load_info_document(root), root)
    if info.major == 3:
        episodes = load_episodes_v3(root, info)
        tasks = load_tasks_v3(root)
    else:
        episodes = load_episodes_v2(root, info)
        tasks = load_tasks_v2(root)
    return Dataset(root, info, episodes, tasks)


def check_dataset(root: str | Path | Dataset) -> CheckReport:
    """Read every data file and decode the first and last frame of every episode of every camera.

    ``strands-labels info ROOT --check`` (docs/dataset.md, "Checking the files: info --check").

    Args:
        root: The dataset root, or an opened :class:`Dataset`.

    Returns:
        A :class:`~strands_robots.dataset.check.CheckReport` naming every damaged file.

    Raises:
        DatasetError: the metadata cannot be opened (see :func:`open_dataset`).
    """
    return check_files(root if isinstance(root, Dataset) else open_dataset(root))

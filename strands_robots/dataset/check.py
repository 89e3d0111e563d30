"""``check_dataset`` / :func:`check_files`: read every data file and decode the first and last
frame of every episode's videos, naming each file that fails once (docs/dataset.md,
"Checking the files: info --check"). Missing files are not repeated: they are problems already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.dataset.episodes import data_shards
from strands_robots.dataset.layout import Layout
from strands_robots.dataset.problems import shown_path
from strands_robots.errors import DatasetError


@dataclass(frozen=True)
class DamagedFile:
    """One file that cannot be read.

    Attributes:
        path: The file, relative to the dataset root when inside it.
        kind: ``"data"`` (a parquet) or ``"video"`` (an mp4 of ``camera``).
        error: The first error reading it.
        episodes: Episodes that use it (sorted).
        camera: The camera of a video, else None.
    """

    path: str
    kind: str
    error: str
    episodes: tuple[int, ...]
    camera: str | None = None


@dataclass
class CheckReport:
    """What :func:`check_dataset` read and what failed.

    Attributes:
        data_files: Data parquet files read.
        episodes: Episodes whose every camera's video was decoded at both ends (an episode
            with a missing or damaged video is not counted).
        cameras: Camera features checked.
        videos: Episode videos (one episode, one camera): episodes x cameras.
        videos_decoded: Episode videos decoded at both ends.
        videos_missing: Episode videos not checked because the file is missing (listed as
            ``missing_video`` problems) or the episode names none.
        damaged: The files that failed, data first, then videos by camera.
    """

    data_files: int = 0
    episodes: int = 0
    videos: int = 0
    videos_decoded: int = 0
    videos_missing: int = 0
    cameras: tuple[str, ...] = ()
    damaged: list[DamagedFile] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.damaged


def _data_files(ds: Layout) -> dict[Path, list[int]]:
    """Each data file the episodes use -> the episodes in it (every shard when none is named)."""
    table = ds.episodes
    if not table.data_located:
        everyone = [int(e) for e in table.indices]
        return {path: everyone for path in data_shards(ds.root)}
    files: dict[Path, list[int]] = {}
    for position, episode in enumerate(table.indices.tolist()):
        files.setdefault(table.data_path_at(position), []).append(int(episode))
    return files


def check_files(ds: Layout, *, on_episode: Callable[[int], None] | None = None) -> CheckReport:
    """Read every data file and decode the first and last frame of every episode of every camera.

    The rule of :func:`strands_robots.dataset.check_dataset` (which opens the dataset first).

    Args:
        ds: An open dataset.
        on_episode: Called with each episode index once its videos are checked (progress).

    Returns:
        A :class:`CheckReport`; ``report.damaged`` names every file that failed.
    """
    from strands_robots.dataset.video import decode_frames  # PyAV and Pillow: only when checking

    report = CheckReport(cameras=tuple(ds.camera_keys))
    bad_data: set[Path] = set()
    for path, episodes in _data_files(ds).items():
        if not path.is_file():
            continue  # a problem already (missing_data_file)
        report.data_files += 1
        try:
            pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            bad_data.add(path)
            report.damaged.append(DamagedFile(shown_path(ds, path), "data", str(exc), tuple(sorted(episodes))))
    videos: dict[tuple[str, str], DamagedFile] = {}
    for episode in ds.episodes:
        meta = ds.episodes[episode]
        decoded = 0
        report.videos += len(ds.camera_keys)
        for camera in ds.camera_keys:
            ref = meta.videos.get(camera)
            if ref is None or not ref.path.is_file():
                report.videos_missing += 1  # no video reference, or missing: listed as problems
                continue
            key = (camera, shown_path(ds, ref.path))
            if key in videos:
                videos[key] = replace(videos[key], episodes=(*videos[key].episodes, episode))
                continue
            try:
                decode_frames(ds, meta, camera, sorted({0, meta.length - 1}), max_side=32)
            except DatasetError as exc:
                if meta.data_located and meta.data_file in bad_data:
                    continue  # its timestamps are in the damaged parquet, named above
                videos[key] = DamagedFile(key[1], "video", str(exc), (episode,), camera)
            except Exception as exc:  # noqa: BLE001 - PyAV raises its own types for a broken file
                videos[key] = DamagedFile(key[1], "video", f"{type(exc).__name__}: {exc}", (episode,), camera)
            else:
                decoded += 1
        report.videos_decoded += decoded
        report.episodes += decoded == len(ds.camera_keys)
        if on_episode is not None:
            on_episode(episode)
    report.damaged.extend(sorted(videos.values(), key=lambda d: (d.camera or "", d.path)))
    return report

"""What the segment store needs from the dataset: an episode's length, tasks and fps (docs/segments.md, "Segments")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_robots.dataset.cache import cached_dataset_if_present as open_dataset_if_present
from strands_robots.errors import DatasetError
from strands_robots.segments.validate import check_length
from strands_robots.storage.episode_index import episode_index


@dataclass(frozen=True)
class EpisodeFacts:
    """Length (frames), task strings and dataset fps (None when unknown) of one episode."""

    episode_index: int
    length: int
    tasks: tuple[str, ...]
    fps: float | None


def _tasks(info: Any) -> tuple[str, ...]:
    tasks = getattr(info, "tasks", None) or ()
    return (tasks,) if isinstance(tasks, str) else tuple(str(t) for t in tasks)


def episode_facts(
    root: str | Path, episode: int, *, length: int | None = None, dataset: Any | None = None
) -> EpisodeFacts:
    """Length, tasks and fps of ``episode``.

    Args:
        root: Dataset root.
        episode: Real ``episode_index``.
        length: The episode length, needed only when ``root`` has no LeRobot metadata;
            with metadata it must agree with the dataset.
        dataset: An already opened dataset (saves re-opening it in a loop).

    Raises:
        EpisodeNotFoundError: the dataset has no such episode.
        DatasetError: no metadata and no ``length``, or a ``length`` that disagrees.
    """
    episode = episode_index(episode)
    if dataset is None and (dataset := open_dataset_if_present(root)) is None:
        if length is None:
            raise DatasetError(
                f"{root} has no meta/info.json, so the length of episode {episode} is unknown; point at the LeRobot "
                "dataset root or pass length=<frames>."
            )
        return EpisodeFacts(episode, check_length(length), (), None)
    info = dataset.episodes[episode]  # the dataset's EpisodeNotFoundError, naming its episodes
    real = int(info.length)
    if length is not None and int(length) != real:
        raise DatasetError(f"length={length} disagrees with the dataset: episode {episode} has {real} frames.")
    return EpisodeFacts(episode, real, _tasks(info), float(dataset.fps))

"""The dataset facts outcome labels depend on: which episodes exist and how long they are
(docs/outcomes.md, "Storage" and "Duration").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from strands_robots.dataset.cache import cached_dataset as open_episodes
from strands_robots.errors import EpisodeNotFoundError
from strands_robots.storage.episode_index import episode_index
from strands_robots.storage.mapping import index_ranges


def duration_s(dataset: Any, episode: int) -> float | None:
    """``length / fps`` of ``episode`` in seconds, or None when the fps is unknown."""
    fps = getattr(dataset, "fps", None)
    if not isinstance(fps, int | float) or isinstance(fps, bool) or fps <= 0:
        return None
    return dataset.episodes[episode].length / fps


def require_episodes(dataset: Any, episodes: Iterable[int]) -> None:
    """Refuse episodes the dataset does not have, listing all of them in one error.

    Raises:
        EpisodeNotFoundError: one or more episodes are not in ``dataset.episodes``.
    """
    missing = sorted({e for e in episodes if e not in dataset.episodes})
    if missing:
        have = sorted(dataset.episodes)
        shown = index_ranges(have[:2000]) + (" ..." if len(have) > 2000 else "")
        raise EpisodeNotFoundError(
            f"the dataset at {dataset.root} has no episode {index_ranges(missing)}; it has episode_index {shown}. "
            "Label an episode the dataset has (after a renumbering edit, run `strands-labels remap`)."
        )


__all__ = ["duration_s", "episode_index", "open_episodes", "require_episodes"]

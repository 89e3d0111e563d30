"""Per-episode dataset fingerprints that detect renumbered episodes.

LeRobot's ``delete_episodes`` renumbers the episodes after the deleted ones, so a label
keyed by ``episode_index`` would silently describe another episode. When the dataset's
metadata is present, :func:`record_deterministic_verdicts` stores a small fingerprint at
the record level (``length``; for v3.0 also the global ``index_range`` and ``tasks``);
readers compare it with the dataset and report mismatches as stale
(issue "episode_labels.json", Validation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def has_dataset_metadata(root: str | Path) -> bool:
    """True when ``root/meta/info.json`` exists."""
    return (Path(root) / "meta" / "info.json").is_file()


def open_dataset_if_present(root: str | Path) -> Any | None:
    """The opened dataset, or None when ``root`` has no LeRobot metadata."""
    if not has_dataset_metadata(root):
        return None
    from strands_robots.dataset import open_dataset

    return open_dataset(root)


def episode_fingerprint(dataset: Any, episode: int) -> dict[str, Any]:
    """``{"length": int[, "index_range": [from, to], "tasks": [str]]}`` of one episode.

    ``index_range`` and ``tasks`` are included for v3.0 datasets whose metadata has them.
    """
    info = dataset.episodes[episode]
    fingerprint: dict[str, Any] = {"length": int(info.length)}
    if str(getattr(dataset, "codebase_version", "") or "v3").startswith("v3"):
        index_range = getattr(info, "index_range", None)
        if index_range is not None:
            fingerprint["index_range"] = [int(index_range[0]), int(index_range[1])]
        tasks = getattr(info, "tasks", None)
        if tasks:
            fingerprint["tasks"] = [str(t) for t in tasks]
    return fingerprint


def stale_reason(dataset: Any, episode: int, stored: dict[str, Any] | None) -> str | None:
    """Why the stored fingerprint no longer matches the dataset, or None when it does.

    A record without a fingerprint (written by another tool, or without metadata) is
    never stale: there is nothing to compare.
    """
    if not stored:
        return None
    if episode not in dataset.episodes:
        return f"episode {episode} is no longer in the dataset"
    current = episode_fingerprint(dataset, episode)
    for key, value in stored.items():
        if key in current and current[key] != value:
            return f"{key} was {value!r} when labelled, now {current[key]!r}"
    return None

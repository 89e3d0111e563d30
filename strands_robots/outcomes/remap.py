"""Carry outcome labels across a dataset edit that renumbers episodes (the remap protocol).

LeRobot's ``delete_episodes`` renumbers the remaining episodes. ``strands-labels remap``
calls :func:`remap` of every label store with the same ``{old: new}`` mapping (issue 3).
For outcomes a ``remap`` line is appended to ``episode_outcomes.jsonl``: every labelled
episode in the mapping moves to its new index with its whole version history; a labelled
episode missing from the mapping was deleted and its labels are dropped from the index
(the lines stay in the file, so nothing is erased).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError
from strands_robots.outcomes.episodes import open_episodes, require_episodes
from strands_robots.outcomes.labels import utc_now
from strands_robots.outcomes.store import OutcomeStore, outcomes_path


def _index(value: Any, what: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < 0:
        raise LabelValidationError(
            f"remap {what} {value!r} is not an episode index; the mapping is {{old episode_index: new episode_index}}."
        )
    return int(value)


def normalise_mapping(mapping: dict[Any, Any]) -> dict[int, int]:
    """``{old: new}`` as ints (JSON string keys accepted); new indices must be distinct.

    Raises:
        LabelValidationError: not a mapping of non-negative integers, or two old episodes
            map to the same new one.
    """
    if not isinstance(mapping, dict):
        raise LabelValidationError(f"the remap mapping must be an object {{old: new}}, got {type(mapping).__name__}.")
    out = {_index(k, "key"): _index(v, "value") for k, v in mapping.items()}
    seen: dict[int, int] = {}
    for old, new in out.items():
        if new in seen:
            raise LabelValidationError(
                f"the remap mapping sends episodes {seen[new]} and {old} both to {new}; each new index may be used once."
            )
        seen[new] = old
    return out


def remap(
    root: str | Path, mapping: dict[Any, Any], *, labels_dir: str | Path | None = None, dry_run: bool = False
) -> int:
    """Move outcome labels to new episode indices after a renumbering dataset edit.

    Args:
        root: The dataset root (already renumbered). When it has LeRobot metadata, every
            new index that would receive labels must exist in it.
        mapping: ``{old_episode_index: new_episode_index}``; a labelled episode missing
            from it was deleted and its labels are dropped.
        labels_dir: Where ``episode_outcomes.jsonl`` lives (default ``root``).
        dry_run: Run every check and count, write nothing (``strands-labels remap`` checks
            every store this way before it writes any).

    Returns:
        The number of labelled episodes kept under their new index (as
        ``strands_robots.episode_labels.remap`` counts records).

    Raises:
        LabelValidationError: the mapping is malformed.
        EpisodeNotFoundError: a new index that would receive labels is not in the dataset.
    """
    normalised = normalise_mapping(mapping)
    store = OutcomeStore.open(outcomes_path(root, labels_dir))
    if not store.refresh().versions:
        return 0
    dataset = open_episodes(root) if (Path(root) / "meta" / "info.json").is_file() else None

    def build(store: OutcomeStore) -> tuple[list[dict[str, Any]], int]:
        labelled = set(store.versions)
        carried = {old: new for old, new in normalised.items() if old in labelled}
        if dataset is not None:
            require_episodes(dataset, carried.values())
        if len(carried) == len(labelled) and all(old == new for old, new in carried.items()):
            return [], len(carried)
        record = {"kind": "remap", "mapping": {str(o): n for o, n in sorted(carried.items())}, "at": utc_now()}
        return [record], len(carried)

    if dry_run:
        return build(store.refresh())[1]
    return store.write(build)

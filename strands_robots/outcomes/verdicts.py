"""Deterministic verdicts from human outcome labels (for real-robot datasets).

A real-robot dataset has no simulator to judge success (docs/outcomes.md,
"Recovery track and verdicts"). :func:`verdicts_from_outcomes` turns
each labelled episode's current outcome into the per-episode verdict dict that
``strands_robots.episode_labels.record_deterministic_verdicts`` takes, recorded with
``benchmark="outcomes"``. The mapping (docs/outcomes.md, "Recovery track and verdicts"):

================================  =========  =========
outcome                           success    failure
================================  =========  =========
expert_success, slow_success      true       false
novel_strategy,                   true       false
inefficient_strategy              true       false
mistake_and_recovery              true       false    (the actor recovers and completes the task)
partial_success                   false      false    (goal state not reached, no failure event)
intervention                      false      false    (a human corrected or ended the task)
failure, aborted, unsafe          false      true
================================  =========  =========

``steps`` is the episode's ``length`` in frames from the dataset metadata;
``cumulative_reward`` is the label's ``progress`` (0..1) when set, else 1.0 for a success
and 0.0 otherwise; ``seed`` is None (a recorded real-robot episode has no seed).
Unlabelled episodes get no verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.outcomes.episodes import open_episodes
from strands_robots.outcomes.labels import load_store

PathLike = str | Path

#: Outcomes whose task was completed (``success: true``).
SUCCESS_OUTCOMES: tuple[str, ...] = (
    "expert_success",
    "slow_success",
    "mistake_and_recovery",
    "novel_strategy",
    "inefficient_strategy",
)
#: Outcomes recorded as a failure event (``failure: true``).
FAILURE_OUTCOMES: tuple[str, ...] = ("failure", "aborted", "unsafe")
BENCHMARK = "outcomes"


def verdict_for(episode: int, outcome: str, progress: float | None, steps: int) -> dict[str, Any]:
    """The verdict dict of one episode (see the module's mapping table)."""
    success = outcome in SUCCESS_OUTCOMES
    return {
        "episode": episode,
        "success": success,
        "failure": outcome in FAILURE_OUTCOMES,
        "steps": steps,
        "cumulative_reward": float(progress) if progress is not None else (1.0 if success else 0.0),
        "seed": None,
    }


def verdicts_from_outcomes(root: PathLike, *, labels_dir: PathLike | None = None) -> list[dict[str, Any]]:
    """One verdict per labelled episode of the dataset, sorted by episode.

    Labels of episodes the dataset no longer has (a renumbering edit without
    ``strands-labels remap``) are skipped: their length is unknown.

    Raises:
        DatasetError: ``root`` is not a readable dataset (``steps`` comes from it).
    """
    dataset = open_episodes(root)
    store = load_store(root, labels_dir)
    out = []
    for episode in sorted(store.versions):
        if episode not in dataset.episodes:
            continue
        record = store.versions[episode][-1]
        out.append(verdict_for(episode, record["outcome"], record.get("progress"), dataset.episodes[episode].length))
    return out


def record_verdicts_from_outcomes(root: PathLike, *, labels_dir: PathLike | None = None) -> dict[str, Any]:
    """Record :func:`verdicts_from_outcomes` as the deterministic verdicts (``benchmark="outcomes"``).

    Returns:
        What ``record_deterministic_verdicts`` returns.

    Raises:
        LabelValidationError: no episode has an outcome label.
    """
    from strands_robots.episode_labels import record_deterministic_verdicts
    from strands_robots.errors import LabelValidationError

    verdicts = verdicts_from_outcomes(root, labels_dir=labels_dir)
    if not verdicts:
        raise LabelValidationError(
            "no episode has an outcome label; record outcomes first (strands-labels outcome set)."
        )
    return record_deterministic_verdicts(root, verdicts, benchmark=BENCHMARK, labels_dir=labels_dir)

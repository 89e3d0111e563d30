"""The mistake-and-recovery track, and deterministic verdicts from human outcome labels for
real-robot datasets (docs/outcomes.md, "Recovery track and verdicts": the track's outcomes,
the outcome -> success/failure table, ``steps``, ``cumulative_reward`` and ``seed``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.dataset.cache import cached_dataset
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
#: The outcomes of the recovery track (never ``unsafe``).
RECOVERY_OUTCOMES: tuple[str, ...] = ("mistake_and_recovery", "intervention")


def recovery_track(root: PathLike, *, labels_dir: PathLike | None = None) -> list[int]:
    """Sorted ``episode_index`` values whose current outcome is in :data:`RECOVERY_OUTCOMES`.

    Read each episode's subtasks and hand actions with ``get_outcome`` to see where the
    mistake and the recovery are.
    """
    store = load_store(root, labels_dir)
    return sorted(e for e, v in store.versions.items() if v[-1].get("outcome") in RECOVERY_OUTCOMES)


def verdicts_from_outcomes(root: PathLike, *, labels_dir: PathLike | None = None) -> list[dict[str, Any]]:
    """One verdict per labelled episode of the dataset, sorted by episode (docs/outcomes.md, "Recovery track
    and verdicts": the outcome -> success/failure table).

    Labels of episodes the dataset no longer has (a renumbering edit without
    ``strands-labels remap``) are skipped: their length is unknown.

    Raises:
        DatasetError: ``root`` is not a readable dataset (``steps`` comes from it).
    """
    dataset = cached_dataset(root)
    store = load_store(root, labels_dir)
    out = []
    for episode in sorted(e for e in store.versions if e in dataset.episodes):
        record = store.versions[episode][-1]
        success, progress = record["outcome"] in SUCCESS_OUTCOMES, record.get("progress")
        out.append(
            {
                "episode": episode,
                "success": success,
                "failure": record["outcome"] in FAILURE_OUTCOMES,
                "steps": dataset.episodes[episode].length,
                "cumulative_reward": float(progress) if progress is not None else (1.0 if success else 0.0),
                "seed": None,
            }
        )
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

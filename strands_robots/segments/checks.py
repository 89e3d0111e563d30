"""validate_episode: validate_segmentation with the length, task and base velocity read from the dataset
(docs/segments.md, "Validation and findings").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.segments.episodes import episode_facts, open_dataset_if_present
from strands_robots.segments.findings import Finding
from strands_robots.segments.motion import DEFAULT_THRESHOLD
from strands_robots.segments.navigate import episode_base_velocity
from strands_robots.segments.store import get_segmentation, infer_cohort, task_text
from strands_robots.segments.success import failed_episodes
from strands_robots.segments.validate import validate_segmentation


def validate_episode(
    root: str | Path,
    episode: int,
    segments: Any = None,
    *,
    cohort: str | None = None,
    base_velocity_feature: str | None = None,
    use_base_velocity: bool = True,
    base_speed_threshold: float = DEFAULT_THRESHOLD,
    labels_dir: str | Path | None = None,
    dataset: Any | None = None,
) -> list[Finding]:
    """Findings of ``segments`` (default: the saved segmentation) of ``episode``.

    Args:
        root: Dataset root.
        episode: Real ``episode_index``.
        segments: Segments to check; None checks the saved segmentation.
        cohort: Default: the saved record's cohort, else inferred from the labels.
        base_velocity_feature: Column of the base velocity; default auto-detected.
        use_base_velocity: False reports the navigate rule as skipped.
        base_speed_threshold: Speed below which the base counts as still.
        labels_dir: Where the sidecar lives (default ``root``).
        dataset: An already opened dataset.

    Raises:
        EpisodeNotFoundError: no such episode (or, with ``segments=None``, nothing saved).
        DatasetError: no metadata and nothing saved to take the length from.
    """
    record = get_segmentation(root, episode, labels_dir=labels_dir) if segments is None else {}
    segments = record.get("segments", segments)
    dataset = open_dataset_if_present(root) if dataset is None else dataset
    facts = episode_facts(root, episode, length=record.get("length") if dataset is None else None, dataset=dataset)
    velocity = None
    if dataset is not None and use_base_velocity:
        velocity = episode_base_velocity(root, facts.episode_index, base_velocity_feature, dataset=dataset)
    chosen = cohort or record.get("cohort") or infer_cohort(segments)
    return validate_segmentation(
        facts.length,
        segments,
        cohort=chosen,
        task=task_text(facts.tasks or record.get("tasks")),
        base_velocity=velocity,
        base_speed_threshold=base_speed_threshold,
        failure=failed_episodes(root, labels_dir=labels_dir).get(facts.episode_index),
    )

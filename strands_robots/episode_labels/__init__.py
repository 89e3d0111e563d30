"""``episode_labels.json``: verdicts, judge labels and human reviews beside a LeRobot dataset.

The API of docs/sidecar-format.md, docs/judge.md and docs/review.md, in the shape strands-robots
0.5.3 has (``record_deterministic_verdicts(root, ...)``, ``filter_episodes(root, ...)`` ...): each
function here takes a dataset root or Hub repo id (and ``labels_dir=``) and calls the
:class:`~strands_robots.labels.Labels` handle (``open_labels(root, labels_dir).episodes...``),
which resolves the root once. The file layout is the one 0.5.3 writes, so either
implementation reads the other's files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.episode_labels import remap as _remap_module  # noqa: F401  # loaded first: ``remap`` below names the function
from strands_robots.episode_labels.agreement import cohen_kappa
from strands_robots.episode_labels.filtering import StaleLabelsWarning
from strands_robots.episode_labels.vocab import (
    FAILURE_MODES,
    LABEL_SCHEMA_VERSION,
    QUALITY_GRADES,
    REVIEW_DECISIONS,
    SCHEMA_VERSION,
    SIDECAR_FILENAME,
)

Root = str | Path


def _open(root: Root, labels_dir: Root | None) -> Any:  # a Labels (typed Any: no upward import, even for mypy)
    from strands_robots.labels import open_labels  # the handle sits above the stores: loaded on use

    return open_labels(root, labels_dir)


def labels_path(root: Root, *, labels_dir: Root | None = None) -> Path:
    """``<root>/episode_labels.json``, or in ``labels_dir`` (``Labels.episodes.path``)."""
    return _open(root, labels_dir).episodes.path


def read_labels(root: Root, *, labels_dir: Root | None = None) -> dict[str, Any]:
    """The whole sidecar document, a copy (``Labels.episodes.read``; ``LabelsNotFoundError`` without one)."""
    return _open(root, labels_dir).episodes.read()


def record_deterministic_verdicts(
    root: Root, episodes: list[dict[str, Any]], *, benchmark: str = "", labels_dir: Root | None = None
) -> dict[str, Any]:
    """Record verdicts (``Labels.episodes.record_verdicts``; rules: ``episode_labels.verdicts``)."""
    return _open(root, labels_dir).episodes.record_verdicts(episodes, benchmark=benchmark)


def deterministic_verdict(root: Root, episode: int, *, labels_dir: Root | None = None) -> dict[str, Any]:
    """The recorded verdict of one episode (``Labels.episodes.verdict``)."""
    return _open(root, labels_dir).episodes.verdict(episode)


def verdicts_from_dataset(root: Root, column: str | None = None) -> list[dict[str, Any]]:
    """Verdicts from a per-frame success column (``Labels.episodes.verdicts_from_dataset``)."""
    return _open(root, None).episodes.verdicts_from_dataset(column)


def annotate_episode(root: Root, episode: int, *, labels_dir: Root | None = None, **judge: Any) -> dict[str, Any]:
    """Write one judge block (``Labels.episodes.annotate``; arguments: ``episode_labels.judge``)."""
    return _open(root, labels_dir).episodes.annotate(episode, **judge)


def annotate_episodes(root: Root, annotations: Any, *, labels_dir: Root | None = None) -> list[dict[str, Any]]:
    """Write many judge blocks in one commit (``Labels.episodes.annotate_many``)."""
    return _open(root, labels_dir).episodes.annotate_many(annotations)


def review_episode(root: Root, episode: int, *, labels_dir: Root | None = None, **review: Any) -> dict[str, Any]:
    """Record a human review (``Labels.episodes.review``; arguments: ``episode_labels.review``)."""
    return _open(root, labels_dir).episodes.review(episode, **review)


def list_disputes(
    root: Root, *, include_resolved: bool = False, labels_dir: Root | None = None
) -> list[dict[str, Any]]:
    """Episodes whose judge disputes the verdict (``Labels.episodes.disputes``)."""
    return _open(root, labels_dir).episodes.disputes(include_resolved=include_resolved)


def measure_agreement(
    root: Root, human_labels: dict[Any, dict[str, Any]] | None = None, *, labels_dir: Root | None = None
) -> dict[str, Any]:
    """Judge against a human holdout (``Labels.episodes.agreement``)."""
    return _open(root, labels_dir).episodes.agreement(human_labels)


def filter_episodes(root: Root, *, labels_dir: Root | None = None, **options: Any) -> list[int]:
    """The episodes worth training on (``Labels.filter``; rules: ``strands_robots.selection``)."""
    return _open(root, labels_dir).filter(**options)


def stale_episodes(root: Root, *, labels_dir: Root | None = None) -> dict[int, str]:
    """Labels recorded for another episode: ``{episode: reason}`` (``Labels.episodes.stale``)."""
    return _open(root, labels_dir).episodes.stale()


def check_readable(root: Root, *, labels_dir: Root | None = None) -> None:
    """Raise ``SidecarError`` now if the sidecar exists but cannot be used (``Labels.episodes.check_readable``)."""
    _open(root, labels_dir).episodes.check_readable()


def flush(root: Root, *, labels_dir: Root | None = None) -> bool:
    """Fold pending journal entries into the sidecar; True when there were some (``Labels.episodes.flush``)."""
    return _open(root, labels_dir).episodes.flush()


def remap(root: Root, mapping: Any, *, labels_dir: Root | None = None, **options: Any) -> int:
    """Renumber this sidecar alone (``Labels.episodes.remap``; all sidecars at once: ``Labels.remap``)."""
    return _open(root, labels_dir).episodes.remap(mapping, **options)


__all__ = [
    "FAILURE_MODES",
    "LABEL_SCHEMA_VERSION",
    "QUALITY_GRADES",
    "REVIEW_DECISIONS",
    "SCHEMA_VERSION",
    "SIDECAR_FILENAME",
    "StaleLabelsWarning",
    "annotate_episode",
    "annotate_episodes",
    "check_readable",
    "cohen_kappa",
    "deterministic_verdict",
    "filter_episodes",
    "flush",
    "labels_path",
    "list_disputes",
    "measure_agreement",
    "read_labels",
    "record_deterministic_verdicts",
    "remap",
    "review_episode",
    "stale_episodes",
    "verdicts_from_dataset",
]

"""``episode_labels.json``: verdicts, judge labels and human reviews beside a LeRobot dataset.

The API of docs/sidecar-format.md, docs/judge.md and docs/review.md. The file layout is the
one strands-robots 0.5.3 writes, so either implementation reads the other's files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.dataset.hub import accepts_repo_id
from strands_robots.episode_labels.agreement import cohen_kappa, measure_agreement
from strands_robots.episode_labels.document import labels_path, open_store, read_document
from strands_robots.episode_labels.filtering import StaleLabelsWarning, stale_episodes
from strands_robots.episode_labels.judge import annotate_episode, annotate_episodes
from strands_robots.episode_labels.remap import remap
from strands_robots.episode_labels.review import list_disputes, review_episode
from strands_robots.episode_labels.verdicts import (
    deterministic_verdict,
    record_deterministic_verdicts,
    verdicts_from_dataset,
)
from strands_robots.episode_labels.vocab import (
    FAILURE_MODES,
    LABEL_SCHEMA_VERSION,
    QUALITY_GRADES,
    REVIEW_DECISIONS,
    SCHEMA_VERSION,
    SIDECAR_FILENAME,
)


@accepts_repo_id
def read_labels(root: str | Path, *, labels_dir: str | Path | None = None) -> dict[str, Any]:
    """The whole sidecar document (a copy; journal entries merged in).

    Raises:
        FileNotFoundError: no sidecar yet.
        SidecarError: the file is foreign, truncated, a future version or not a file.
    """
    return read_document(root, labels_dir)


@accepts_repo_id
def check_readable(root: str | Path, *, labels_dir: str | Path | None = None) -> None:
    """Raise :class:`SidecarError` now if ``episode_labels.json`` exists but cannot be used.

    Used before multi-sidecar edits (``strands-labels remap``) so a refusal changes nothing.
    """
    store = open_store(root, labels_dir)
    if store.path.exists() or store.journal.exists():
        store.query(lambda document: None)


@accepts_repo_id
def flush(root: str | Path, *, labels_dir: str | Path | None = None) -> bool:
    """Fold pending journal entries into ``episode_labels.json`` so other tools see them.

    Returns:
        True when there was a journal to fold.
    """
    return open_store(root, labels_dir).flush()


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


def __getattr__(name: str) -> Any:
    # filter_episodes reads the outcome labels too (held-out episodes, outcome filters), so
    # it lives above both stores in strands_robots.selection (docs/architecture.md, "Layers")
    if name == "filter_episodes":
        from strands_robots.selection import filter_episodes

        return filter_episodes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

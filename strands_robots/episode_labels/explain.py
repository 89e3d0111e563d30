"""Why the label rules drop an episode: the first label rule one record fails.

The label store's half of ``explain_filter`` (:mod:`strands_robots.selection`, above both
stores, adds the outcome and held-out reasons). The reasons are checked in the order the
rules are listed in docs/outcomes.md and the README's "Filtering for training".
"""

from __future__ import annotations

from typing import Any

from strands_robots.episode_labels.review import dispute_open, effective_quality, effective_success
from strands_robots.episode_labels.vocab import QUALITY_RANK

#: The label rules' drop reasons, in the order they are checked.
LABEL_DROP_REASONS: tuple[str, ...] = ("unjudged", "no verdict", "failed", "overruled", "below quality", "disputed")


def label_drop_reason(
    record: dict[str, Any], *, require_success: bool, min_rank: int, exclude_disputed: bool
) -> str | None:
    """The first of :data:`LABEL_DROP_REASONS` that ``record`` fails, or None when it clears the bar.

    Args:
        record: One episode's record of ``episode_labels.json``.
        require_success: Keep only (effectively) successful episodes.
        min_rank: Lowest acceptable ``QUALITY_RANK`` value.
        exclude_disputed: Drop episodes with an open dispute.
    """
    if not record.get("judge"):
        return "unjudged"
    det = record.get("deterministic")
    if not isinstance(det, dict):
        return "no verdict"
    if require_success and not effective_success(record):
        return "failed" if not det.get("success") else "overruled"
    if QUALITY_RANK.get(effective_quality(record) or "", -1) < min_rank:
        return "below quality"
    if exclude_disputed and dispute_open(record):
        return "disputed"
    return None


def __getattr__(name: str) -> Any:
    if name in ("DROP_REASONS", "explain_filter"):
        from strands_robots import selection  # above this store: only on first use

        return getattr(selection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

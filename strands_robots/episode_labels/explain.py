"""Why :func:`filter_episodes` left each episode out: one reason per dropped episode.

The reasons are checked in the order the rules are listed in docs/outcomes.md and the
README's "Filtering for training"; an episode is counted under the first rule it fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import read_document
from strands_robots.episode_labels.filtering import HELD_OUT, _as_set, held_out_episodes
from strands_robots.episode_labels.review import dispute_open, effective_quality, effective_success
from strands_robots.episode_labels.stale import stale_episodes
from strands_robots.episode_labels.vocab import QUALITY_RANK

#: Drop reasons, in the order they are checked.
DROP_REASONS: tuple[str, ...] = (
    "unjudged",
    "no verdict",
    "failed",
    "overruled",
    "below quality",
    "disputed",
    "no outcome label",
    "outcome not selected",
    "held out",
    "stale",
)


def explain_filter(
    root: str | Path,
    *,
    require_success: bool = True,
    min_quality: str = "medium",
    exclude_disputed: bool = False,
    outcomes: str | list[str] | None = None,
    evaluation_membership: str | list[str] | None = None,
    include_held_out: bool = False,
    labels_dir: str | Path | None = None,
) -> dict[str, Any]:
    """The selection of :func:`filter_episodes` with the reason for every episode it drops.

    Takes the same arguments as :func:`filter_episodes` and applies the same rules.

    Returns:
        ``{"kept": [episode, ...], "dropped": {reason: [episode, ...]}}``; ``dropped`` has
        every key of :data:`DROP_REASONS` (empty lists included), episodes sorted.

    Raises:
        LabelValidationError: a flag is not a boolean or a value is unknown.
        FileNotFoundError: no sidecar yet.
    """
    require_success = checks.boolean(require_success, "require_success")
    exclude_disputed = checks.boolean(exclude_disputed, "exclude_disputed")
    include_held_out = checks.boolean(include_held_out, "include_held_out")
    minimum = QUALITY_RANK[checks.quality(min_quality, "min_quality")]
    from strands_robots.outcomes.model import EVALUATION_MEMBERSHIPS, OUTCOMES

    wanted_outcomes = _as_set(outcomes, "outcomes", OUTCOMES)
    wanted_membership = _as_set(evaluation_membership, "evaluation_membership", (*EVALUATION_MEMBERSHIPS, ""))
    records = read_document(root, labels_dir)["episodes"]
    current: dict[int, dict[str, Any]] = {}
    if wanted_outcomes is not None or wanted_membership is not None:
        from strands_robots.outcomes import current_outcomes

        current = current_outcomes(root, labels_dir=labels_dir)
    held_out = (
        set()
        if include_held_out or (wanted_membership and HELD_OUT in wanted_membership)
        else held_out_episodes(root, labels_dir=labels_dir)
    )
    fingerprinted = any(r.get("fingerprint") for r in records.values())
    stale = stale_episodes(root, labels_dir=labels_dir) if fingerprinted else {}

    def reason(episode: int, record: dict[str, Any]) -> str | None:
        if not record.get("judge"):
            return "unjudged"
        det = record.get("deterministic")
        if not isinstance(det, dict):
            return "no verdict"
        if require_success and not effective_success(record):
            return "failed" if not det.get("success") else "overruled"
        if QUALITY_RANK.get(effective_quality(record) or "", -1) < minimum:
            return "below quality"
        if exclude_disputed and dispute_open(record):
            return "disputed"
        if wanted_outcomes is not None or wanted_membership is not None:
            label = current.get(episode)
            if label is None:
                return "no outcome label"
            if wanted_outcomes is not None and label.get("outcome") not in wanted_outcomes:
                return "outcome not selected"
            if wanted_membership is not None and (label.get("evaluation_membership") or "") not in wanted_membership:
                return "outcome not selected"
        if episode in held_out:
            return "held out"
        if episode in stale:
            return "stale"
        return None

    kept: list[int] = []
    dropped: dict[str, list[int]] = {name: [] for name in DROP_REASONS}
    for key in sorted(records, key=int):
        why = reason(int(key), records[key])
        (kept if why is None else dropped[why]).append(int(key))
    return {"kept": kept, "dropped": dropped}

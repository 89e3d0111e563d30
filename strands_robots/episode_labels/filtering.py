"""Selecting episodes for training (docs/sidecar-format.md; reviews: docs/review.md)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from strands_robots.arguments import names_argument
from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import existing_store
from strands_robots.episode_labels.stale import stale_episodes
from strands_robots.episode_labels.vocab import QUALITY_RANK, did_you_mean
from strands_robots.errors import LabelsError, LabelValidationError


class StaleLabelsWarning(UserWarning):
    """Some labels describe an episode that has since changed (renumbered dataset)."""


def _as_set(value: Any, what: str, allowed: tuple[str, ...]) -> set[str] | None:
    """One value or a list, each from ``allowed`` (a typo must not empty a training set)."""
    if value is None:
        return None
    values = [value] if isinstance(value, str) else names_argument(value, what, f"[{allowed[0]!r}]") or []
    for v in values:
        if v not in allowed:
            raise LabelValidationError(
                f"{what} value {v!r} is not one of {', '.join(allowed)}.{did_you_mean(v, allowed)}"
            )
    return set(values)


#: The ``evaluation_membership`` that keeps an episode out of every training release.
HELD_OUT = "held_out_eval"


#: ``strands_robots.outcomes.store.SIDECAR_NAME``, named here so that a directory without
#: outcome labels costs one ``stat`` and no import of the outcomes package (it loads the reader).
OUTCOMES_SIDECAR = "episode_outcomes.jsonl"


def held_out_episodes(root: str | Path, *, labels_dir: str | Path | None = None) -> set[int]:
    """Episodes whose current outcome label is ``held_out_eval`` (empty without outcome labels)."""
    if not (Path(labels_dir if labels_dir is not None else root) / OUTCOMES_SIDECAR).exists():
        return set()
    from strands_robots.outcomes import current_outcomes

    current = current_outcomes(root, labels_dir=labels_dir)
    return {e for e, label in current.items() if label.get("evaluation_membership") == HELD_OUT}


def filter_episodes(
    root: str | Path,
    *,
    require_success: bool = True,
    min_quality: str = "medium",
    exclude_disputed: bool = False,
    outcomes: str | list[str] | None = None,
    evaluation_membership: str | list[str] | None = None,
    include_held_out: bool = False,
    labels_dir: str | Path | None = None,
) -> list[int]:
    """Episode indices that clear the bar, sorted.

    Rules (docs/sidecar-format.md, docs/review.md, docs/outcomes.md "Held-out splits"):

    - an episode with no judge block is always excluded;
    - ``require_success`` reads the deterministic verdict, flipped by a current human
      ``overrule_verdict`` review (the recorded verdict itself is untouched);
    - quality ranks ``low < medium < high``; a current review's ``quality`` replaces
      the judge's;
    - ``exclude_disputed`` drops disputes that no current review has decided;
    - ``outcomes`` / ``evaluation_membership`` keep only episodes whose current outcome
      label (``episode_outcomes.jsonl``) has one of the given values;
    - an episode whose current outcome label has ``evaluation_membership ==
      "held_out_eval"`` never enters a training selection (docs/outcomes.md, "Held-out
      episodes"): it is left out unless ``include_held_out`` is true or
      ``evaluation_membership`` asks for ``held_out_eval`` by name;
    - labels whose dataset fingerprint no longer matches (the dataset was renumbered)
      are excluded with a :class:`StaleLabelsWarning`.

    Files without reviews give exactly the other implementation's answer.

    Args:
        root: Dataset root.
        require_success: Keep only (effectively) successful episodes.
        min_quality: Lowest acceptable grade.
        exclude_disputed: Drop episodes with an open dispute.
        outcomes: Outcome value(s) to keep, e.g. ``["expert_success", "slow_success"]``.
        evaluation_membership: ``train``, ``held_out_eval``, ``none``, or ``""`` for labels
            whose membership is unset (or a list of these).
        include_held_out: Keep held-out evaluation episodes too (for evaluation, not training).
        labels_dir: Directory of the sidecars (default ``root``).

    Returns:
        Sorted real ``episode_index`` values.

    Raises:
        LabelValidationError: a flag is not a boolean or the grade is unknown.
        FileNotFoundError: no sidecar yet.
    """
    require_success = checks.boolean(require_success, "require_success")
    exclude_disputed = checks.boolean(exclude_disputed, "exclude_disputed")
    include_held_out = checks.boolean(include_held_out, "include_held_out")
    minimum = QUALITY_RANK[checks.quality(min_quality, "min_quality", context="filter_episodes")]
    wanted_outcomes = wanted_membership = None
    if outcomes is not None or evaluation_membership is not None:  # the outcomes store: only when asked
        from strands_robots.outcomes.model import EVALUATION_MEMBERSHIPS, OUTCOMES

        wanted_outcomes = _as_set(outcomes, "outcomes", OUTCOMES)
        wanted_membership = _as_set(evaluation_membership, "evaluation_membership", (*EVALUATION_MEMBERSHIPS, ""))

    from strands_robots.episode_labels.index import label_index  # numpy: only when filtering

    index = label_index(existing_store(root, labels_dir))
    chosen = index.select(require_success=require_success, min_rank=minimum, exclude_disputed=exclude_disputed).tolist()
    if wanted_outcomes is not None or wanted_membership is not None:
        chosen = _filter_by_outcomes(root, chosen, wanted_outcomes, wanted_membership, labels_dir)
    if not include_held_out and not (wanted_membership and HELD_OUT in wanted_membership):
        held_out = held_out_episodes(root, labels_dir=labels_dir)
        chosen = [i for i in chosen if i not in held_out]
    # only records that carry a fingerprint can be stale (files written by other tools have none)
    stale = stale_episodes(root, labels_dir=labels_dir) if index.with_fingerprint(chosen) else {}
    if stale:
        dropped = sorted(set(chosen) & set(stale))
        if dropped:
            warnings.warn(
                f"labels of episodes {dropped[:20]} are stale (the dataset changed since they were recorded, "
                f"e.g. {stale[dropped[0]]}); they were left out. Run `strands-labels remap` to carry labels "
                "across a dataset edit.",
                StaleLabelsWarning,
                stacklevel=2,
            )
            chosen = [i for i in chosen if i not in stale]
    return sorted(chosen)


def _filter_by_outcomes(
    root: str | Path,
    chosen: list[int],
    wanted_outcomes: set[str] | None,
    wanted_membership: set[str] | None,
    labels_dir: str | Path | None,
) -> list[int]:
    try:
        from strands_robots.outcomes import current_outcomes
    except ImportError as exc:  # pragma: no cover - the outcomes package ships with this one
        raise LabelsError(f"outcome filters need strands_robots.outcomes ({exc})") from exc
    current = current_outcomes(root, labels_dir=labels_dir)
    kept = []
    for index in chosen:
        label = current.get(index)
        if label is None:
            continue
        if wanted_outcomes is not None and label.get("outcome") not in wanted_outcomes:
            continue
        membership = (
            label.get("evaluation_membership") or ""
        )  # unset is not "none" (docs/outcomes.md, "Held-out splits")
        if wanted_membership is not None and membership not in wanted_membership:
            continue
        kept.append(index)
    return kept

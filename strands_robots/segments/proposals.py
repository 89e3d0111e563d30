"""Proposals and their review: another tool's segmentation awaits a person's decision, which is
final until a person changes it (docs/segments.md, "Proposals and review": the ``review`` stored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, check_choice
from strands_robots.segments.store import (
    SaveResult,
    StaleVersionError,
    get_segmentation,
    now_iso,
    query_records,
    save_segmentation,
    stored_segments,
)

#: What a person may decide about a proposal, and the ``review.decision`` each stores.
DECISIONS = {"accept": "accepted", "edit": "edited", "reject": "rejected"}
#: ``review_status`` values that a person approved (exported by ``export-lerobot``).
APPROVED = ("accepted", "edited", "annotation")


def review_status(record: dict[str, Any]) -> str:
    """``proposed`` (awaiting review), ``accepted``, ``edited``, ``rejected`` (a review's
    decision), ``annotation`` (a person's own segmentation) or ``import`` (a file import)."""
    review = record.get("review")
    if isinstance(review, dict) and review.get("decision") in DECISIONS.values():
        return str(review["decision"])
    if record.get("source") == "proposal":
        return "proposed"
    return str(record.get("source") or "annotation")


def is_approved(record: dict[str, Any]) -> bool:
    """True for a segmentation a person made or approved (accepted or edited a proposal)."""
    return review_status(record) in APPROVED


def spans(segments: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    """``(start, end, label)`` of stored segments, in order (what "unchanged" compares)."""
    return [(int(s["start"]), int(s["end"]), str(s["label"])) for s in segments]


def _proposal_summary(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "annotator": record.get("annotator"),
        "annotated_at": record.get("annotated_at"),
        "version": record.get("version"),
        "segments": [dict(s) for s in record["segments"]],
        **({"origin": record["origin"]} if record.get("origin") else {}),
    }


def _as_given(segments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored segments as save input: a segment with a template by its template, not its text."""
    return [{k: v for k, v in s.items() if k != "label" or not s.get("template_id")} for s in segments]


def review_proposal(
    root: str | Path,
    episode: int,
    *,
    reviewer: str,
    decision: str,
    segments: Any = None,
    note: str | None = None,
    cohort: str | None = None,
    version: int | None = None,
    labels_dir: str | Path | None = None,
) -> SaveResult:
    """Decide on the proposal that is ``episode``'s current segmentation.

    Args:
        root: Dataset root.
        episode: Real ``episode_index``.
        reviewer: Who decides (stored as the new version's ``annotator`` and ``review.by``).
        decision: ``accept`` (the proposal as it is), ``edit`` (``segments`` instead;
            stored as ``accepted`` when they equal the proposal's) or ``reject``.
        segments: The edited segments (``edit`` only), as :func:`save_segmentation` takes them.
        note: A note on the segmentation.
        cohort: Template set of the segments (default: the proposal's).
        version: The proposal version the reviewer saw; refused if another is current.
        labels_dir: Where the sidecar lives (default ``root``).

    Returns:
        The :class:`SaveResult` of the new version.

    Raises:
        LabelValidationError: an unknown decision, segments with ``accept``/``reject``,
            none with ``edit``, or no unreviewed proposal for the episode.
        StaleVersionError: the current version is not ``version`` (nothing written).
        SegmentationRefused: the edited segments have a blocking finding.
        EpisodeNotFoundError: nothing saved for the episode.
    """
    check_choice("decision", decision, tuple(DECISIONS))
    if (segments is None) == (decision == "edit"):
        raise LabelValidationError(
            "pass segments with decision='edit' only (accept and reject keep the proposal's segments)."
        )
    proposal = get_segmentation(root, episode, labels_dir=labels_dir)
    if review_status(proposal) != "proposed":
        raise LabelValidationError(
            f"episode {proposal['episode_index']}'s segmentation is not a proposal awaiting review "
            f"(it is {review_status(proposal)}, by {proposal.get('annotator')!r}); save a new segmentation "
            "instead (save_segmentation or the segment page)."
        )
    if version is not None and version != proposal.get("version"):
        raise StaleVersionError(
            f"episode {proposal['episode_index']}'s proposal is at version {proposal.get('version')}, not {version}: "
            "reload it and decide again; nothing was changed."
        )
    chosen = _as_given(proposal["segments"]) if segments is None else segments
    cohort = cohort or proposal.get("cohort")
    final = DECISIONS[decision]
    if decision == "edit" and _unchanged(chosen, cohort, proposal["segments"]):
        final = "accepted"
    return save_segmentation(
        root,
        proposal["episode_index"],
        chosen,
        annotator=reviewer,
        note=note,
        cohort=cohort,
        labels_dir=labels_dir,
        source="annotation",
        review={
            "decision": final,
            "by": reviewer.strip() if isinstance(reviewer, str) else reviewer,
            "at": now_iso(),
            "proposal": _proposal_summary(proposal),
        },
        expect_version=int(proposal.get("version", 0)),
    )


def _unchanged(segments: Any, cohort: str | None, proposed: list[dict[str, Any]]) -> bool:
    """True when ``segments`` store as the proposal's (the same frames and labels)."""
    try:
        return spans(stored_segments(segments, cohort)) == spans(proposed)
    except (LabelValidationError, KeyError, TypeError):
        return False  # not storable as given: the save reports why


def unreviewed_episodes(root: str | Path, *, labels_dir: str | Path | None = None) -> list[int]:
    """Episodes whose current segmentation is a proposal awaiting review, ascending."""
    return query_records(
        root,
        lambda records: sorted(int(k) for k, r in records.items() if review_status(r) == "proposed"),
        labels_dir=labels_dir,
    )


__all__ = ["APPROVED", "DECISIONS", "is_approved", "review_proposal", "review_status", "unreviewed_episodes"]

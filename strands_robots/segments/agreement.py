"""How far a tool's proposals are from what a person made of them: boundary error, label accuracy,
accepted unchanged and an evenly spaced baseline (docs/segments.md, "Agreement", defines each).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from strands_robots.segments.proposals import spans
from strands_robots.segments.store import query_records

#: ``(start, end, label)`` of each segment, in frames (:func:`~strands_robots.segments.proposals.spans`).
Spans = list[tuple[int, int, str]]


def boundary_errors(reviewed: Spans, proposed: Spans, length: int) -> list[int]:
    """Nearest-boundary distances (frames), both ways, of two segmentations of one episode."""
    ours, theirs = [s for s, _, _ in reviewed[1:]], [s for s, _, _ in proposed[1:]]
    out = [min(abs(b - p) for p in [0, *theirs, length]) for b in ours]
    out += [min(abs(p - b) for b in [0, *ours, length]) for p in theirs]
    return out


def _labels(segments: Spans, length: int) -> list[str]:
    frames = [""] * length
    for start, end, label in segments:
        key = " ".join(label.lower().split())
        for f in range(max(start, 0), min(end, length)):
            frames[f] = key
    return frames


def label_matches(reviewed: Spans, proposed: Spans, length: int) -> int:
    """Frames whose proposed label is the reviewed label."""
    return sum(a == b for a, b in zip(_labels(reviewed, length), _labels(proposed, length), strict=True))


def evenly_spaced(proposed: Spans, length: int) -> Spans:
    """The baseline: the proposal's labels over ``k`` evenly spaced segments."""
    k = len(proposed)
    cuts = [round(i * length / k) for i in range(k + 1)]
    return [(cuts[i], cuts[i + 1], proposed[i][2]) for i in range(k) if cuts[i + 1] > cuts[i]]


def _decision_of(record: dict[str, Any], proposed: str, reviewed: str) -> dict[str, Any] | None:
    """The newest version of ``record`` (current first, then history) that is ``reviewed``'s
    decision on a proposal of ``proposed``."""
    for version in [record, *record.get("history", [])]:
        review = version.get("review")
        if (
            isinstance(review, dict)
            and review.get("by") == reviewed
            and isinstance(review.get("proposal"), dict)
            and review["proposal"].get("annotator") == proposed
        ):
            return version
    return None


def _compare(reviewed: Spans, other: Spans, length: int) -> tuple[list[int], int, int]:
    """``(boundary errors, label matches, length)`` of one episode's two segmentations."""
    return boundary_errors(reviewed, other, length), label_matches(reviewed, other, length), length


def _summary(compared: list[tuple[list[int], int, int]]) -> dict[str, Any]:
    """The :func:`_compare` results of each episode, pooled."""
    errors = [e for episode_errors, _, _ in compared for e in episode_errors]
    matches = sum(m for _, m, _ in compared)
    frames = sum(length for _, _, length in compared)
    return {
        "boundary_error_mean": round(float(np.mean(errors)), 3) if errors else None,
        "boundary_error_p90": round(float(np.percentile(errors, 90)), 3) if errors else None,
        "boundaries": len(errors),
        "label_accuracy": round(matches / frames, 4) if frames else None,
    }


def agreement_of(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """The report of :func:`segments_agreement` from stored decisions (records with ``review``)."""
    measured = []  # _compare of each decision that kept segments: with its proposal, with the baseline
    episodes = []
    for version in decisions:
        review = version["review"]
        entry: dict[str, Any] = {"episode_index": version["episode_index"], "decision": review["decision"]}
        if review["decision"] != "rejected":
            length = int(version["length"])
            mine, proposal = spans(version["segments"]), spans(review["proposal"]["segments"])
            compared = _compare(mine, proposal, length)
            measured.append((compared, _compare(mine, evenly_spaced(proposal, length), length)))
            entry.update(boundary_errors=compared[0], label_accuracy=round(compared[1] / length, 4))
        episodes.append(entry)
    unchanged = sum(version["review"]["decision"] == "accepted" for version in decisions)
    return {
        "episodes": len(decisions),
        "measured_frames": sum(length for (_, _, length), _ in measured),
        **_summary([proposed for proposed, _ in measured]),
        "accepted_unchanged": round(unchanged / len(decisions), 4) if decisions else None,
        "baseline": _summary([baseline for _, baseline in measured]),
        "per_episode": episodes,
    }


def segments_agreement(
    root: str | Path, *, proposed: str, reviewed: str, labels_dir: str | Path | None = None
) -> dict[str, Any]:
    """Agreement of ``proposed``'s proposals with ``reviewed``'s decisions on them.

    Args:
        root: Dataset root.
        proposed: The proposals' annotator (``lerobot-annotate``, ``sarm-sparse``).
        reviewed: The person who reviewed them.
        labels_dir: Where the sidecar lives (default ``root``).

    Returns:
        ``{"episodes", "measured_frames", "boundary_error_mean", "boundary_error_p90",
        "boundaries", "label_accuracy", "accepted_unchanged", "baseline": {...},
        "per_episode": [...]}`` (frames; shares in ``[0, 1]``; None where nothing was
        measured). docs/segments.md, "Agreement", defines each measure.
    """

    def collect(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        versions = (_decision_of(records[key], proposed, reviewed) for key in sorted(records, key=int))
        return [{k: v for k, v in version.items() if k != "history"} for version in versions if version is not None]

    decisions = copy.deepcopy(query_records(root, collect, labels_dir=labels_dir))
    return {"proposed": proposed, "reviewed": reviewed, **agreement_of(decisions)}


__all__ = ["agreement_of", "boundary_errors", "evenly_spaced", "label_matches", "segments_agreement"]

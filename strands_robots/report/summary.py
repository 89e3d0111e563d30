"""Per-episode summaries of ``episode_labels.json`` and the counts the plots draw.

Pure Python over the sidecar document (no matplotlib, no dataset): the review page's
queue and the PNG report read the same numbers from here.

Terms:

- *verdict*: the simulator's ``deterministic.success`` as ``"success"`` / ``"failure"``;
  the *effective* verdict flips it when a current review overrules it
  (:func:`strands_robots.episode_labels.review.effective_success`).
- *quality*: the judge's grade, replaced by a current review's grade
  (:func:`~strands_robots.episode_labels.review.effective_quality`).
- *failure_mode*: the judge's, replaced by a current review's when that review carries a
  grade or a failure mode (the rule ``measure_agreement`` uses for review holdouts).
- *dispute*: ``"open"`` (a judge opinion contradicts the verdict and no current review
  upheld or overruled it), ``"resolved"`` or ``None`` (no dispute).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from strands_robots.episode_labels.review import (
    dispute_open,
    effective_quality,
    effective_success,
    human_grade,
    review_is_current,
)
from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES

#: Verdict classes, in plot order.
VERDICTS: tuple[str, ...] = ("success", "failure")
#: How an absent value (no judge grade, no failure mode) is spelled in counts and filters.
NONE = "none"
#: Failure-mode classes in plot order: the vocabulary, then ``none``.
FAILURE_MODE_CLASSES: tuple[str, ...] = (*FAILURE_MODES, NONE)


def _verdict(success: bool | None) -> str | None:
    if success is None:
        return None
    return "success" if success else "failure"


def effective_failure_mode(record: Mapping[str, Any]) -> str | None:
    """The failure mode a human has the last word on.

    The human grade (:func:`~strands_robots.episode_labels.review.human_grade`: a review
    that carries ``quality`` or ``failure_mode``; ``failure_mode=None`` with a quality
    means "none observed") replaces the judge's failure mode, otherwise the judge's stands.
    """
    grade = human_grade(dict(record))
    if grade is not None:
        return grade["failure_mode"]
    judge = record.get("judge")
    return judge.get("failure_mode") if judge else None


def dispute_status(record: Mapping[str, Any]) -> str | None:
    """``"open"``, ``"resolved"`` or None (the judge does not dispute the verdict)."""
    judge = record.get("judge")
    if not judge or not judge.get("disputes_verdict") or "deterministic" not in record:
        return None
    return "open" if dispute_open(dict(record)) else "resolved"


def summarize(episode: int, record: Mapping[str, Any] | None) -> dict[str, Any]:
    """One episode's row: what the queue lists and the plots count.

    Args:
        episode: Real ``episode_index``.
        record: Its sidecar record, or None when the sidecar has none.

    Returns:
        ``episode``, ``verdict`` and ``effective_verdict`` (``success``/``failure``/None),
        ``overruled`` (bool), ``opinion`` (the judge's ``success_opinion`` as a verdict
        word or None), ``judge_quality``, ``judge_failure_mode``, ``quality`` and
        ``failure_mode`` (effective), ``dispute`` (``open``/``resolved``/None),
        ``review`` (current decision or None), ``review_outdated`` (bool),
        ``labeled_at`` and ``reviewed_at`` (epoch seconds or None).
    """
    record = dict(record or {})
    det = record.get("deterministic")
    judge = record.get("judge") or {}
    current = review_is_current(record)
    review = record.get("review") if isinstance(record.get("review"), dict) else None
    verdict = _verdict(det["success"]) if det else None
    effective = _verdict(effective_success(record)) if det else None
    return {
        "episode": int(episode),
        "verdict": verdict,
        "effective_verdict": effective,
        "overruled": verdict is not None and effective != verdict,
        "opinion": _verdict(judge.get("success_opinion")),
        "judge_quality": judge.get("quality"),
        "judge_failure_mode": judge.get("failure_mode"),
        "quality": effective_quality(record),
        "failure_mode": effective_failure_mode(record),
        "dispute": dispute_status(record),
        "review": review.get("decision") if current and review else None,
        "review_outdated": bool(review) and not current,
        "labeled_at": judge.get("labeled_at"),
        "reviewed_at": review.get("reviewed_at") if current and review else None,
    }


def summaries(document: Mapping[str, Any], episodes: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """Rows of :func:`summarize`, sorted by episode.

    Args:
        document: A loaded ``episode_labels.json`` document.
        episodes: The episodes to list (e.g. the dataset's); default every episode
            the document has a record for.
    """
    records = document.get("episodes", {})
    chosen = sorted(int(k) for k in records) if episodes is None else sorted(int(e) for e in episodes)
    return [summarize(e, records.get(str(e))) for e in chosen]


def counts_by_verdict(rows: Iterable[Mapping[str, Any]], field: str) -> dict[str, dict[str, int]]:
    """``counts[verdict][class]`` of ``field`` (``"quality"`` or ``"failure_mode"``).

    Only rows with a verdict and a judge grade are counted (an ungraded episode has no
    quality or failure mode to report). The verdict is the effective one (human
    overrules applied); an absent failure mode counts as ``none``.

    Raises:
        ValueError: ``field`` is not ``quality`` or ``failure_mode``.
    """
    classes = {"quality": QUALITY_GRADES, "failure_mode": FAILURE_MODE_CLASSES}.get(field)
    if classes is None:
        raise ValueError(f"field must be 'quality' or 'failure_mode', got {field!r}")
    counts = {v: dict.fromkeys(classes, 0) for v in VERDICTS}
    for row in rows:
        verdict = row.get("effective_verdict")
        if verdict is None or row.get("quality") is None:
            continue
        value = row.get(field)
        counts[verdict][NONE if value is None else value] += 1
    return counts


def dispute_timeline(document: Mapping[str, Any]) -> dict[str, list[float]]:
    """When disputes were raised and decided, for the "disputes over time" plot.

    Returns:
        ``raised``: sorted ``judge.labeled_at`` of every record whose judge currently
        disputes the verdict; ``resolved``: sorted ``review.reviewed_at`` of those whose
        dispute a current review decided (upheld or overruled). Epoch seconds; records
        without a time are left out. Open disputes at time ``t`` =
        ``#raised <= t - #resolved <= t``.
    """
    raised: list[float] = []
    resolved: list[float] = []
    for record in document.get("episodes", {}).values():
        if dispute_status(record) is None:
            continue
        at = record["judge"].get("labeled_at")
        if isinstance(at, int | float):
            raised.append(float(at))
        if dispute_status(record) == "resolved":
            done = record["review"].get("reviewed_at")
            if isinstance(done, int | float):
                resolved.append(float(done))
    return {"raised": sorted(raised), "resolved": sorted(resolved)}

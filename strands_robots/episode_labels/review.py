"""The review block: a human's word on a disputed verdict (docs/sidecar-format.md, "review").

Written only by :func:`review_episode`, at the record level beside ``deterministic`` and
``judge``. Decisions: ``uphold_verdict`` (the simulator was right), ``overrule_verdict``
(its predicate was wrong for this episode: filters use the flipped success; the recorded
verdict is never changed) and ``grade_only`` (a human grade, no dispute decided). A review
records the digests of the verdict and judge label it saw (``verdict_seen``, ``judge_seen``);
when it stops counting: docs/review.md, "When a review stops counting" (:func:`review_is_current`,
:func:`human_grade`). Re-reviewing moves the previous review to ``review_history``.
"""

from __future__ import annotations

import getpass
import hashlib
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import open_store, query_document
from strands_robots.episode_labels.verdicts import not_in_dataset, verdict_record
from strands_robots.episode_labels.vocab import REVIEW_DECISIONS
from strands_robots.errors import LabelValidationError, ReviewConflictError, VerdictNotFoundError
from strands_robots.storage.codec import dump_line, json_copy
from strands_robots.storage.record_store import Change


def default_reviewer() -> str:
    """Who reviews when no name is given: the login name (``reviewer`` when the system has none).

    The review page and ``strands-labels resolve`` both use it (docs/review.md).
    """
    try:
        return getpass.getuser() or "reviewer"
    except (KeyError, OSError):
        return "reviewer"


def block_digest(block: dict[str, Any] | None) -> str | None:
    """Short sha256 of a block's canonical JSON (None for no block)."""
    if block is None:
        return None
    return hashlib.sha256(dump_line(block)).hexdigest()[:16]


def review_is_current(record: dict[str, Any]) -> bool:
    """True when the record's review still applies in full.

    An ``uphold_verdict`` / ``overrule_verdict`` decision is about the verdict: it applies
    while the verdict is the one the reviewer saw (``verdict_seen``), whatever the judge
    writes later. A ``grade_only`` review is a human grade of the episode itself: it
    applies until the human reviews again.
    """
    review = record.get("review")
    if not isinstance(review, dict):
        return False
    if review.get("decision") == "grade_only":
        return True
    return review.get("verdict_seen") == block_digest(record.get("deterministic"))


def human_grade(record: dict[str, Any]) -> dict[str, Any] | None:
    """The human grade of the latest review, or None when it grades nothing.

    A review that carries ``quality`` or ``failure_mode`` grades the episode's execution;
    the grade stands until the human reviews again (a new verdict outdates a decision,
    not a grade). A graded review with ``failure_mode=None`` means "none observed".

    Returns:
        ``{"quality": ..., "failure_mode": ...}`` (either may be None), or None.
    """
    review = record.get("review")
    if not isinstance(review, dict):
        return None
    if review.get("quality") is None and review.get("failure_mode") is None:
        return None
    return {"quality": review.get("quality"), "failure_mode": review.get("failure_mode")}


def effective_success(record: dict[str, Any]) -> bool | None:
    """The success filters use: the verdict, flipped by a current ``overrule_verdict``."""
    det = record.get("deterministic")
    if det is None:
        return None
    success = bool(det["success"])
    if review_is_current(record) and record["review"].get("decision") == "overrule_verdict":
        return not success
    return success


def effective_quality(record: dict[str, Any]) -> str | None:
    """The judge's quality, replaced by the human grade's ``quality`` when it has one."""
    grade = human_grade(record)
    if grade is not None and grade["quality"] is not None:
        return grade["quality"]
    judge = record.get("judge")
    return judge.get("quality") if judge else None


def dispute_open(record: dict[str, Any]) -> bool:
    """A judge dispute with no current uphold/overrule decision."""
    judge = record.get("judge")
    if not judge or not judge.get("disputes_verdict"):
        return False
    return not (
        review_is_current(record) and record["review"].get("decision") in ("uphold_verdict", "overrule_verdict")
    )


STAMP_KEYS = ("verdict_seen", "judge_seen")


def block_stamps(record: Mapping[str, Any]) -> dict[str, str | None]:
    """``{"verdict_seen": ..., "judge_seen": ...}``: the stamps of a record's two blocks now."""
    return {"verdict_seen": block_digest(record.get("deterministic")), "judge_seen": block_digest(record.get("judge"))}


def _stamps(seen: Any) -> dict[str, str | None]:
    if not isinstance(seen, Mapping) or set(seen) != set(STAMP_KEYS):
        raise LabelValidationError(
            f"seen must be a mapping of exactly {', '.join(STAMP_KEYS)} (the stamps the reviewer was shown), got "
            f"{seen!r}."
        )
    for name in STAMP_KEYS:
        value = seen[name]
        if value is not None and not (isinstance(value, str) and re.fullmatch("[0-9a-f]{16}", value)):
            raise LabelValidationError(f"seen[{name!r}] must be 16 hex digits or None, got {value!r}.")
    return {name: seen[name] for name in STAMP_KEYS}


def review_episode(
    root: str | Path,
    episode: int,
    *,
    decision: str,
    reviewer: str,
    note: str = "",
    quality: str | None = None,
    failure_mode: str | None = None,
    labels_dir: str | Path | None = None,
    seen: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Record a human review of one episode.

    Args:
        root: Dataset root.
        episode: Real ``episode_index``; it must have a deterministic verdict.
        decision: ``uphold_verdict`` | ``overrule_verdict`` | ``grade_only``.
        reviewer: Who reviewed (non-empty, at most 255 characters).
        note: Free text, at most 10,000 characters.
        quality: Optional human grade of the execution (``low``/``medium``/``high``).
        failure_mode: Optional failure mode from the same vocabulary. When ``quality`` is
            given, ``failure_mode=None`` is read as "no failure mode observed".
        labels_dir: Directory of the sidecar (default ``root``).
        seen: The stamps of the blocks the reviewer was shown, ``{"verdict_seen": ...,
            "judge_seen": ...}`` (:func:`block_digest` of the ``deterministic`` and ``judge``
            blocks, as the review page's episode endpoint gives them). When given, the
            review is stored only if the record still holds those blocks. Default: the
            record's blocks at the time of the write are the ones recorded as seen.

    Returns:
        A copy of the record after the write.

    Raises:
        LabelValidationError: a value outside its domain, an empty reviewer, a ``seen``
            that is not a mapping of those two keys to 16-hex stamps or None, or
            uphold/overrule on an episode whose judge does not dispute the verdict.
        VerdictNotFoundError: no deterministic verdict for the episode.
        ReviewConflictError: ``seen`` no longer matches the record (nothing stored).
    """
    index = checks.episode_index(episode)
    checks.one_of(decision, "decision", REVIEW_DECISIONS)
    reviewer = checks.name(reviewer, "reviewer")
    if not reviewer.strip():
        raise LabelValidationError("reviewer must name who reviewed (e.g. your user name).")
    fields = {
        "decision": decision,
        "reviewer": reviewer,
        "note": checks.text(note, "note"),
        "quality": None if quality is None else checks.quality(quality, context="review_episode"),
        "failure_mode": checks.failure_mode(failure_mode, context="review_episode"),
    }

    shown = None if seen is None else _stamps(seen)

    def mutate(document: dict[str, Any]) -> tuple[Change, dict[str, Any]]:
        key = str(index)
        record = verdict_record(document["episodes"], index, "review")
        now = block_stamps(record)
        changed = [name for name in STAMP_KEYS if shown is not None and now[name] != shown[name]]
        if changed:
            what = " and ".join({"verdict_seen": "verdict", "judge_seen": "judge label"}[name] for name in changed)
            raise ReviewConflictError(
                f"episode {index}: the {what} changed since the page showed it (someone re-judged or re-recorded "
                "it); nothing was saved. Reload the episode, look again, then decide."
            )
        from strands_robots.episode_labels.judge import refuse_stale

        refuse_stale(root, {index: record.get("fingerprint")})  # a review of another recording: docs/editing.md
        if decision != "grade_only" and not (record.get("judge") or {}).get("disputes_verdict"):
            raise LabelValidationError(
                f"episode {index} has no disputed verdict, so there is nothing to {decision.split('_')[0]}; "
                "use decision='grade_only' to grade it (CLI: --decision grade_only --quality ...)."
            )
        record = dict(record)
        if "review" in record:
            record["review_history"] = [*record.get("review_history", []), record["review"]]
        record["review"] = {**fields, "reviewed_at": time.time(), **now}
        document["episodes"][key] = record
        return Change(records=[key], fields=[]), json_copy(record)

    try:
        return open_store(root, labels_dir).update(mutate)
    except VerdictNotFoundError as exc:
        raise not_in_dataset(root, [index], "review") or exc from None


def list_disputes(
    root: str | Path, *, include_resolved: bool = False, labels_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """Episodes whose judge disputes the verdict, sorted by episode.

    Args:
        root: Dataset root.
        include_resolved: Also list disputes a current review has decided.
        labels_dir: Directory of the sidecar (default ``root``).

    Returns:
        Dicts with ``episode``, ``success`` (the verdict), ``success_opinion``,
        ``quality``, ``failure_mode``, ``note``, ``model``, ``resolved`` (bool) and
        ``review`` (the current review or None; an outdated one is reported as
        ``outdated_review``).
    """
    checks.boolean(include_resolved, "include_resolved")

    def collect(document: dict[str, Any]) -> list[dict[str, Any]]:
        rows = []
        for key, record in document["episodes"].items():
            judge = record.get("judge")
            if not judge or not judge.get("disputes_verdict") or "deterministic" not in record:
                continue
            resolved = not dispute_open(record)
            if resolved and not include_resolved:
                continue
            current = review_is_current(record)
            rows.append(
                {
                    "episode": int(key),
                    "success": record["deterministic"]["success"],
                    "success_opinion": judge.get("success_opinion"),
                    "quality": judge.get("quality"),
                    "failure_mode": judge.get("failure_mode"),
                    "note": judge.get("note", ""),
                    "model": judge.get("model", ""),
                    "resolved": resolved,
                    "review": json_copy(record["review"]) if current else None,
                    "outdated_review": json_copy(record.get("review")) if not current else None,
                }
            )
        return sorted(rows, key=lambda r: r["episode"])

    return query_document(root, collect, labels_dir)

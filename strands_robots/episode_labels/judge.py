"""The judge block: a judge's grade on top of the verdict (docs/judge.md, "Doctrine: two stages, one precedence").

:func:`annotate_episode` (and its batch form :func:`annotate_episodes`) is the only
writer of the judge block. It refuses an episode with no deterministic verdict and
never touches the deterministic block: a ``success_opinion`` that contradicts the
verdict is recorded as ``disputes_verdict: true`` for a human to review.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from strands_robots.arguments import items_argument
from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import existing_store
from strands_robots.episode_labels.verdicts import not_in_dataset, verdict_record
from strands_robots.episode_labels.vocab import QUALITY_GRADES
from strands_robots.errors import LabelValidationError, StaleRecordError, VerdictNotFoundError, did_you_mean
from strands_robots.storage.codec import json_copy
from strands_robots.storage.record_store import Change

_ANNOTATION_KEYS = {"quality", "failure_mode", "note", "success_opinion", "model", "keep_history"}


def _judge_fields(given: Mapping[str, Any], context: str) -> dict[str, Any]:
    """The checked judge fields of ``given`` (``quality`` required; the others default as in :func:`annotate_episode`)."""
    success_opinion = given.get("success_opinion")
    return {
        "quality": checks.quality(given["quality"], context=context),
        "failure_mode": checks.failure_mode(given.get("failure_mode"), context=context),
        "note": checks.text(given.get("note", ""), "note"),
        "success_opinion": None if success_opinion is None else checks.boolean(success_opinion, "success_opinion"),
        "model": checks.name(given.get("model", ""), "model"),
    }


def _apply(records: dict[str, Any], index: int, fields: dict[str, Any], keep_history: bool, now: float) -> None:
    record = verdict_record(records, index, "annotate")
    success = record["deterministic"]["success"]
    opinion = fields["success_opinion"]
    judge = {
        **fields,
        "disputes_verdict": opinion is not None and opinion != success,
        "labeled_at": now,
    }
    record = dict(record)  # the deterministic block object is shared, never modified
    if keep_history and "judge" in record:
        record["judge_history"] = [*record.get("judge_history", []), record["judge"]]
    record["judge"] = judge
    records[str(index)] = record


def judge_block(
    record: Mapping[str, Any] | None,
    episode: int,
    *,
    quality: str,
    failure_mode: str | None = None,
    note: str = "",
    success_opinion: bool | None = None,
    model: str = "",
) -> dict[str, Any]:
    """The judge block :func:`annotate_episode` would write on ``record``, without writing it.

    Used where the write happens elsewhere (a distributed judge's worker returns the
    block and its driver writes it with :func:`annotate_episodes`). Same checks, same
    ``disputes_verdict`` rule; ``labeled_at`` is now (the writer sets its own).

    Args:
        record: The episode's current record (``deterministic`` required), or None.
        episode: Real ``episode_index``.
        quality, failure_mode, note, success_opinion, model: As :func:`annotate_episode`.

    Returns:
        The judge block (a new dict).

    Raises:
        LabelValidationError: a value outside its domain.
        VerdictNotFoundError: ``record`` has no deterministic verdict.
    """
    index = checks.episode_index(episode)
    fields = _judge_fields(locals(), "annotate_episode")  # the judge keywords as passed
    records = {str(index): dict(record)} if record else {}
    _apply(records, index, fields, False, time.time())
    return dict(records[str(index)]["judge"])


def annotate_episode(
    root: str | Path,
    episode: int,
    *,
    quality: str,
    failure_mode: str | None = None,
    note: str = "",
    success_opinion: bool | None = None,
    model: str = "",
    labels_dir: str | Path | None = None,
    keep_history: bool = False,
) -> dict[str, Any]:
    """Write the judge block of one episode (durable when it returns).

    ``disputes_verdict = success_opinion is not None and success_opinion !=
    deterministic success``; ``labeled_at`` is ``time.time()`` (epoch seconds), as the
    other strands_robots implementation writes it. The deterministic block stays
    byte-identical.

    Args:
        root: Dataset root.
        episode: Real ``episode_index``.
        quality: ``low`` | ``medium`` | ``high``: grades the execution, not the outcome.
        failure_mode: None or one of ``FAILURE_MODES``.
        note: Free text, at most 10,000 characters.
        success_opinion: The judge's own read of success, or None.
        model: Who labelled (model id, ``human``), at most 255 characters.
        labels_dir: Directory of the sidecar (default ``root``).
        keep_history: Append the replaced judge block to the record's ``judge_history``.

    Returns:
        A copy of the episode's record after the write.

    Raises:
        LabelValidationError: a value outside its domain.
        VerdictNotFoundError: the episode has no deterministic verdict (a ``KeyError`` and
            a ``ValueError``).
        LabelsNotFoundError: no sidecar yet (a ``FileNotFoundError``).
        RootNotFoundError: ``root`` (or ``labels_dir``) is not an existing directory (a
            ``FileNotFoundError`` and a ``ValueError``).
        SidecarError, StorageError: unusable file or failed write; nothing changed.
    """
    index = checks.episode_index(episode)
    keep_history = checks.boolean(keep_history, "keep_history")
    fields = _judge_fields(locals(), "annotate_episode")  # the judge keywords as passed
    return _write(root, labels_dir, [(index, fields, keep_history)])[0]


def annotate_episodes(
    root: str | Path,
    annotations: Iterable[Mapping[str, Any]],
    *,
    labels_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Write many judge blocks in one locked group commit (one fsync).

    Args:
        root: Dataset root.
        annotations: Dicts with ``episode`` and the keywords of :func:`annotate_episode`
            (``quality`` required).
        labels_dir: Directory of the sidecar (default ``root``).

    Returns:
        Copies of the written records, in input order.

    Raises:
        Same as :func:`annotate_episode`; all-or-nothing: one bad item stores none.
    """
    items: list[tuple[int, dict[str, Any], bool]] = []
    example = "[{'episode': 0, 'quality': 'high'}]"
    for position, item in enumerate(items_argument(annotations, "annotations", example)):
        if not isinstance(item, Mapping) or "episode" not in item:
            raise LabelValidationError(
                f"annotations[{position}] must be a dict with 'episode' and 'quality', got {type(item).__name__}; "
                f"pass e.g. {example}."
            )
        unknown = sorted(str(k) for k in set(item) - _ANNOTATION_KEYS - {"episode"})
        if unknown:
            hints = "".join(did_you_mean(k, tuple(sorted(_ANNOTATION_KEYS))) for k in unknown)
            raise LabelValidationError(
                f"annotations[{position}] has unknown keys {unknown}.{hints} The keys are 'episode' and "
                f"{', '.join(repr(k) for k in sorted(_ANNOTATION_KEYS))}."
            )
        if "quality" not in item:
            raise LabelValidationError(
                f"annotations[{position}] has no 'quality'; add one of {', '.join(QUALITY_GRADES)} "
                f"(e.g. {{'episode': {item['episode']!r}, 'quality': 'medium'}})."
            )
        index = checks.episode_index(item["episode"], f"annotations[{position}].episode")
        fields = _judge_fields(item, f"annotate_episodes: annotations[{position}]")
        keep = checks.boolean(item.get("keep_history", False), f"annotations[{position}].keep_history")
        items.append((index, fields, keep))
    if not items:
        return []
    return _write(root, labels_dir, items)


def refuse_stale(root: str | Path, fingerprints: Mapping[int, Any]) -> None:
    """Refuse a label on a record whose stored fingerprint contradicts the dataset: it describes
    another recording until the sidecars are remapped (``docs/editing.md``).

    Raises:
        StaleRecordError: one or more such episodes (listed with the reason), naming ``remap``.
    """
    from strands_robots.fingerprint.stale import stale_records

    stale = stale_records(root, dict(fingerprints))
    if stale:
        shown = "; ".join(f"episode {e}: {why}" for e, why in list(stale.items())[:10])
        raise StaleRecordError(
            f"the stored record of {len(stale)} episode(s) no longer matches the dataset ({shown}): the dataset was "
            f"edited and its labels not carried. Nothing was written; run `strands-labels remap {root} --from "
            "OLD_ROOT` (the dataset before the edit, e.g. ROOT_old; docs/editing.md), then label again."
        )


def _write(
    root: str | Path, labels_dir: str | Path | None, items: list[tuple[int, dict[str, Any], bool]]
) -> list[dict[str, Any]]:
    """Store checked ``(episode_index, judge fields, keep_history)`` items in one locked write."""
    store = existing_store(root, labels_dir)

    def mutate(document: dict[str, Any]) -> tuple[Change, list[dict[str, Any]]]:
        records = document["episodes"]
        for index, _fields, _keep in items:  # check every episode before changing any
            verdict_record(records, index, "annotate")
        refuse_stale(root, {index: records[str(index)].get("fingerprint") for index, _f, _k in items})
        now = time.time()
        for index, fields, keep in items:
            _apply(records, index, fields, keep, now)
        result = [json_copy(records[str(index)]) for index, _f, _k in items]
        return Change(records=[str(index) for index, _f, _k in items], fields=[]), result

    try:
        return store.update(mutate)
    except VerdictNotFoundError as exc:
        raise not_in_dataset(root, [index for index, _f, _k in items], "annotate") or exc from None

"""Write and read outcome labels: one current label per episode, every version kept
(docs/outcomes.md, "The label", "Writes replace" and "Reading and filtering").
"""

from __future__ import annotations

import getpass
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from strands_robots.dataset.cache import cached_dataset
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, did_you_mean
from strands_robots.outcomes.model import (
    AUTONOMY_LEVELS,
    EVALUATION_MEMBERSHIPS,
    HANDS,
    OUTCOMES,
    SOURCES,
    WRITABLE_FIELDS,
    validate_label,
)
from strands_robots.outcomes.store import OutcomeStore, open_outcome_store, paused_gc
from strands_robots.storage.episode_index import episode_index
from strands_robots.storage.mapping import index_ranges
from strands_robots.storage.side_files import remap_hint

PathLike = str | Path


class OutcomeNotFoundError(EpisodeNotFoundError):
    """The episode has no outcome label (docs/outcomes.md: reading a sequence without one is 404)."""


def utc_now() -> str:
    """The current time as the document writes it: ``2026-09-30T17:42:11.204000Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_labeled_by() -> str | None:
    """The login name of the writing user, or None when the system has none."""
    try:
        return getpass.getuser() or None
    except (KeyError, OSError):
        return None


def public_label(episode: int, record: dict[str, Any], *, is_current: bool) -> dict[str, Any]:
    """A fresh copy of a stored version in the document's field order.

    ``episode_index`` takes the place of the document's ``sequence_uid`` (episodes are
    keyed by their real index); ``is_current`` is derived (the newest version).
    """
    label: dict[str, Any] = {
        "uid": record.get("uid"),
        "episode_index": episode,
        "version": record.get("version"),
        "is_current": is_current,
    }
    for key in WRITABLE_FIELDS:
        value = record.get(key)
        if key == "subtasks":
            value = [dict(s) for s in value or []]
        elif key == "hand_actions":
            value = {hand: [dict(a) for a in (value or {}).get(hand, [])] for hand in HANDS}
        elif key in ("leakage_groups", "source_metadata"):
            value = dict(value or {})
        label[key] = value
    label["created_at"] = record.get("created_at")
    label["updated_at"] = record.get("updated_at")
    return label


def new_version(
    episode: int, label: dict[str, Any], previous: dict[str, Any] | None, fingerprint: Any, *, min_version: int = 1
) -> dict[str, Any]:
    """The stored line of a new version of ``episode`` (``label`` already validated; ``fingerprint``:
    the episode's, of the recording the label describes)."""
    now = utc_now()
    version = max((previous["version"] + 1) if previous else 1, min_version)
    return {
        "kind": "outcome",
        "uid": str(uuid.uuid4()),
        "episode_index": episode,
        "version": version,
        **label,
        "created_at": now,
        "updated_at": now,
        "fingerprint": fingerprint,
    }


def load_store(root: PathLike, labels_dir: PathLike | None) -> OutcomeStore:
    """The up-to-date outcome store of a dataset (no dataset access)."""
    return open_outcome_store(root, labels_dir).refresh()


def check_readable(root: PathLike, *, labels_dir: PathLike | None = None) -> None:
    """Raise now if ``episode_outcomes.jsonl`` exists but cannot be used (foreign, newer, corrupt)."""
    load_store(root, labels_dir)


def set_outcome(root: PathLike, episode: int, *, labels_dir: PathLike | None = None, **fields: Any) -> dict[str, Any]:
    """Record a new version of the outcome label of ``episode``; it becomes the current label.

    Args:
        root: The LeRobot dataset root.
        episode: The real ``episode_index``; the dataset must have it.
        labels_dir: Where ``episode_outcomes.jsonl`` lives (default ``root``).
        **fields: The label (see ``strands_robots.outcomes.model.WRITABLE_FIELDS``):
            ``outcome`` is required; every other field omitted is stored unset.
            ``labeled_by`` defaults to the login name of the current user.

    Returns:
        The stored version (as :func:`get_outcome` returns it).

    Raises:
        LabelValidationError: ``episode`` is not a non-negative integer.
        EpisodeNotFoundError: the dataset has no such episode.
        OutcomeValidationError: the label breaks rules (all are listed); nothing stored.
        SidecarError, StorageError: the sidecar is foreign or cannot be written.
    """
    episode = episode_index(episode)
    dataset = cached_dataset(root)
    if episode not in dataset.episodes:
        have = index_ranges(dataset.episodes.indices[:2000].tolist()) + (" ..." if len(dataset.episodes) > 2000 else "")
        raise EpisodeNotFoundError(
            f"the dataset at {dataset.root} has no episode {episode}; it has episode_index {have}. Label an "
            "episode the dataset has (after a renumbering edit, run `strands-labels remap`)."
        )
    fields.setdefault("labeled_by", default_labeled_by())
    label = validate_label(fields, duration=dataset.episodes[episode].length / dataset.fps)

    from strands_robots.fingerprint.columns import fingerprinter_of

    fingerprint = fingerprinter_of(dataset)(episode)

    def build(store: OutcomeStore) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        record = new_version(episode, label, store.current(episode), fingerprint)
        return [record], record

    record = open_outcome_store(root, labels_dir).write(build)
    return public_label(episode, record, is_current=True)


def get_outcome(root: PathLike, episode: int, *, labels_dir: PathLike | None = None) -> dict[str, Any]:
    """The current outcome label of ``episode``.

    Raises:
        OutcomeNotFoundError: the episode has no outcome label.
        SidecarError: the sidecar is foreign, newer or corrupt.
    """
    episode = episode_index(episode)
    store = load_store(root, labels_dir)
    record = store.current(episode)
    if record is None:
        moved = remap_hint(store.path.parent)  # an in-place edit moved the sidecars to ROOT_old
        raise OutcomeNotFoundError(
            f"episode {episode} has no outcome label in {store.path}."
            + (moved or f" Record one with set_outcome(root, {episode}, outcome=...) or `strands-labels outcome set`.")
        )
    return public_label(episode, record, is_current=True)


def outcome_history(root: PathLike, episode: int, *, labels_dir: PathLike | None = None) -> list[dict[str, Any]]:
    """Every version of the outcome label of ``episode``, newest first.

    Raises:
        OutcomeNotFoundError: the episode has never had an outcome label.
    """
    episode = episode_index(episode)
    store = load_store(root, labels_dir)
    versions = store.versions.get(episode)
    if not versions:
        raise OutcomeNotFoundError(
            f"episode {episode} has no outcome label history in {store.path}." + remap_hint(store.path.parent)
        )
    last = len(versions) - 1
    return [public_label(episode, r, is_current=i == last) for i, r in reversed(list(enumerate(versions)))]


def current_outcomes(root: PathLike, *, labels_dir: PathLike | None = None) -> dict[int, dict[str, Any]]:
    """Every episode's current outcome label: ``{episode_index: label}``, sorted by episode.

    Linear in the number of labelled episodes; the file is parsed once per process and
    only appended lines are read afterwards.
    """
    store = load_store(root, labels_dir)
    with paused_gc():
        return {e: public_label(e, store.versions[e][-1], is_current=True) for e in sorted(store.versions)}


def _filter_values(name: str, value: Any, allowed: tuple[str, ...]) -> set[str] | None:
    if value is None:
        return None
    values = [value] if isinstance(value, str) else value
    if isinstance(values, Iterable):
        values = list(values)
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise LabelValidationError(f"filter {name}={value!r} must be one value or a non-empty list of values.")
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise LabelValidationError(
            f"filter {name} has unknown value(s) {', '.join(map(repr, unknown))}; "
            f"use one or more of {', '.join(repr(a) for a in allowed)}."
            + "".join(did_you_mean(v, allowed) for v in unknown)
        )
    return set(values)


def list_outcomes(
    root: PathLike,
    *,
    outcome: str | Iterable[str] | None = None,
    evaluation_membership: str | Iterable[str] | None = None,
    source: str | Iterable[str] | None = None,
    autonomy_level: str | Iterable[str] | None = None,
    model_version: str | None = None,
    labels_dir: PathLike | None = None,
) -> list[dict[str, Any]]:
    """Current labels matching every given filter, sorted by ``episode_index``.

    docs/outcomes.md, "Reading and filtering": ``outcome``,
    ``evaluation_membership``, ``source`` and ``autonomy_level`` each take one value or a
    list and match any of them; ``evaluation_membership=""`` / ``autonomy_level=""``
    match labels where the field is not set; ``model_version`` matches exactly one version.

    Raises:
        LabelValidationError: a filter value is unknown (the document's ``400``).
    """
    filters = {
        "outcome": _filter_values("outcome", outcome, OUTCOMES),
        "evaluation_membership": _filter_values(
            "evaluation_membership", evaluation_membership, (*EVALUATION_MEMBERSHIPS, "")
        ),
        "source": _filter_values("source", source, SOURCES),
        "autonomy_level": _filter_values("autonomy_level", autonomy_level, (*AUTONOMY_LEVELS, "")),
    }
    if model_version is not None and not isinstance(model_version, str):
        raise LabelValidationError(
            f"filter model_version={model_version!r} must be one exact version string (it matches exactly one)."
        )
    filters["model_version"] = None if model_version is None else {model_version}
    active = {k: v for k, v in filters.items() if v is not None}
    store = load_store(root, labels_dir)
    out = []
    with paused_gc():
        for episode in sorted(store.versions):
            record = store.versions[episode][-1]
            if all(record.get(k) in v for k, v in active.items()):
                out.append(public_label(episode, record, is_current=True))
    return out


def stale_outcomes(root: PathLike, *, labels_dir: PathLike | None = None) -> dict[int, str]:
    """Episodes whose current outcome label was recorded for another episode: ``{episode: reason}``
    (``length``, ``tasks`` or ``content`` of the stored fingerprint differ; docs/outcomes.md, "Storage").
    Empty without the dataset's metadata.
    """
    from strands_robots.fingerprint import IDENTITY_KEYS, stale_records

    store = load_store(root, labels_dir)
    stored = {episode: versions[-1].get("fingerprint") for episode, versions in store.versions.items() if versions}
    return stale_records(root, stored, IDENTITY_KEYS)

"""Per-episode dataset fingerprints that detect renumbered episodes (every label store).

LeRobot's ``delete_episodes`` renumbers the episodes after the deleted ones (and makes
the global index ranges contiguous again), so a label keyed by ``episode_index`` would
silently describe another episode. When the dataset's metadata is present, the label
writers store a small fingerprint with the record:
``length`` (frames); for v3.0 the global ``index_range`` and ``tasks``; and ``content``,
a digest of the episode's stored ``observation.state`` mean (v3.0 and v2.1 episodes
statistics), which tells apart episodes of equal length; and ``meta``, the digest of the
metadata files the values were read from, so a check of unchanged metadata need not
read them. Readers compare it with the
dataset and report mismatches as stale (``docs/sidecar-format.md``, ``fingerprint``).

:meth:`Fingerprinter.token` reduces an episode to a short digest of what survives a
renumbering (``length``, ``tasks``, ``content``); a labels directory remembers a sample of
them to recognise its dataset (``strands_robots.storage.labels_dir``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelsError

#: Fingerprint keys that must match for a remapped record to describe its new episode
#: (``index_range`` legitimately moves when earlier episodes are deleted).
IDENTITY_KEYS = ("length", "tasks", "content")
#: The order fingerprint keys are compared in, by every label store: what identifies the
#: recording first, then where it sits; a stale reason names the first key that differs.
REASON_ORDER = (*IDENTITY_KEYS, "index_range")
#: The fingerprint key naming the dataset metadata its values were read from
#: (:func:`strands_robots.dataset.signature.metadata_digest`): while the metadata has
#: that digest the values match without being read. Never compared as a value.
META_KEY = "meta"


def reason_order(stored: dict[str, Any]) -> list[tuple[str, Any]]:
    """``stored``'s items in :data:`REASON_ORDER`, then any other keys sorted
    (:data:`META_KEY` left out: it is not a value of the episode)."""
    known = [(key, stored[key]) for key in REASON_ORDER if key in stored]
    return known + sorted((k, v) for k, v in stored.items() if k not in REASON_ORDER and k != META_KEY)


def has_dataset_metadata(root: str | Path) -> bool:
    """True when ``root/meta/info.json`` exists."""
    return (Path(root) / "meta" / "info.json").is_file()


def open_dataset_if_present(root: str | Path) -> Any | None:
    """The opened dataset, or None when ``root`` has no LeRobot metadata."""
    if not has_dataset_metadata(root):
        return None  # a labels-only directory: the dataset reader (pyarrow, PyAV) is not even imported
    from strands_robots.dataset.cache import cached_dataset_if_present

    return cached_dataset_if_present(root)


def open_dataset_for_checks(root: str | Path) -> Any | None:
    """Like :func:`open_dataset_if_present`, but a dataset the reader refuses (an unknown
    version, broken metadata, broken episode statistics) gives None with a warning: labels
    stay readable.

    The dataset's :class:`Fingerprinter` is built here (and kept: :func:`fingerprinter_of`
    hands it out), so statistics the reader refuses are refused with the same warning."""
    try:
        dataset = open_dataset_if_present(root)
        if dataset is not None:
            fingerprinter_of(dataset)
        return dataset
    except LabelsError as exc:
        warnings.warn(
            f"the dataset at {root} could not be opened ({exc}); labels were not checked for staleness",
            stacklevel=3,
        )
        return None


class Fingerprinter:
    """Fingerprints of one opened dataset (its fingerprint columns read once)."""

    def __init__(self, dataset: Any) -> None:
        from strands_robots.dataset.fingerprints import dataset_fingerprints  # pyarrow: only when checking

        self.dataset = dataset
        self.columns = dataset_fingerprints(dataset)

    def __call__(self, episode: int) -> dict[str, Any]:
        """``{"length", ["index_range", "tasks"], ["content"]}`` of one episode.

        Raises:
            EpisodeNotFoundError: the dataset has no such episode.
        """
        positions, found = self.columns.positions([episode])
        if not found[0]:
            self.dataset.episodes[episode]  # raises the reader's EpisodeNotFoundError
        return self.columns.record(int(positions[0]))

    def many(self, episodes: list[int]) -> dict[int, dict[str, Any]]:
        """``{episode: fingerprint}`` of ``episodes`` (all must be in the dataset)."""
        positions, found = self.columns.positions(episodes)
        if not found.all():
            self.dataset.episodes[episodes[int(found.argmin())]]  # raises EpisodeNotFoundError
        return dict(zip(episodes, self.columns.records(positions), strict=True))

    def token(self, episode: int) -> str:
        """16 hex digits of the sha256 of the episode's ``IDENTITY_KEYS`` (what a renumbering keeps)."""
        import hashlib
        import json

        fingerprint = self(episode)
        kept = {k: fingerprint[k] for k in IDENTITY_KEYS if k in fingerprint}
        return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]

    def stale_reason(
        self, episode: int, stored: dict[str, Any] | None, keys: tuple[str, ...] | None = None
    ) -> str | None:
        """Why ``stored`` no longer matches the dataset's episode, or None when it does.

        A record without a fingerprint (written by another tool, or without metadata) is
        never stale: there is nothing to compare. Only keys present on both sides count,
        in :data:`REASON_ORDER`, so every store names the same first mismatch
        (``docs/sidecar-format.md``, ``fingerprint``).
        """
        if not stored or not isinstance(stored, dict):
            return None
        if episode not in self.dataset.episodes:
            return f"episode {episode} is no longer in the dataset"
        current = self(episode)
        for key, value in reason_order(stored):
            if (keys is None or key in keys) and key in current and current[key] != value:
                return f"{key} was {value!r} when labelled, now {current[key]!r}"
        return None


_fingerprinters: Any = None


def fingerprinter_of(dataset: Any) -> Fingerprinter:
    """The :class:`Fingerprinter` of an opened dataset, made once per dataset object (the
    reader's cache hands out one object while the metadata is unchanged)."""
    global _fingerprinters
    import weakref

    if _fingerprinters is None:
        _fingerprinters = weakref.WeakKeyDictionary()
    try:
        found = _fingerprinters.get(dataset)
    except TypeError:  # not weak-referenceable: no cache
        return Fingerprinter(dataset)
    if found is None:
        found = _fingerprinters[dataset] = Fingerprinter(dataset)
    return found


def stale_records(
    root: str | Path, fingerprints: dict[int, Any], keys: tuple[str, ...] | None = None
) -> dict[int, str]:
    """``{episode: reason}`` for the stored fingerprints that no longer match the dataset.

    The one stale rule of every label store (``docs/sidecar-format.md``, ``fingerprint``):
    a record without a fingerprint is never stale; only keys present on both sides count.

    Args:
        root: The dataset root; without ``meta/`` (or a dataset the reader refuses, with a
            warning) nothing is stale.
        fingerprints: ``{episode_index: stored fingerprint or None}``.
        keys: Compare only these keys (e.g. :data:`IDENTITY_KEYS` for append-only stores
            whose stored fingerprints are not refreshed by a remap).
    """
    if not any(fingerprints.values()) or not has_dataset_metadata(root):
        return {}
    dataset = open_dataset_for_checks(root)
    if dataset is None:
        return {}
    fingerprinter = fingerprinter_of(dataset)
    stale = {}
    for episode, stored in fingerprints.items():
        reason = fingerprinter.stale_reason(episode, stored, keys)
        if reason:
            stale[episode] = reason
    return stale

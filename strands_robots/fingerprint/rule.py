"""The fingerprint rule: which stored fingerprint no longer matches its episode, and why.

A record's fingerprint (``length``; for v3.0 ``index_range`` and ``tasks``; ``content``; and
``meta``, the metadata digest of :mod:`.digest`) is compared with the dataset's: a record
without one is never stale, only keys present on both sides count, and the reason names
the first key that differs in :data:`REASON_ORDER` (docs/sidecar-format.md, ``fingerprint``).
"""

from __future__ import annotations

from typing import Any

#: Fingerprint keys that must match for a remapped record to describe its new episode
#: (``index_range`` legitimately moves when earlier episodes are deleted).
IDENTITY_KEYS = ("length", "tasks", "content")
#: The order fingerprint keys are compared in, by every label store: what identifies the
#: recording first, then where it sits; a stale reason names the first key that differs.
REASON_ORDER = (*IDENTITY_KEYS, "index_range")
#: The fingerprint key naming the dataset metadata its values were read from
#: (:func:`strands_robots.fingerprint.digest.metadata_digest`): while the metadata has
#: that digest the values match without being read. Never compared as a value.
META_KEY = "meta"


def stale_reason(
    stored: Any, current: dict[str, Any] | None, episode: int, keys: tuple[str, ...] | None = None
) -> str | None:
    """Why ``stored`` (a record's fingerprint) no longer matches ``current`` (the dataset's
    fingerprint of ``episode``, None when the dataset has no such episode), or None when it does.

    Args:
        stored: The record's stored fingerprint; anything but a non-empty dict is never stale.
        current: The dataset's fingerprint of the episode now.
        episode: The record's ``episode_index`` (named in the reason).
        keys: Compare only these keys (e.g. :data:`IDENTITY_KEYS`).
    """
    if not stored or not isinstance(stored, dict):
        return None
    if current is None:
        return f"episode {episode} is no longer in the dataset"
    others = sorted(k for k in stored if k not in REASON_ORDER and k != META_KEY)  # meta is no value of the episode
    for key in [k for k in REASON_ORDER if k in stored] + others:
        if (keys is None or key in keys) and key in current and current[key] != stored[key]:
            return f"{key} was {stored[key]!r} when labelled, now {current[key]!r}"
    return None

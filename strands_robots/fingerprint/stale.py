"""The stale check of every label store: which stored fingerprints no longer match the dataset.

The rule is :func:`strands_robots.fingerprint.rule.stale_reason`, applied record by record
against the dataset's fingerprint columns (:mod:`.columns`). One shortcut: when every
stored fingerprint names the digest of the current metadata files (``meta``,
:mod:`.digest`), none can be stale and the dataset is not opened. It saves the dataset
read (pyarrow's import and the episodes metadata) on every check of labels written from
unchanged metadata: ``benchmarks/compare_upstream.py``, row ``filter_meta_cold``
(docs/performance.md, "Guard rails").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from strands_robots.dataset.cache import has_dataset_metadata
from strands_robots.fingerprint.digest import metadata_digest
from strands_robots.fingerprint.rule import META_KEY, stale_reason


def meta_of(fingerprint: Any) -> Any:
    """The metadata digest a stored fingerprint names (``fingerprint.meta``), or None."""
    return fingerprint.get(META_KEY) if isinstance(fingerprint, dict) else None


def common_meta(metas: Iterable[Any]) -> str | None:
    """The one metadata digest that fingerprints name (their ``meta`` values), or None when
    they name several, or one names none."""
    distinct = set(metas)
    if len(distinct) != 1:
        return None
    (meta,) = distinct
    return meta if isinstance(meta, str) else None


def read_from_current_metadata(root: str | Path, meta: str | None) -> bool:
    """True when ``meta`` (the one digest some fingerprints name, see :func:`common_meta`) is
    the digest of ``root``'s metadata now: those fingerprints cannot be stale.

    ``meta`` vouches for the values beside it as a writer left them; an edit of a
    fingerprint drops it (``docs/sidecar-format.md``, ``fingerprint``)."""
    return meta is not None and meta == metadata_digest(root)


def stale_records(
    root: str | Path, fingerprints: Mapping[int, Any], keys: tuple[str, ...] | None = None
) -> dict[int, str]:
    """``{episode: reason}`` for the stored fingerprints that no longer match the dataset, sorted.

    The one stale check of every label store (``docs/sidecar-format.md``, ``fingerprint``).

    Args:
        root: The dataset root; without ``meta/`` (or a dataset the reader refuses, with a
            warning) nothing is stale.
        fingerprints: ``{episode_index: stored fingerprint or None}``.
        keys: Compare only these keys (e.g. :data:`strands_robots.fingerprint.IDENTITY_KEYS`
            for append-only stores whose stored fingerprints are not refreshed by a remap).
    """
    stored = {episode: fp for episode, fp in fingerprints.items() if fp and isinstance(fp, dict)}
    if not stored or not has_dataset_metadata(root):
        return {}
    if read_from_current_metadata(root, common_meta(meta_of(fp) for fp in stored.values())):
        return {}
    from strands_robots.fingerprint.columns import fingerprinter_of, open_dataset_for_checks  # pyarrow

    dataset = open_dataset_for_checks(root)
    if dataset is None:
        return {}
    current = fingerprinter_of(dataset).present(list(stored))
    stale = {}
    for episode, fingerprint in stored.items():
        now = current.get(episode)
        if fingerprint == now:  # the common case: nothing differs, so no key can
            continue
        reason = stale_reason(fingerprint, now, episode, keys)
        if reason:
            stale[episode] = reason
    return dict(sorted(stale.items()))

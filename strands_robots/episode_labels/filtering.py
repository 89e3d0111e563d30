"""Selecting episodes by their labels (docs/sidecar-format.md; reviews: docs/review.md).

The label store's half of selection: the judge, verdict, quality, dispute and stale rules
over ``episode_labels.json``. Selection that also reads the outcome labels (outcome
filters, held-out evaluation episodes) is :mod:`strands_robots.selection`, above both
stores; ``filter_episodes`` is that module's, reachable here under its 0.5.3 name.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import strands_robots
from strands_robots.episode_labels import checks
from strands_robots.episode_labels.document import existing_store
from strands_robots.episode_labels.vocab import QUALITY_RANK
from strands_robots.fingerprint.digest import has_dataset_metadata
from strands_robots.fingerprint.stale import read_from_current_metadata, stale_records

#: This package's directory: a warning is shown at the first caller outside it.
PACKAGE = os.path.dirname(strands_robots.__file__) + os.sep


class StaleLabelsWarning(UserWarning):
    """Some labels describe an episode that has since changed (renumbered dataset)."""


def select_episodes(
    root: str | Path,
    *,
    require_success: bool = True,
    min_quality: str = "medium",
    exclude_disputed: bool = False,
    labels_dir: str | Path | None = None,
    narrow: Callable[[list[int]], list[int]] | None = None,
) -> list[int]:
    """Episode indices that clear the label bar, sorted.

    Rules (docs/sidecar-format.md, docs/review.md):

    - an episode with no judge block is always excluded;
    - ``require_success`` reads the deterministic verdict, flipped by a current human
      ``overrule_verdict`` review (the recorded verdict itself is untouched);
    - quality ranks ``low < medium < high``; a current review's ``quality`` replaces
      the judge's;
    - ``exclude_disputed`` drops disputes that no current review has decided;
    - ``narrow`` (a caller above the label stores: the outcome filter and the held-out
      rule of :mod:`strands_robots.selection`) keeps a subset of the episodes chosen so
      far, before the stale check;
    - labels whose dataset fingerprint no longer matches (the dataset was renumbered)
      are excluded with a :class:`StaleLabelsWarning`.

    Args:
        root: Dataset root.
        require_success: Keep only (effectively) successful episodes.
        min_quality: Lowest acceptable grade.
        exclude_disputed: Drop episodes with an open dispute.
        labels_dir: Directory of the sidecars (default ``root``).
        narrow: Optional ``chosen -> subset`` applied before the stale check.

    Returns:
        Sorted real ``episode_index`` values.

    Raises:
        LabelValidationError: a flag is not a boolean or the grade is unknown.
        LabelsNotFoundError: no sidecar yet.
        RootNotFoundError: ``root`` or ``labels_dir`` is not a directory.
    """
    require_success = checks.boolean(require_success, "require_success")
    exclude_disputed = checks.boolean(exclude_disputed, "exclude_disputed")
    minimum = QUALITY_RANK[checks.quality(min_quality, "min_quality", context="filter_episodes")]

    from strands_robots.episode_labels.filter_rule import label_index  # numpy

    index = label_index(existing_store(root, labels_dir))
    chosen = index.select(require_success=require_success, min_rank=minimum, exclude_disputed=exclude_disputed).tolist()
    if narrow is not None:
        chosen = narrow(chosen)
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
                skip_file_prefixes=(PACKAGE,),  # shown at the user's call
            )
            chosen = [i for i in chosen if i not in stale]
    return sorted(chosen)


def stale_episodes(root: str | Path, *, labels_dir: str | Path | None = None) -> dict[int, str]:
    """Episodes whose stored fingerprint no longer matches the dataset: ``{episode: reason}``, sorted.

    Empty when the dataset's metadata is absent (nothing to compare against), when no
    record carries a fingerprint (files other tools wrote), or when the reader cannot
    open the dataset (a warning says so). The rule: ``docs/sidecar-format.md``, ``fingerprint``.

    Raises:
        LabelsNotFoundError: no sidecar yet.
        SidecarError: the sidecar is not one this version reads.
    """
    if not has_dataset_metadata(root):
        return {}
    from strands_robots.episode_labels.filter_rule import label_index  # numpy

    store = existing_store(root, labels_dir)
    index = label_index(store)
    if not index.has_fingerprint.any() or read_from_current_metadata(root, index.fp_meta):
        return {}  # nothing to compare, or every fingerprint was read from this very metadata

    def fingerprints(document: dict[str, Any]) -> dict[int, Any]:
        return {int(key): record.get("fingerprint") for key, record in document["episodes"].items()}

    return stale_records(root, store.query(fingerprints))

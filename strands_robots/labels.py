"""The labels of one dataset as one object: ``open_labels(root_or_repo_id) -> Labels``.

A :class:`Labels` handle resolves its ROOT once (a path, or a Hub repo id to its local
copy and its labels directory: docs/dataset.md, "Datasets by repo id"), opens the
dataset once when something needs it, and carries the three label stores: ``.episodes``
(verdicts, judge labels, reviews: ``episode_labels.json``), ``.outcomes``
(``episode_outcomes.jsonl``) and ``.segments`` (``episode_segments.json``), with what
spans them (``.filter``, ``.explain``, ``.stale``, ``.remap``), as LeRobot's
``LeRobotDataset`` carries a dataset (docs/api.md). Each store module is imported on first
use, so a handle that only filters never loads the segment rules.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_robots.arguments import path_argument
from strands_robots.dataset.hub import hub_dataset_of

if TYPE_CHECKING:
    from strands_robots.dataset.reader import Dataset
    from strands_robots.storage.remap_txn import RemapResult

__all__ = ["Labels", "open_labels"]


def open_labels(root: str | Path, labels_dir: str | Path | None = None) -> Labels:
    """The label handle of the dataset at ``root`` (a path, or a Hub repo id ``OWNER/NAME[@REVISION]``).

    Nothing is read until it is used: the repo id is resolved on first use (its metadata
    downloaded when absent and allowed), the dataset opened when a rule needs it.

    Args:
        root: Dataset root, or a Hub repo id (only a ``str``: a :class:`~pathlib.Path` is a path).
        labels_dir: Keep the sidecars in this directory (default: the dataset root, or the
            Hub dataset's labels directory, docs/dataset.md).

    Raises:
        LabelArgumentError: ``root`` or ``labels_dir`` is not a path (str or Path).
    """
    return Labels(root, labels_dir)


class Labels:
    """The label sidecars of one dataset; see :func:`open_labels`.

    Attributes:
        episodes: ``episode_labels.json``: :class:`EpisodeLabels`.
        outcomes: ``episode_outcomes.jsonl``: :class:`OutcomeLabels`.
        segments: ``episode_segments.json``: :class:`SegmentLabels`.
    """

    def __init__(self, root: str | Path, labels_dir: str | Path | None = None) -> None:
        self._given = (
            root,
            path_argument(root, "root"),
            None if labels_dir is None else path_argument(labels_dir, "labels_dir"),
        )

    @cached_property
    def _resolved(self) -> tuple[Path, Path | None, str | None, str | None]:
        root, path, labels_dir = self._given
        hub = hub_dataset_of(root)
        if hub is None:
            return path, labels_dir, None, None
        return hub.root, labels_dir if labels_dir is not None else hub.labels_dir, hub.repo_id, hub.revision

    @property
    def root(self) -> Path:
        """The dataset root (a Hub dataset's local copy)."""
        return self._resolved[0]

    @property
    def labels_dir(self) -> Path | None:
        """The directory of the sidecars when it is not the root (a Hub dataset's labels dir by default)."""
        return self._resolved[1]

    @property
    def directory(self) -> Path:
        """The directory that holds the sidecars: ``labels_dir``, else ``root``."""
        return self.labels_dir if self.labels_dir is not None else self.root

    @property
    def repo_id(self) -> str | None:
        """``OWNER/NAME`` when ``root`` named a Hub dataset, else None."""
        return self._resolved[2]

    @property
    def revision(self) -> str | None:
        """The Hub revision asked for (None: the default branch, or not a Hub dataset)."""
        return self._resolved[3]

    @cached_property
    def dataset(self) -> Dataset:
        """The dataset, opened read-only on first use (:func:`strands_robots.dataset.open_dataset`)."""
        from strands_robots.dataset import open_dataset

        return open_dataset(self.root)

    @cached_property
    def episodes(self) -> EpisodeLabels:
        """Verdicts, judge labels and reviews (``episode_labels.json``)."""
        return EpisodeLabels(self)

    @cached_property
    def outcomes(self) -> OutcomeLabels:
        """Versioned outcome labels (``episode_outcomes.jsonl``)."""
        return OutcomeLabels(self)

    @cached_property
    def segments(self) -> SegmentLabels:
        """Subtask segmentations (``episode_segments.json``)."""
        return SegmentLabels(self)

    def filter(self, **options: Any) -> list[int]:
        """The episodes worth training on, sorted: :func:`strands_robots.selection.filter_episodes`'s options and rules."""
        from strands_robots.selection import filter_episodes

        return filter_episodes(self, **options)

    def explain(self, **options: Any) -> dict[str, Any]:
        """:meth:`filter` with the reason of every dropped episode (:func:`strands_robots.selection.explain_filter`)."""
        from strands_robots.selection import explain_filter

        return explain_filter(self, **options)

    def held_out(self) -> set[int]:
        """Episodes whose current outcome label is ``held_out_eval`` (docs/outcomes.md)."""
        from strands_robots.selection import held_out_episodes

        return held_out_episodes(self)

    def stale(self) -> dict[str, dict[int, str]]:
        """Records made for another episode (the dataset was renumbered), per sidecar present.

        Returns:
            ``{"episode_labels" | "outcomes" | "segments": {episode: reason}}``, one key per
            sidecar that exists; each store's rule is ``strands_robots.fingerprint.stale``'s.
        """
        from strands_robots.storage.side_files import LABELS, OUTCOMES, SEGMENTS, journal_path

        stores = (
            (LABELS, "episode_labels", self.episodes.stale),
            (OUTCOMES, "outcomes", self.outcomes.stale),
            (SEGMENTS, "segments", self.segments.stale),
        )
        out: dict[str, dict[int, str]] = {}
        for name, key, stale in stores:
            path = self.directory / name
            if path.exists() or journal_path(path).exists():
                out[key] = stale()
        return out

    def remap(
        self,
        mapping: Any = None,
        *,
        source: str | Path | Sequence[str | Path] | None = None,
        allow_drop: bool = False,
        dry_run: bool = False,
    ) -> RemapResult:
        """Carry every sidecar across an edit that renumbered episodes, in one transaction.

        :func:`strands_robots.remap.remap_dataset`'s arguments (docs/editing.md).
        """
        from strands_robots.remap import remap_dataset

        return remap_dataset(
            self.root, mapping, source=source, labels_dir=self.labels_dir, allow_drop=allow_drop, dry_run=dry_run
        )

    def __repr__(self) -> str:
        where = self.repo_id or str(self.root)
        return f"<Labels {where}>" if self.labels_dir is None else f"<Labels {where} in {self.labels_dir}>"


class _Store:
    """One store of a :class:`Labels` handle: its functions with the root and labels dir bound."""

    _package = ""

    def __init__(self, labels: Labels) -> None:
        self.labels = labels

    def _call(self, module: str, name: str, *args: Any, **kwargs: Any) -> Any:
        # ``__import__`` with a from-list: the module itself, as ``importlib.import_module``
        # returns it, in one C call (a 0.5.3-style function builds a handle per call)
        fn = getattr(__import__(f"strands_robots.{self._package}.{module}", fromlist=(name,)), name)
        root, labels_dir = self.labels._resolved[:2]  # (``root`` and ``labels_dir``)
        return fn(root, *args, labels_dir=labels_dir, **kwargs)


class EpisodeLabels(_Store):
    """``episode_labels.json``: deterministic verdicts, judge labels, human reviews (docs/sidecar-format.md)."""

    _package = "episode_labels"

    @property
    def path(self) -> Path:
        """The sidecar's path."""
        return self._call("document", "labels_path")

    def read(self) -> dict[str, Any]:
        """The whole document (a copy). Raises ``LabelsNotFoundError`` without a sidecar."""
        return self._call("document", "existing_store").read()

    def record_verdicts(self, verdicts: list[dict[str, Any]], *, benchmark: str = "") -> dict[str, Any]:
        """Record deterministic verdicts (``record_deterministic_verdicts``; docs/sidecar-format.md)."""
        return self._call("verdicts", "record_deterministic_verdicts", verdicts, benchmark=benchmark)

    def verdict(self, episode: int) -> dict[str, Any]:
        """The recorded deterministic verdict of ``episode`` (``deterministic_verdict``)."""
        return self._call("verdicts", "deterministic_verdict", episode)

    def annotate(self, episode: int, **judge: Any) -> dict[str, Any]:
        """Write ``episode``'s judge block (``annotate_episode``'s keywords; docs/judge.md)."""
        return self._call("judge", "annotate_episode", episode, **judge)

    def annotate_many(self, annotations: Any) -> list[dict[str, Any]]:
        """Write many judge blocks in one commit (``annotate_episodes``)."""
        return self._call("judge", "annotate_episodes", annotations)

    def review(self, episode: int, **review: Any) -> dict[str, Any]:
        """Record a human review of ``episode`` (``review_episode``'s keywords; docs/review.md)."""
        return self._call("review", "review_episode", episode, **review)

    def disputes(self, *, include_resolved: bool = False) -> list[dict[str, Any]]:
        """Episodes whose judge disputes the verdict (``list_disputes``; docs/review.md)."""
        return self._call("review", "list_disputes", include_resolved=include_resolved)

    def agreement(self, human_labels: dict[Any, dict[str, Any]] | None = None) -> dict[str, Any]:
        """Judge against human labels (``measure_agreement``; docs/judge.md)."""
        return self._call("agreement", "measure_agreement", human_labels)

    def stale(self) -> dict[int, str]:
        """Episodes whose labels were recorded for another episode: ``{episode: reason}``."""
        return self._call("filtering", "stale_episodes")

    def verdicts_from_dataset(self, column: str | None = None) -> list[dict[str, Any]]:
        """Verdicts from a per-frame success column such as ``next.success`` (``verdicts_from_dataset``)."""
        from strands_robots.episode_labels.verdicts import verdicts_from_dataset

        return verdicts_from_dataset(self.labels.root, column)

    def check_readable(self) -> None:
        """Raise ``SidecarError`` now if the sidecar exists but cannot be used (before a multi-sidecar edit)."""
        self._call("document", "check_readable")

    def flush(self) -> bool:
        """Fold pending journal entries into the sidecar so other tools see them; True when there were some."""
        from strands_robots.episode_labels.document import open_store
        from strands_robots.storage.side_files import legacy_journal_path

        store = open_store(self.labels.root, self.labels.labels_dir, write=False)
        if not any(os.path.lexists(p) for p in (store.path, store.journal, legacy_journal_path(store.path))):
            return False  # nothing stored: a flush creates no file (no lock, no labels-dir key)
        return open_store(self.labels.root, self.labels.labels_dir).flush()

    def remap(self, mapping: Any, *, dry_run: bool = False, allow_drop: bool = False) -> int:
        """Renumber this sidecar alone, in one transaction; :meth:`Labels.remap` moves every sidecar.

        Returns the records kept under their new index. Raises what :meth:`Labels.remap` raises
        for a mapping (docs/editing.md); nothing changes on a refusal.
        """
        from strands_robots.episode_labels.remap import participant
        from strands_robots.storage.remap_txn import remap_sidecar

        root, labels_dir = self.labels.root, self.labels.labels_dir
        return remap_sidecar(mapping, lambda: participant(root, labels_dir, allow_drop=allow_drop), dry_run=dry_run)


class OutcomeLabels(_Store):
    """``episode_outcomes.jsonl``: one versioned outcome label per episode (docs/outcomes.md)."""

    _package = "outcomes"

    @property
    def path(self) -> Path:
        """The sidecar's path."""
        return self._call("store", "outcomes_path")

    def set(self, episode: int, **fields: Any) -> dict[str, Any]:
        """Record a new version of ``episode``'s outcome label (``set_outcome``'s fields)."""
        return self._call("labels", "set_outcome", episode, **fields)

    def get(self, episode: int) -> dict[str, Any]:
        """The current outcome label of ``episode`` (``get_outcome``)."""
        return self._call("labels", "get_outcome", episode)

    def history(self, episode: int) -> list[dict[str, Any]]:
        """Every version of ``episode``'s label, newest first (``outcome_history``)."""
        return self._call("labels", "outcome_history", episode)

    def current(self) -> dict[int, dict[str, Any]]:
        """``{episode: current label}`` (``current_outcomes``)."""
        return self._call("labels", "current_outcomes")

    def stale(self) -> dict[int, str]:
        """Episodes whose current label was recorded for another episode (``stale_outcomes``)."""
        return self._call("labels", "stale_outcomes")

    def export(self, path: str | Path | None = None, **options: Any) -> Any:
        """Write ``meta/avala_sequence_outcomes.jsonl`` (``export_outcomes``)."""
        return self._call("export", "export_outcomes", path, **options)

    def import_file(self, path: str | Path, **options: Any) -> Any:
        """Import an outcome file (``import_outcomes``)."""
        return self._call("export", "import_outcomes", path, **options)

    def split(self, **options: Any) -> Any:
        """Held-out split by leakage group (``split_by_groups``'s keywords)."""
        return self._call("splits", "split_by_groups", **options)

    def recovery_track(self) -> list[int]:
        """Episodes whose current outcome is a mistake and recovery (``recovery_track``)."""
        return self._call("verdicts", "recovery_track")

    def verdicts(self) -> list[dict[str, Any]]:
        """Deterministic verdicts derived from the outcome labels (``verdicts_from_outcomes``)."""
        return self._call("verdicts", "verdicts_from_outcomes")

    def record_verdicts(self) -> Any:
        """Record those verdicts in ``episode_labels.json`` (``record_verdicts_from_outcomes``)."""
        return self._call("verdicts", "record_verdicts_from_outcomes")

    def list(self, **filters: Any) -> list[dict[str, Any]]:
        """Current labels matching ``filters`` (``list_outcomes``'s keywords)."""
        # last in the class: ``list`` in a later annotation would name this method
        return self._call("labels", "list_outcomes", **filters)


class SegmentLabels(_Store):
    """``episode_segments.json``: typed subtask segmentations, half-open ``[start, end)`` frames (docs/segments.md)."""

    _package = "segments"

    @property
    def path(self) -> Path:
        """The sidecar's path."""
        return self._call("store", "segments_path")

    def save(self, episode: int, segments: Any, **options: Any) -> Any:
        """Save a segmentation of ``episode`` (``save_segmentation``'s keywords)."""
        return self._call("store", "save_segmentation", episode, segments, **options)

    def get(self, episode: int) -> dict[str, Any]:
        """The current segmentation of ``episode`` (``get_segmentation``; raises when it has none)."""
        return self._call("store", "get_segmentation", episode)

    def history(self, episode: int) -> list[dict[str, Any]]:
        """Earlier versions of ``episode``'s segmentation (``segmentation_history``)."""
        return self._call("store", "segmentation_history", episode)

    def mark_reference(self, episode: int, reference: bool = True) -> dict[str, Any]:
        """Mark (or unmark) ``episode``'s segmentation as a reference example."""
        return self._call("store", "mark_reference", episode, reference)

    def stale(self) -> dict[int, str]:
        """Episodes whose segmentation was made for another episode (``stale_segmentations``)."""
        return self._call("store", "stale_segmentations")

    def list(self, **filters: Any) -> list[dict[str, Any]]:
        """Saved segmentations (``list_segmentations``'s ``task=``, ``reference=``)."""
        return self._call("store", "list_segmentations", **filters)  # last: see OutcomeLabels.list

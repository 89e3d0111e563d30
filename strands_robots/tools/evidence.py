"""An episode's evidence, computed once: the rows ``sample_frames`` reads and their signals.

``sample_frames`` reports :func:`strands_robots.signals.episode_signals` of one episode;
the offline judge's profile pass computes the same signals for every episode of the
dataset (one read per data file). :func:`episode_evidence` is the one place both
compute them from an episode's rows, and an :class:`EvidenceCache` carries what the
profile pass computed to the tool path, so each episode's signals are computed once per
run and ``sample_frames`` answers with the same payload without reading or computing
again (docs/judge.md, "Throughput").

An entry is used only while the dataset is the one it was computed from: the same opened
dataset object (:func:`strands_robots.dataset.cache.cached_dataset` opens a new one when
any metadata file changes) and the same data file (its non-strict
:func:`~strands_robots.storage.registry.file_identity`: inode, size and mtime). Anything
else is a miss, and the tool reads and computes as without a cache.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_robots.signals.episode import signals_of
from strands_robots.storage.registry import Identity, file_identity

#: Rows kept by default (bytes of numpy arrays): beyond it entries keep only their signals,
#: and ``sample_frames`` reads the episode's rows again (one row-group read).
DEFAULT_MAX_ROW_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class EpisodeEvidence:
    """What ``sample_frames`` computes from one episode's rows.

    Attributes:
        rows: Column -> array of the signal columns present in the data file (state,
            action, timestamp), rows sorted by ``frame_index``; None when a cache kept
            only the signals (the tool reads the rows again).
        timestamps: ``(L,)`` seconds: the ``timestamp`` column, else ``frame / fps``,
            else None.
        signals: :func:`~strands_robots.signals.episode.signals_of` of the rows, with
            ``timestamps`` (shared: copy before changing it).
    """

    rows: Mapping[str, np.ndarray] | None
    timestamps: np.ndarray | None
    signals: dict[str, Any]

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays it holds."""
        arrays = list((self.rows or {}).values())
        if self.timestamps is not None and (self.rows is None or "timestamp" not in self.rows):
            arrays.append(self.timestamps)
        return sum(int(getattr(a, "nbytes", 0)) for a in arrays)


def episode_evidence(
    dataset: Any, length: int, rows: Mapping[str, np.ndarray], signals: dict[str, Any] | None = None
) -> EpisodeEvidence:
    """The evidence of one episode of ``dataset`` from its rows.

    Args:
        dataset: The open dataset (fps, feature names).
        length: The episode's length in frames.
        rows: Its signal columns as :meth:`Dataset.read_frames` returns them.
        signals: Already computed signals of these rows (kept as they are).

    Returns:
        :class:`EpisodeEvidence`; timestamps fall back to ``arange(length) / fps``.
    """
    timestamps = rows.get("timestamp")
    if timestamps is None and dataset.fps:
        timestamps = np.arange(length, dtype=np.float64) / dataset.fps
    if signals is None:
        signals = signals_of(dataset, {**rows, "timestamp": timestamps} if timestamps is not None else rows)
    return EpisodeEvidence(rows, timestamps, signals)


class EvidenceCache:
    """Thread-safe ``(dataset root, episode_index) -> EpisodeEvidence`` for one run.

    Args:
        max_row_bytes: Rows kept at most (bytes); later entries keep their signals only.
    """

    def __init__(self, max_row_bytes: int = DEFAULT_MAX_ROW_BYTES) -> None:
        self.max_row_bytes = max_row_bytes
        self.row_bytes = 0
        self.hits = 0
        self.misses = 0
        self._entries: dict[tuple[str, int], tuple[Any, Identity, EpisodeEvidence]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, dataset: Any, episode: int, evidence: EpisodeEvidence, stamp: Identity | None) -> None:
        """Keep ``evidence`` of ``episode``, computed from the data file whose stamp is ``stamp``
        (its ``file_identity(..., strict=False)`` taken before the read; None: not kept)."""
        if stamp is None:
            return
        with self._lock:
            size = evidence.nbytes
            if evidence.rows is not None and self.row_bytes + size > self.max_row_bytes:
                evidence = EpisodeEvidence(None, None, evidence.signals)
                size = 0
            key = (str(dataset.root), int(episode))
            old = self._entries.get(key)
            if old is not None:
                self.row_bytes -= old[2].nbytes
            self._entries[key] = (dataset, stamp, evidence)
            self.row_bytes += size

    def get(self, dataset: Any, episode: int, data_file: str | os.PathLike[str]) -> EpisodeEvidence | None:
        """The evidence of ``episode`` if it was computed from this very dataset and data file."""
        stamp = file_identity(data_file, strict=False)
        with self._lock:
            entry = self._entries.get((str(dataset.root), int(episode)))
            if entry is None or entry[0] is not dataset or stamp is None or entry[1] != stamp:
                self.misses += 1
                return None
            self.hits += 1
            return entry[2]

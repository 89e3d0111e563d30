"""The dataset profile the offline judge compares each episode against.

One pass over the dataset computes :func:`strands_robots.signals.episode_signals`
for every episode (the same function ``sample_frames`` reports from), then robust
statistics per signal: the median and a MAD-based scale, on a log scale for the
positive, right-skewed ones (jerk, duration). An episode is then described by robust
z-scores: how many typical deviations it sits from the rest of the dataset.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.dataset import open_dataset
from strands_robots.dataset.frames import column_to_numpy
from strands_robots.signals import episode_signals

STATE_KEY = "observation.state"
#: Below this many profiled episodes no dataset-relative claim is made.
MIN_EPISODES = 8
#: MAD -> standard deviation of a normal distribution.
MAD_TO_SIGMA = 1.4826
#: Smallest scale of a log-signal (5 %): near-identical episodes are not outliers.
MIN_LOG_SCALE = 0.05
#: Smallest scale of a fraction-signal (idle_fraction).
MIN_FRACTION_SCALE = 0.02

LOG_SIGNALS = ("rms_state_jerk", "duration_s")
LINEAR_SIGNALS = {"idle_fraction": MIN_FRACTION_SCALE}


@dataclass(frozen=True)
class RobustStat:
    """Median and robust scale of one signal over the dataset (log space when ``log``)."""

    median: float
    scale: float
    log: bool
    count: int

    def z(self, value: float | None) -> float | None:
        """Robust z-score of ``value`` (None when undefined)."""
        if value is None or not math.isfinite(value) or (self.log and value <= 0):
            return None
        x = math.log(value) if self.log else value
        return (x - self.median) / self.scale

    def typical(self) -> float:
        """The median back in the signal's own units."""
        return math.exp(self.median) if self.log else self.median


def robust_stat(values: Iterable[float | None], *, log: bool, min_scale: float) -> RobustStat | None:
    """Median and ``max(1.4826 * MAD, min_scale)`` of the finite (positive, if ``log``) values."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v) and (not log or v > 0)]
    if not xs:
        return None
    arr = np.log(np.asarray(xs)) if log else np.asarray(xs)
    median = float(np.median(arr))
    mad = float(np.median(np.abs(arr - median)))
    return RobustStat(median, max(MAD_TO_SIGMA * mad, min_scale), log, len(xs))


@dataclass
class DatasetProfile:
    """Per-episode signals of a dataset and their robust statistics.

    Attributes:
        signals: ``episode_index -> episode_signals(...)``.
        stats: Signal name -> :class:`RobustStat` (absent when no episode has it).
        gripper_swings_median: Median open/close swings (None without a gripper channel).
        gripper_range_median: Median gripper closure range in state units (None without one).
    """

    signals: dict[int, dict[str, Any]] = field(default_factory=dict)
    stats: dict[str, RobustStat] = field(default_factory=dict)
    gripper_swings_median: float | None = None
    gripper_range_median: float | None = None

    @property
    def episodes(self) -> int:
        """How many episodes the profile describes."""
        return len(self.signals)

    @property
    def comparable(self) -> bool:
        """Whether the dataset is large enough for dataset-relative claims."""
        return self.episodes >= MIN_EPISODES

    @classmethod
    def from_signals(cls, signals: Mapping[int, Mapping[str, Any]]) -> DatasetProfile:
        """Statistics over already computed per-episode signals."""
        rows = {int(k): dict(v) for k, v in signals.items()}
        stats: dict[str, RobustStat] = {}
        for name in LOG_SIGNALS:
            stat = robust_stat((r.get(name) for r in rows.values()), log=True, min_scale=MIN_LOG_SCALE)
            if stat is not None:
                stats[name] = stat
        for name, floor in LINEAR_SIGNALS.items():
            stat = robust_stat((r.get(name) for r in rows.values()), log=False, min_scale=floor)
            if stat is not None:
                stats[name] = stat
        swings = [r["gripper_swings"] for r in rows.values() if r.get("gripper_swings") is not None]
        ranges = [r["gripper_range"] for r in rows.values() if r.get("gripper_range") is not None]
        return cls(
            rows,
            stats,
            float(np.median(swings)) if swings else None,
            float(np.median(ranges)) if ranges else None,
        )

    @classmethod
    def from_dataset(
        cls, root: str | Path, episodes: Iterable[int] | None = None, *, workers: int = 1
    ) -> DatasetProfile:
        """Read every episode's state and timestamps once and profile them.

        Each data file is read once (a v3.0 file holds many episodes); an episode whose
        rows do not add up to its ``length`` is read alone through the reader, and one
        that cannot be read at all is left out of the profile.

        Args:
            root: Dataset root.
            episodes: Restrict to these episode indices (default: all).
            workers: Threads reading data files in parallel.

        Raises:
            DatasetError: the dataset cannot be opened.
        """
        dataset = open_dataset(root)
        wanted = list(dataset.episodes) if episodes is None else [int(e) for e in episodes]
        by_file: dict[Path, list[int]] = {}
        for index in wanted:
            by_file.setdefault(Path(dataset.episodes[index].data_file), []).append(index)
        jobs = list(by_file.items())
        if workers > 1 and len(jobs) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(lambda job: _profile_file(dataset, *job), jobs))
        else:
            parts = [_profile_file(dataset, *job) for job in jobs]
        return cls.from_signals({i: sig for part in parts for i, sig in part.items()})


def _signals_of(dataset: Any, rows: Mapping[str, np.ndarray]) -> dict[str, Any]:
    return episode_signals(rows.get(STATE_KEY), rows.get("timestamp"), dataset.fps, list(dataset.state_names))


def _read_one(dataset: Any, index: int, columns: list[str]) -> dict[str, Any] | None:
    try:
        rows = dataset.read_frames(index, columns) if columns else {}
    except (OSError, ValueError, KeyError):  # unreadable: left out of the profile
        return None
    return _signals_of(dataset, rows)


def _profile_file(dataset: Any, path: Path, indices: list[int]) -> dict[int, dict[str, Any]]:
    """Signals of ``indices``, all stored in the data file ``path``, from one read of it."""
    columns = [c for c in (STATE_KEY, "timestamp") if c in dataset.features]
    out: dict[int, dict[str, Any]] = {}
    try:
        available = set(pq.read_schema(path).names)
        if not {"episode_index", "frame_index", *columns} <= available:
            raise ValueError("columns missing")
        table = pq.read_table(path, columns=[*columns, "episode_index", "frame_index"])
    except (OSError, ValueError, pa.ArrowException):
        return {i: s for i in indices if (s := _read_one(dataset, i, columns)) is not None}
    episode_col = table.column("episode_index").to_numpy()
    order = np.lexsort((table.column("frame_index").to_numpy(), episode_col))
    sorted_episodes = episode_col[order]
    arrays = {c: column_to_numpy(table.column(c), c)[order] for c in columns}
    for index in indices:
        lo, hi = np.searchsorted(sorted_episodes, [index, index + 1])
        if hi - lo != dataset.episodes[index].length:
            signals = _read_one(dataset, index, columns)  # let the reader judge the inconsistency
        else:
            signals = _signals_of(dataset, {c: a[lo:hi] for c, a in arrays.items()})
        if signals is not None:
            out[index] = signals
    return out

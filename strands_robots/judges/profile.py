"""The dataset profile the offline judge compares each episode against.

One pass computes every episode's signals (those ``sample_frames`` reports), then robust
statistics per signal, per state channel and per task's length; an episode is described
by robust z-scores against them (docs/judge.md, "Offline judge rules").
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

from strands_robots.dataset.cache import cached_dataset
from strands_robots.dataset.frames import column_to_numpy
from strands_robots.signals.episode import signal_columns
from strands_robots.signals.gripper import dataset_swings
from strands_robots.signals.motion import pooled_slope, pooled_trend
from strands_robots.storage.registry import file_identity
from strands_robots.tools.evidence import EvidenceCache, episode_evidence

#: Below this many profiled episodes no dataset-relative claim is made.
MIN_EPISODES = 8
#: MAD -> standard deviation of a normal distribution.
MAD_TO_SIGMA = 1.4826
#: Interquartile range -> standard deviation of a normal distribution.
IQR_TO_SIGMA = 1.349
#: Smallest scale of a log-signal (5 %): near-identical episodes are not outliers.
MIN_LOG_SCALE = 0.05
#: Smallest scale of a fraction-signal (idle_fraction).
MIN_FRACTION_SCALE = 0.02
#: Smallest scale of a per-channel log-signal (25 %): channels are noisier than sums.
MIN_CHANNEL_LOG_SCALE = 0.25

LOG_SIGNALS = ("rms_state_jerk", "duration_s", "frames")
#: End state: a channel's end-position scale is at least this share of its typical range.
END_SCALE_FLOOR = 0.1
#: End state: one channel's |z| counts at most this much in the end offset.
END_Z_CAP = 10.0
#: End offset: smallest scale of its distribution over the dataset.
MIN_END_SCALE = 0.25
LINEAR_SIGNALS = {"idle_fraction": MIN_FRACTION_SCALE, "idle_longest_s": 0.1}
#: Per-channel signals profiled on a log scale (absolute values for the signed trend).
#: Per-channel values are floored at this share of the median channel range before the log.
CHANNEL_FLOOR_SHARE = 1e-4
#: The per-channel signals in state units, which the floor applies to.
FLOORED_SIGNALS = ("step_height", "residual_trend", "residual_step")
CHANNEL_SIGNALS = (
    "jerk_typical",
    "jerk_peak",
    "step_typical",
    "step_height",
    "residual_trend",
    "residual_step",
    "channel_range",
)
#: Per-channel signals that are signed (profiled on a linear scale: median and robust scale,
#: floored at ``LINEAR_CHANNEL_FLOOR`` of the channel's median range).
LINEAR_CHANNEL_SIGNALS = ("residual_trend",)
LINEAR_CHANNEL_FLOOR = 0.01


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
    """Median and ``max(1.4826 * MAD, IQR / 1.349, min_scale)`` of the finite (positive, if
    ``log``) values.

    Both spreads estimate a normal distribution's standard deviation; the interquartile
    range also covers a dataset made of a few kinds of episodes (two typical lengths of
    one task, a share of rougher recordings), where the MAD of the larger cluster alone
    would call the smaller one an outlier.
    """
    xs = [float(v) for v in values if v is not None and math.isfinite(v) and (not log or v > 0)]
    if not xs:
        return None
    arr = np.log(np.asarray(xs)) if log else np.asarray(xs)
    median = float(np.median(arr))
    mad = float(np.median(np.abs(arr - median)))
    q1, q3 = np.percentile(arr, [25, 75])
    return RobustStat(median, max(MAD_TO_SIGMA * mad, float(q3 - q1) / IQR_TO_SIGMA, min_scale), log, len(xs))


@dataclass
class DatasetProfile:
    """Per-episode signals of a dataset and their robust statistics.

    Attributes:
        signals: ``episode_index -> episode_signals(...)``.
        stats: Signal name -> :class:`RobustStat` (absent when no episode has it).
        gripper_swings_median: Median open/close swings (None without a gripper channel),
            counted with each gripper group's dataset range (:meth:`swings`).
        gripper_range_median: Median gripper closure range in state units (None without one).
        gripper_ranges: Gripper group -> ``(min, max)`` of its closure over the profiled
            episodes, the ``value_range`` the gripper detector is given.
        channel_stats: Per-channel signal -> one :class:`RobustStat` per channel (log of
            the absolute value; None for a channel no episode has).
        tasks: ``episode_index`` -> its first task string (when known).
        task_frames: Task -> log-length statistic over that task's episodes.
        channel_floor: Per-channel values below this (``CHANNEL_FLOOR_SHARE`` of the
            median channel range) count as this: a signal that is exactly 0 in every
            episode (a simulator's state equal to its action) still has a statistic (state-unit
            signals only: ``FLOORED_SIGNALS``).
    """

    signals: dict[int, dict[str, Any]] = field(default_factory=dict)
    stats: dict[str, RobustStat] = field(default_factory=dict)
    gripper_swings_median: float | None = None
    gripper_range_median: float | None = None
    channel_stats: dict[str, list[RobustStat | None]] = field(default_factory=dict)
    tasks: dict[int, str] = field(default_factory=dict)
    task_frames: dict[str, RobustStat] = field(default_factory=dict)
    channel_floor: float = 0.0
    gripper_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    end_stats: list[RobustStat | None] = field(default_factory=list)
    slopes: dict[tuple[int, int], float] = field(default_factory=dict)

    def trends(self, signals: Mapping[str, Any]) -> list[float | None]:
        """Per state channel, the drift of the episode's state from the dataset-wide map of
        its action (:func:`~strands_robots.signals.motion.pooled_trend`, the slope pooled
        over every episode). Only a channel paired with the action channel most episodes
        pair it with has one (None otherwise); without pooled slopes (fewer than
        ``MIN_EPISODES`` episodes per pair) the episode's own ``residual_trend``."""
        own = list(signals.get("residual_trend") or [])
        if not self.slopes:
            return own
        fits = episode_fits(signals)
        out: list[float | None] = [None] * len(own)
        for (i, j), slope in self.slopes.items():
            fit = fits.get((i, j))
            if fit is not None and i < len(out):
                out[i] = pooled_trend(fit, slope)
        return out

    def end_offset(self, signals: Mapping[str, Any]) -> float | None:
        """How far an episode ends from where the dataset's episodes end.

        The RMS over the state channels of the robust z of ``end_state`` against each
        channel's end statistic (linear; scale floored at ``END_SCALE_FLOOR`` of the
        channel's typical range, each |z| capped at ``END_Z_CAP``). None without end
        statistics or an end state.
        """
        zs = [
            min(abs(stat.z(value) or 0.0), END_Z_CAP)
            for stat, value in zip(self.end_stats, signals.get("end_state") or [], strict=False)
            if stat is not None and value is not None and math.isfinite(value)
        ]
        return math.sqrt(sum(z * z for z in zs) / len(zs)) if zs else None

    def swings(self, signals: Mapping[str, Any]) -> tuple[int | None, float | None]:
        """``(open/close events, closure range)`` of an episode, counted with the dataset's
        range per gripper group (an idle hand's sensor noise is no event;
        :func:`~strands_robots.signals.gripper.dataset_swings`). Falls back to the episode's
        own ``gripper_swings`` / ``gripper_range`` when it has no per-group counts."""
        events = signals.get("gripper_events")
        if not events:
            return signals.get("gripper_swings"), signals.get("gripper_range")
        return dataset_swings(events, signals.get("gripper_spans") or {}, self.gripper_ranges)

    def channel_z(self, name: str, index: int, value: float | None) -> float | None:
        """Robust z of ``|value|`` against channel ``index`` of ``name`` (state-unit signals
        floored at ``channel_floor``; None when undefined)."""
        stat = self.channel(name, index)
        if stat is None or value is None or not math.isfinite(value):
            return None
        if not stat.log:  # a signed signal (LINEAR_CHANNEL_SIGNALS): distance from its median either way
            z = stat.z(value)
            return None if z is None else abs(z)
        x = max(abs(value), self.channel_floor) if name in FLOORED_SIGNALS else abs(value)
        return stat.z(x) if x > 0 else None

    def channel(self, name: str, index: int) -> RobustStat | None:
        """The statistic of per-channel signal ``name`` at channel ``index`` (None if unknown)."""
        stats = self.channel_stats.get(name) or []
        return stats[index] if 0 <= index < len(stats) else None

    def length_stat(self, episode: int | None) -> RobustStat | None:
        """Log-length statistic of the episode's task (all episodes when the task is unknown or alone)."""
        task = self.tasks.get(episode) if episode is not None else None
        stat = self.task_frames.get(task) if task is not None else None
        if stat is not None and stat.count >= MIN_EPISODES:
            return stat
        return self.stats.get("frames")

    @property
    def episodes(self) -> int:
        """How many episodes the profile describes."""
        return len(self.signals)

    @property
    def comparable(self) -> bool:
        """Whether the dataset is large enough for dataset-relative claims."""
        return self.episodes >= MIN_EPISODES

    @classmethod
    def from_signals(
        cls, signals: Mapping[int, Mapping[str, Any]], tasks: Mapping[int, str] | None = None
    ) -> DatasetProfile:
        """Statistics over already computed per-episode signals (``tasks``: episode -> task)."""
        rows = {int(k): dict(v) for k, v in signals.items()}
        task_of = {int(k): str(v) for k, v in (tasks or {}).items() if int(k) in rows}
        scales = {
            **{name: (True, MIN_LOG_SCALE) for name in LOG_SIGNALS},
            **{n: (False, f) for n, f in LINEAR_SIGNALS.items()},
        }
        stats = {
            name: stat
            for name, (log, min_scale) in scales.items()
            if (stat := robust_stat((r.get(name) for r in rows.values()), log=log, min_scale=min_scale)) is not None
        }
        spans: dict[str, list[Any]] = {}
        for r in rows.values():
            for name, span in (r.get("gripper_spans") or {}).items():
                spans.setdefault(name, []).append(span)
        gripper_ranges = {
            name: (min(float(lo) for lo, _ in values), max(float(hi) for _, hi in values))
            for name, values in spans.items()
        }
        profile = cls(rows, stats, tasks=task_of, gripper_ranges=gripper_ranges)  # filled in below
        recount = [profile.swings(r) for r in rows.values()]
        swings = [n for n, _ in recount if n is not None]
        grip_ranges = [w for _, w in recount if w is not None]
        profile.gripper_swings_median = float(np.median(swings)) if swings else None
        profile.gripper_range_median = float(np.median(grip_ranges)) if grip_ranges else None
        by_pair: dict[tuple[int, int], list[Any]] = {}
        every_fit: dict[tuple[int, int], list[Any]] = {}
        for r in rows.values():
            fits = r.get("residual_fit") or []
            for i, j in r.get("action_pairs") or []:
                if i < len(fits) and fits[i] is not None:
                    by_pair.setdefault((int(i), int(j)), []).append(fits[i])
            for pair, fit in episode_fits(r).items():
                every_fit.setdefault(pair, []).append(fit)
        modal: dict[int, tuple[int, int]] = {}  # each state channel's most common action channel
        for pair, _fits in sorted(by_pair.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            modal.setdefault(pair[0], pair)
        profile.slopes = {
            pair: slope
            for pair in modal.values()
            if len(by_pair[pair]) >= MIN_EPISODES and (slope := pooled_slope(every_fit[pair])) is not None
        }
        rows_for_stats = {k: {**r, "residual_trend": profile.trends(r)} for k, r in rows.items()}
        channel_stats: dict[str, list[RobustStat | None]] = {}
        ranges = [
            abs(float(v)) for r in rows.values() for v in (r.get("channel_range") or []) if v is not None and v > 0
        ]
        profile.channel_floor = floor = CHANNEL_FLOOR_SHARE * float(np.median(ranges)) if ranges else 0.0
        range_values = _per_channel(rows.values(), "channel_range")
        for name in CHANNEL_SIGNALS:
            per: list[RobustStat | None] = []
            for c, values in enumerate(_per_channel(rows_for_stats.values(), name)):
                if name in LINEAR_CHANNEL_SIGNALS:
                    ranges_c = range_values[c] if c < len(range_values) else []
                    typical_range = float(np.median(ranges_c if ranges_c else [abs(v) for v in values] or [0.0]))
                    min_scale = max(LINEAR_CHANNEL_FLOOR * typical_range, floor, 1e-12)
                    per.append(robust_stat(values, log=False, min_scale=min_scale))
                else:
                    floored = [max(abs(float(v)), floor) if name in FLOORED_SIGNALS else abs(v) for v in values]
                    per.append(robust_stat(floored, log=True, min_scale=MIN_CHANNEL_LOG_SCALE))
            if per:
                channel_stats[name] = per
        range_stats = channel_stats.get("channel_range") or []
        end_stats: list[RobustStat | None] = []
        for c, values in enumerate(_per_channel(rows.values(), "end_state")):
            spread = range_stats[c] if c < len(range_stats) else None
            typical = spread.typical() if spread is not None else 0.0
            end_stats.append(robust_stat(values, log=False, min_scale=max(END_SCALE_FLOOR * typical, 1e-9)))
        profile.channel_stats, profile.end_stats = channel_stats, end_stats
        end_offset = robust_stat((profile.end_offset(r) for r in rows.values()), log=False, min_scale=MIN_END_SCALE)
        if end_offset is not None:
            stats["end_offset"] = end_offset
        by_task: dict[str, list[float]] = {}
        for e, task in task_of.items():
            by_task.setdefault(task, []).append(rows[e].get("frames") or 0)
        profile.task_frames = {
            t: stat
            for t, values in by_task.items()
            if (stat := robust_stat(values, log=True, min_scale=MIN_LOG_SCALE)) is not None
        }
        return profile

    @classmethod
    def from_dataset(
        cls,
        root: str | Path,
        episodes: Iterable[int] | None = None,
        *,
        workers: int = 1,
        evidence: EvidenceCache | None = None,
    ) -> DatasetProfile:
        """Read every episode's state and timestamps once and profile them.

        Each data file is read once (a v3.0 file holds many episodes); an episode whose
        rows do not add up to its ``length`` is read alone through the reader, and one
        that cannot be read at all is left out of the profile.

        Args:
            root: Dataset root.
            episodes: Restrict to these episode indices (default: all).
            workers: Threads reading data files in parallel.
            evidence: Filled with each profiled episode's rows and signals, so the
                judge tools (``sample_frames``) reuse them instead of computing them again.

        Raises:
            DatasetError: the dataset cannot be opened.
        """
        dataset = cached_dataset(root)  # the object the tools get, which the evidence entries are tied to
        wanted = list(dataset.episodes) if episodes is None else [int(e) for e in episodes]
        metas = {index: dataset.episodes[index] for index in wanted}  # one metadata lookup per episode
        by_file: dict[Path, list[Any]] = {}
        for meta in metas.values():
            by_file.setdefault(Path(meta.data_file), []).append(meta)
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(by_file)))) as pool:
            parts = list(pool.map(lambda job: _profile_file(dataset, job[0], job[1], evidence), by_file.items()))
        tasks = {i: meta.tasks[0] for i, meta in metas.items() if meta.tasks}
        return cls.from_signals({i: sig for part in parts for i, sig in part.items()}, tasks)


def _per_channel(rows: Iterable[Mapping[str, Any]], name: str) -> list[list[Any]]:
    """Per channel of the per-channel signal ``name``, its values over ``rows`` (None left out)."""
    columns = [r.get(name) or [] for r in rows]
    width = max((len(column) for column in columns), default=0)
    return [[column[c] for column in columns if c < len(column) and column[c] is not None] for c in range(width)]


def episode_fits(signals: Mapping[str, Any]) -> dict[tuple[int, int], list[Any]]:
    """``(state channel, action channel) -> residual fit`` of one episode: its own pairs'
    (``residual_fit``) and the other plausible pairs' (``pair_fits``)."""
    fits = signals.get("residual_fit") or []
    out: dict[tuple[int, int], list[Any]] = {}
    for row in signals.get("pair_fits") or []:
        out[(int(row[0]), int(row[1]))] = list(row[2:])
    for i, j in signals.get("action_pairs") or []:
        if i < len(fits) and fits[i] is not None:
            out[(int(i), int(j))] = fits[i]
    return out


def _signals(dataset: Any, meta: Any, rows: Any, evidence: EvidenceCache | None, stamp: Any) -> dict[str, Any]:
    """The episode's signals from its ``rows``, kept in ``evidence`` under the data file's ``stamp``."""
    found = episode_evidence(dataset, meta.length, rows)
    if evidence is not None:
        evidence.put(dataset, meta.episode_index, found, stamp)
    return found.signals


def _read_one(dataset: Any, meta: Any, columns: list[str], evidence: EvidenceCache | None) -> dict[str, Any] | None:
    stamp = file_identity(meta.data_file, strict=False)
    try:
        rows = dataset.read_frames(meta, columns) if columns else {}
    except (OSError, ValueError, KeyError):  # unreadable: left out of the profile
        return None
    return _signals(dataset, meta, rows, evidence, stamp)


def _profile_file(
    dataset: Any, path: Path, metas: list[Any], evidence: EvidenceCache | None = None
) -> dict[int, dict[str, Any]]:
    """Signals of the episodes ``metas``, all stored in the data file ``path``, from one read of it."""
    columns = signal_columns(dataset)
    out: dict[int, dict[str, Any]] = {}
    stamp = file_identity(path, strict=False)
    try:
        available = set(pq.read_schema(path).names)
        if not {"episode_index", "frame_index", *columns} <= available:
            raise ValueError("columns missing")
        table = pq.read_table(path, columns=[*columns, "episode_index", "frame_index"])
    except (OSError, ValueError, pa.ArrowException):
        return {m.episode_index: s for m in metas if (s := _read_one(dataset, m, columns, evidence)) is not None}
    episode_col = table.column("episode_index").to_numpy()
    order = np.lexsort((table.column("frame_index").to_numpy(), episode_col))
    sorted_episodes = episode_col[order]
    arrays = {c: column_to_numpy(table.column(c), c)[order] for c in columns}
    indices = np.asarray([m.episode_index for m in metas], dtype=np.int64)
    bounds = np.searchsorted(sorted_episodes, np.column_stack([indices, indices + 1]))
    for meta, (lo, hi) in zip(metas, bounds.tolist(), strict=True):
        if hi - lo != meta.length:
            signals = _read_one(dataset, meta, columns, evidence)  # let the reader judge the inconsistency
        else:
            signals = _signals(dataset, meta, {c: a[lo:hi] for c, a in arrays.items()}, evidence, stamp)
        if signals is not None:
            out[meta.episode_index] = signals
    return out

"""Motion signals of one whole episode (pure numpy, no I/O).

The judge tools (``sample_frames``) and the offline judge's dataset profile compute
the same numbers from the same arrays; rules in ``docs/judge.md`` ("The four tools").

- :func:`rms_state_jerk`: RMS of the third difference of the state divided by
  ``dt**3`` (state units per second cubed).
- :func:`episode_signals`: the signals a text-only judge can ground execution
  grades on: jerk, idle fraction, duration, gripper events, NaN frames.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from strands_robots.dataset.keys import ACTION_KEY, STATE_KEY
from strands_robots.signals import motion
from strands_robots.signals.gripper import count_gripper_events, gripper_groups
from strands_robots.signals.sampling import frame_period

#: A transition is idle when its (smoothed) state speed is below this share of the
#: episode's 95th-percentile speed.
IDLE_SPEED_SHARE = 0.05


def _as_2d(state: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    array = np.asarray(state, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"state must be shaped (frames, dims), got {array.shape}")
    return array


def rms_state_jerk(
    state: np.ndarray | Sequence[Sequence[float]],
    timestamps: np.ndarray | Sequence[float] | None = None,
    fps: float | None = None,
) -> float | None:
    """Root mean square jerk of an episode's state, in state units per second cubed
    (docs/judge.md, "The four tools", ``sample_frames``); without timestamps or fps, ``dt`` is 1.

    Args:
        state: ``(L, D)`` state per frame (a ``(L,)`` vector is one dimension).
        timestamps: ``(L,)`` seconds, or None.
        fps: Frames per second of the dataset, or None.

    Returns:
        The RMS jerk, or None with fewer than 4 frames or no finite third difference.
    """
    array = _as_2d(state)
    if array.shape[0] < 4 or array.shape[1] == 0:
        return None
    dt = frame_period(None if timestamps is None else np.asarray(timestamps), fps) or 1.0
    third = np.diff(array, n=3, axis=0)
    finite = third[np.isfinite(third)]
    if finite.size == 0:
        return None
    return float(math.sqrt(float(np.mean(np.square(finite / dt**3)))))


def _r(value: float | None, digits: int = 6) -> float | None:
    return None if value is None or not math.isfinite(value) else round(float(value), digits)


def _rlist(values: Sequence[float | None]) -> list[float | None]:
    return [_r(v) for v in values]


def episode_signals(
    state: np.ndarray | Sequence[Sequence[float]] | None,
    timestamps: np.ndarray | Sequence[float] | None,
    fps: float | None,
    state_names: Sequence[str] = (),
    action: np.ndarray | Sequence[Sequence[float]] | None = None,
    action_names: Sequence[str] = (),
    gripper_ranges: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """Execution signals of one whole episode (JSON-ready, None where undefined).

    Args:
        state: ``(L, D)`` ``observation.state`` (None: the dataset has none).
        timestamps: ``(L,)`` seconds, or None.
        fps: Frames per second of the dataset, or None.
        state_names: The ``D`` state channel names (gripper channels are found by name).
        action: ``(L, A)`` ``action`` (None: the dataset has none).
        action_names: The ``A`` action channel names (matched to state channels by name).
        gripper_ranges: Gripper group -> its closure's ``(min, max)`` across the dataset,
            passed to the gripper detector as ``value_range`` (an idle hand has no events);
            None: only this episode is known.

    Keys (the list: docs/judge.md, "The four tools", ``signals``):
        frames, duration_s: length in frames and ``frames * dt`` in seconds (dt as in
            :func:`~strands_robots.signals.sampling.frame_period`).
        rms_state_jerk: :func:`rms_state_jerk`; nan_frames: frames with a NaN or infinite state.
        idle_fraction, idle_longest_s: share (and longest run, seconds) of transitions whose
            state speed (moving average over ~1/6 s) is below ``IDLE_SPEED_SHARE`` of the
            episode's 95th-percentile speed.
        gripper_*: per gripper group (:mod:`strands_robots.signals.gripper`) its event count
            and ``[min, max]`` closure; ``gripper_swings`` and ``gripper_range`` the largest
            over the groups (None without one); ``gripper_channels`` their state channels.
        Per state channel, from :mod:`strands_robots.signals.motion`: channel_range
            (``channel_ranges``), end_state, step_typical (``typical_steps``),
            jerk_typical/jerk_peak (``windowed_jerk``), step_height/step_frame
            (``persistent_steps``), step_prominence, residual_* (``residual_signals``, None
            without a pair); action_pairs (by name, then ``correlated_action_channels``,
            marked in action_pair_fitted), pair_fits (``candidate_fits``) and the keys of
            ``frozen_runs``.
    """
    frames = 0 if state is None else int(np.asarray(state).shape[0])
    if state is None and timestamps is not None:
        frames = len(timestamps)
    ts = None if timestamps is None else np.asarray(timestamps, dtype=np.float64)
    dt = frame_period(ts, fps)
    out: dict[str, Any] = {
        "frames": frames,
        "duration_s": None if dt is None else round(frames * dt, 6),
        "rms_state_jerk": None,
        "nan_frames": 0,
        "idle_fraction": None,
        "idle_longest_s": None,
        "gripper_swings": None,
        "gripper_range": None,
        "gripper_channels": [],
        "channel_range": [],
        "end_state": [],
        "step_typical": [],
        "jerk_typical": [],
        "jerk_peak": [],
        "step_height": [],
        "step_frame": [],
        "step_prominence": [],
        "action_pairs": [],
        "action_pair_fitted": [],
        **{key: [] for key in motion.RESIDUAL_KEYS},
        "pair_fits": [],
        "gripper_events": {},
        "gripper_spans": {},
        **motion.NO_FROZEN_RUN,
    }
    if state is None or frames == 0:
        return out
    array = _as_2d(state)
    period = dt or 1.0
    out["rms_state_jerk"] = rms_state_jerk(array, ts, fps)
    out["nan_frames"] = int(np.count_nonzero(~np.isfinite(array).all(axis=1)))
    window = max(1, round(1.0 / (6.0 * dt))) if dt else 1
    speed = np.sqrt(np.sum(np.square(np.diff(array, axis=0)), axis=1)) / period
    speed = speed[np.isfinite(speed)]
    if window > 1 and speed.size >= window:  # moving average
        speed = np.convolve(speed, np.ones(window) / window, mode="valid")
    if speed.size:
        peak = float(np.percentile(speed, 95))
        idle = speed < IDLE_SPEED_SHARE * peak if peak > 0 else np.ones(speed.size, dtype=bool)
        out["idle_fraction"] = round(float(np.mean(idle)), 6)
        out["idle_longest_s"] = round(motion.longest_true_run(idle) * period, 6)
    named = array.shape[1] == len(state_names)
    groups = gripper_groups(state_names) if named else {}
    if groups:
        closures = {name: motion.nan_safe(np.mean, np.nanmean, array[:, idx], axis=1) for name, idx in groups.items()}
        bounds = {
            name: (float(np.nanmin(c)), float(np.nanmax(c))) if np.isfinite(c).any() else (0.0, 0.0)
            for name, c in closures.items()
        }
        largest = max(hi - lo for lo, hi in bounds.values())
        events = {name: count_gripper_events(c, name, (gripper_ranges or {}).get(name)) for name, c in closures.items()}
        out["gripper_range"] = round(largest, 6)
        out["gripper_swings"] = max(events.values()) if largest > 0 else 0
        out["gripper_channels"] = sorted(i for idx in groups.values() for i in idx)
        out["gripper_events"] = events
        out["gripper_spans"] = {name: [_r(lo), _r(hi)] for name, (lo, hi) in bounds.items()}
    out["channel_range"] = _rlist(list(motion.channel_ranges(array)))
    out["end_state"] = _rlist(motion.end_state(array))
    typical, peak_jerk = motion.windowed_jerk(array, period)
    out["jerk_typical"], out["jerk_peak"] = _rlist(typical), _rlist(peak_jerk)
    out["step_typical"] = _rlist(motion.typical_steps(array))
    act = None if action is None else _as_2d(action)
    pairs: list[tuple[int, int]] = []
    fitted: list[bool] = []
    if act is not None and act.shape[0] == array.shape[0]:
        pairs = motion.match_action_channels(
            list(state_names) if named else [],
            list(action_names) if len(action_names) == act.shape[1] else [],
            array.shape[1],
            act.shape[1],
        )
        fitted = [False] * len(pairs)
        lag = max(1, round(motion.CHANGE_SPAN_S / period))
        extra = motion.correlated_action_channels(array, act, pairs, skip=out["gripper_channels"], lag=lag)
        if extra:
            order = sorted([(p, False) for p in pairs] + [(p, True) for p in extra])
            pairs, fitted = [p for p, _ in order], [f for _, f in order]
    else:
        act = None
    heights, where = motion.persistent_steps(array, period, act, pairs)
    out["step_height"], out["step_frame"] = _rlist(heights), where
    out["step_prominence"] = _rlist(motion.step_prominence(heights, array, period))
    out["action_pairs"] = [[i, j] for i, j in pairs]
    out["action_pair_fitted"] = fitted
    for key, values in motion.residual_signals(array, act, pairs, period).items():  # all None without a pair
        out[key] = values if key in ("residual_step_frame", "residual_fit") else _rlist(values)
    out["pair_fits"] = (
        motion.candidate_fits(array, act, pairs, fitted, out["gripper_channels"], period) if act is not None else []
    )
    out.update(motion.frozen_runs(array, act, pairs))
    return out


def signal_columns(dataset: Any) -> list[str]:
    """The columns :func:`signals_of` reads: state, action and timestamp, those present."""
    return [c for c in (STATE_KEY, ACTION_KEY, "timestamp") if c in dataset.features]


def signals_of(dataset: Any, rows: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """:func:`~strands_robots.signals.episode_signals` of one episode's rows of ``dataset``."""
    return episode_signals(
        rows.get(STATE_KEY),
        rows.get("timestamp"),
        dataset.fps,
        list(dataset.state_names),
        rows.get(ACTION_KEY),
        list(dataset.feature_names(ACTION_KEY)),
    )

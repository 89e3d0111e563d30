"""Per-channel motion signals of one episode: windowed jerk, steps, residual trends, frozen runs.

Pure numpy on ``(frames, channels)`` arrays; rules that read them are in ``docs/judge.md``
("Offline judge rules"). Every function tolerates NaN samples and returns None (or a
list holding None) where a value is undefined, never a made-up "typical" number.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

#: End state: the last frames whose median is where a channel ends.
END_FRAMES = 3
#: Windowed jerk: window length in seconds.
JERK_WINDOW_S = 0.5
#: Persistent steps: frames on each side compared, in seconds.
STEP_SIDE_S = 0.2
#: Frozen runs: the action must travel at least this share of a channel's range during the run.
FROZEN_MIN_TRAVEL = 0.02
#: Frozen runs: the catch-up jump after the run (when the episode goes on) must reach this share of a channel's range.
FROZEN_MIN_JUMP = 0.05
#: Pairing and gain: state and action are compared by their changes over this span (seconds), which a slow drift barely moves.
CHANGE_SPAN_S = 2.0
#: Correlation pairing: the least absolute correlation over the episode of a state and an action channel.
MIN_PAIR_CORRELATION = 0.9
#: A kept step of the residual counts as a step (a collision, fitted apart from the trend) when it
#: stands this many times above the residual's 95th-percentile frame-to-frame change; a lesser one is
#: part of the residual's course, and a drift's ramp is not split between a step and a trend.
STEP_FIT_PROMINENCE = 3.0
#: Candidate pairs (:func:`candidate_fits`): the least absolute correlation of their changes.
CANDIDATE_CORRELATION = 0.5
#: :func:`frozen_runs` of an episode without identical rows.
NO_FROZEN_RUN = {"frozen_frames": 0, "frozen_start": None, "frozen_jump": None, "identical_run": 0}
#: The keys of :func:`residual_signals`.
RESIDUAL_KEYS = ("residual_trend", "residual_step", "residual_step_frame", "residual_step_prominence", "residual_fit")


def nan_safe(fast: Callable[..., Any], skip_nan: Callable[..., Any], x: np.ndarray, **kw: Any) -> Any:
    """``fast(x, **kw)`` when every value is finite (several times faster), else ``skip_nan(x, **kw)``
    (``np.nanmedian`` for ``np.median``; an all-NaN slice gives NaN without a warning)."""
    if np.isfinite(x).all():
        return fast(x, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return skip_nan(x, **kw)


def _finite_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _per_channel(reduce: Callable[..., Any], array: np.ndarray) -> list[float | None]:
    """``reduce(column, axis=0)`` of each channel's finite samples; None for a channel without one.

    One call over the whole array when every sample is finite (several times faster).
    """
    if array.shape[0] and np.isfinite(array).all():
        return [float(v) for v in reduce(array, axis=0)]
    columns = (array[:, c][np.isfinite(array[:, c])] for c in range(array.shape[1]))
    return [float(reduce(column, axis=0)) if column.size else None for column in columns]


def _velocity(a: np.ndarray) -> np.ndarray:
    """Per-frame velocity of an action channel (zeros when it has a NaN)."""
    return np.gradient(a) if np.isfinite(a).all() else np.zeros(len(a))


def _change_span(frames: int, dt: float) -> int:
    """Frames of ``CHANGE_SPAN_S`` (at least 1, at most a quarter of the episode)."""
    return int(max(1, min(round(CHANGE_SPAN_S / dt), frames // 4)))


def _change_correlation(
    state: np.ndarray, action: np.ndarray, pairs: Sequence[tuple[int, int]], skip: Sequence[int], span: int
) -> tuple[list[int], list[int], np.ndarray] | None:
    """The free channels, the state channels not in ``pairs`` nor ``skip`` (``free_s``) and the
    action channels not in ``pairs`` (``free_a``), and the absolute Pearson correlation
    (``(len(free_s), len(free_a))``, NaN for a flat channel) of their changes over ``span`` frames
    (a slow drift or an offset does not move them), over the frames where all are finite; None
    without a free channel on either side or with fewer than 8 such frames."""
    used_s, used_a = {i for i, _ in pairs} | set(skip), {j for _, j in pairs}
    free_s = [i for i in range(state.shape[1]) if i not in used_s]
    free_a = [j for j in range(action.shape[1]) if j not in used_a]
    if not free_s or not free_a:
        return None
    x = state[:, free_s].astype(np.float64)
    a = action[:, free_a].astype(np.float64)
    x, a = x[span:] - x[:-span], a[span:] - a[:-span]
    ok = np.isfinite(x).all(axis=1) & np.isfinite(a).all(axis=1)
    if np.count_nonzero(ok) < 8:
        return None
    x, a = x[ok] - x[ok].mean(axis=0), a[ok] - a[ok].mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.abs(x.T @ a) / np.outer(np.sqrt((x**2).sum(axis=0)), np.sqrt((a**2).sum(axis=0)))
    return free_s, free_a, corr


def channel_ranges(array: np.ndarray) -> np.ndarray:
    """Robust range (99th - 1st percentile) of each channel, NaN where all samples are NaN."""
    if not array.size:
        return np.zeros(array.shape[1] if array.ndim == 2 else 0)
    hi, lo = nan_safe(np.percentile, np.nanpercentile, array, q=[99, 1], axis=0)
    return np.asarray(hi - lo, dtype=np.float64)


def end_state(array: np.ndarray, frames: int = END_FRAMES) -> list[float | None]:
    """Where each channel ends: the median of its last ``frames`` finite samples (None if none).

    A complete demonstration ends in its task's final pose (the object placed, the arm
    back home); a truncated one ends wherever the motion was cut.
    """
    return _per_channel(lambda column, axis: np.median(column[-frames:], axis=axis), array)


def typical_steps(array: np.ndarray) -> list[float | None]:
    """Median absolute frame-to-frame change ``|x[t+1] - x[t]|`` of each channel (state units;
    None for a channel without two consecutive finite frames)."""
    return _per_channel(np.median, np.abs(np.diff(array, axis=0)))


def windowed_jerk(array: np.ndarray, dt: float) -> tuple[list[float | None], list[float | None]]:
    """Median and peak windowed RMS jerk of each channel (state units per second cubed).

    The third difference ``Δ³x / dt³`` of each channel is squared and averaged over
    sliding windows of ``JERK_WINDOW_S`` (at least 3 samples, NaN samples left out);
    per channel the median and the maximum of the windows' square roots are returned.

    Args:
        array: ``(L, D)`` state.
        dt: Frame period in seconds.

    Returns:
        ``(typical, peak)``, two lists of ``D`` values; None for a channel with fewer
        than one full window of finite third differences (or when ``L < 4``).
    """
    frames, dims = array.shape
    if frames < 4:
        return [None] * dims, [None] * dims
    third = np.diff(array, n=3, axis=0) / dt**3
    finite = np.isfinite(third)
    squared = np.where(finite, third, 0.0) ** 2
    window = int(max(3, min(round(JERK_WINDOW_S / dt), third.shape[0])))
    if window > third.shape[0]:  # 4 or 5 frames: fewer third differences than the shortest window
        return [None] * dims, [None] * dims
    csum = np.concatenate([np.zeros((1, dims)), np.cumsum(squared, axis=0)])
    ccount = np.concatenate([np.zeros((1, dims)), np.cumsum(finite, axis=0)])
    sums = csum[window:] - csum[:-window]
    counts = ccount[window:] - ccount[:-window]
    with np.errstate(invalid="ignore", divide="ignore"):
        rms = np.sqrt(np.where(counts >= max(1, window // 2), sums / np.maximum(counts, 1), np.nan))
    return _per_channel(np.median, rms), _per_channel(np.max, rms)


def persistent_steps(
    state: np.ndarray, dt: float, action: np.ndarray | None = None, pairs: Sequence[tuple[int, int]] = ()
) -> tuple[list[float | None], list[int | None]]:
    """Largest kept one-frame jump of each state channel that its action does not explain.

    At each transition ``t -> t+1`` the step is ``min(|x[t+1] - x[t]|, |median(after) -
    median(before)|)`` with ``STEP_SIDE_S`` of frames on each side (at least 3, odd): a step (the value
    jumps and stays, as when a collision knocks the arm) scores its height, a one-frame
    spike that comes back scores ~0, and smooth motion scores its per-frame speed. On a
    channel with a matching action channel, the action's own largest step (same score)
    over the ``2 * side`` frames up to ``t`` (the command leads the state) is subtracted:
    a jump the robot was commanded to make is no collision.

    Args:
        state: ``(L, D)`` state.
        dt: Frame period in seconds.
        action: ``(L, A)`` action, or None.
        pairs: ``(state channel, action channel)`` pairs (:func:`match_action_channels`).

    Returns:
        ``(heights, frames)``: per state channel the largest score (state units) and the
        frame index after the jump; None for a channel too short or all-NaN.
    """
    frames, dims = state.shape
    side = int(max(3, round(STEP_SIDE_S / dt))) | 1  # odd, so one spike never moves a median
    if frames < 4 * side + 1:
        return [None] * dims, [None] * dims
    medians = nan_safe(np.median, np.nanmedian, sliding_window_view(state, side, axis=0), axis=-1)  # (L-side+1, D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t = np.arange(side - 1, frames - side)  # medians[k] covers frames k .. k+side-1
        shift = np.abs(medians[t + 1] - medians[t - side + 1])
        jump = np.abs(state[t + 1] - state[t])
        score = np.where(np.isfinite(jump) & np.isfinite(shift), np.fmin(jump, shift), np.nan)
        if action is not None and pairs:
            a_medians = nan_safe(np.median, np.nanmedian, sliding_window_view(action, side, axis=0), axis=-1)
            a_shift = np.abs(a_medians[t + 1] - a_medians[t - side + 1])
            a_jump = np.abs(action[t + 1] - action[t])
            a_score = np.nan_to_num(np.fmin(a_jump, a_shift), nan=0.0)
            # the largest commanded step over the lead window [t - 2*side, t]
            lead = sliding_window_view(np.pad(a_score, ((2 * side, 0), (0, 0))), 2 * side + 1, axis=0).max(axis=-1)
            for i, j in pairs:
                score[:, i] = np.clip(score[:, i] - lead[:, j], 0.0, None)
    found = np.isfinite(score).any(axis=0)
    k = np.nanargmax(np.where(found, score, 0.0), axis=0)
    heights = [float(score[k[c], c]) if found[c] else None for c in range(dims)]
    return heights, [int(t[k[c]] + 1) if found[c] else None for c in range(dims)]


def step_prominence(heights: Sequence[float | None], state: np.ndarray, dt: float) -> list[float | None]:
    """How much each channel's largest kept step stands out from its own frame-to-frame steps.

    ``height / p95(|Δx|)`` per channel: a collision is one jump far above the channel's
    usual steps (large), tremor makes every step large (about 1). None where the height
    is None; 0 for a channel that never moves.
    """
    steps = np.abs(np.diff(state, axis=0))
    if steps.shape[0] < 2:
        return [None] * len(heights)
    usual = _per_channel(partial(np.percentile, q=95), steps)
    return [None if h is None else float(h / u) if u else 0.0 for h, u in zip(heights, usual, strict=True)]


def match_action_channels(
    state_names: Sequence[str], action_names: Sequence[str], state_dims: int, action_dims: int
) -> list[tuple[int, int]]:
    """``(state channel, action channel)`` pairs that command the same joint.

    By name when both features name their channels (exact, case-insensitive); by
    position when neither is named and the widths agree; otherwise only the named
    matches (possibly none).
    """
    if state_names and action_names:
        index = {str(n).lower(): j for j, n in enumerate(action_names)}
        return [(i, index[str(n).lower()]) for i, n in enumerate(state_names) if str(n).lower() in index]
    if not state_names and not action_names and state_dims == action_dims:
        return [(i, i) for i in range(state_dims)]
    return []


def correlated_action_channels(
    state: np.ndarray,
    action: np.ndarray,
    pairs: Sequence[tuple[int, int]] = (),
    skip: Sequence[int] = (),
    lag: int = 1,
) -> list[tuple[int, int]]:
    """More ``(state channel, action channel)`` pairs found by correlation over the episode.

    For the state channels not in ``pairs`` (nor in ``skip``) and the action channels
    not in ``pairs``, the absolute Pearson correlation of every state/action pair of their
    changes over ``lag`` frames (so a drift or an offset does not hide the pair), over the
    episode's finite frames; pairs of at least ``MIN_PAIR_CORRELATION`` are taken greedily,
    strongest first, each channel once. For robots whose action names its channels
    differently from the state (a leader arm's joints driving a follower's), this finds
    which command drives which joint.

    Returns:
        The new pairs, sorted by state channel (``pairs`` not included).
    """
    frames = state.shape[0]
    if action.shape[0] != frames:
        return []
    free = _change_correlation(state, action, pairs, skip, int(max(1, min(lag, frames // 4))))
    if free is None:  # also with fewer than 8 frames
        return []
    free_s, free_a, corr = free
    corr = np.where(np.isfinite(corr), corr, 0.0)
    found: list[tuple[int, int]] = []
    for flat in np.argsort(-corr, axis=None):
        r, c = divmod(int(flat), corr.shape[1])
        if corr[r, c] < MIN_PAIR_CORRELATION:
            break
        if any(r == fr or c == fc for fr, fc in found):
            continue
        found.append((r, c))
    return sorted((free_s[r], free_a[c]) for r, c in found)


def residual_signals(
    state: np.ndarray,
    action: np.ndarray | None,
    pairs: Sequence[tuple[int, int]],
    dt: float,
) -> dict[str, list[Any]]:
    """State-vs-action residual of each matched state channel: its kept step and its slow trend.

    The residual is ``r = x - g·a``, ``g`` the least-squares slope (with an intercept) of
    the state's changes on the action's changes over ``CHANGE_SPAN_S`` (a leader arm's
    units, a joint's calibration, a sag under load); a slow drift adds a steady rate to
    those changes, which the intercept takes, so the gain does not absorb it. Per channel:

    - ``residual_step``: the largest kept one-frame jump of ``r`` (as in
      :func:`persistent_steps`: ``min(|Δr|, shift of the medians of STEP_SIDE_S on each
      side)``): the state jumped and stayed where its command did not (a collision);
      ``residual_step_frame`` the frame after it.
    - ``residual_step_prominence``: that step over the 95th percentile of ``|Δr|``:
      one jump far above the residual's own frame-to-frame changes.
    - ``residual_trend``: ``γ`` of the least-squares fit ``r = α + β·v + γ·s + δ·H``
      (``v`` the action's per-frame velocity, ``s`` the progress 0..1, ``H`` 0 before and
      1 from the step's frame on): how far the state has drifted from its command by the
      end, net of tracking lag and of a step, so a collision's kept step is not read as
      drift.

    - ``residual_fit``: what a dataset-wide map needs (:func:`pooled_trend`): ``[n, Σa,
      Σa², Σx, Σx·a, γ(x), γ(a)]``, the sums over the finite frames and the ``γ`` the
      same fit gives for ``x`` and for ``a`` alone, so the trend of ``x - (c0 + c1·a)``
      for any dataset map ``c0 + c1·a`` is ``γ(x) - c1·γ(a)``.

    Returns:
        ``{"residual_step": [...], "residual_step_frame": [...],
        "residual_step_prominence": [...], "residual_trend": [...], "residual_fit": [...]}``,
        one entry per state channel, None where the channel has no pair (every channel
        without an ``action``) or fewer than 8 finite frames.
    """
    frames, dims = state.shape
    out: dict[str, list[Any]] = {key: [None] * dims for key in RESIDUAL_KEYS}
    if frames < 8 or not pairs or action is None:
        return out
    lag = _change_span(frames, dt)
    residuals = np.full((frames, len(pairs)), np.nan)
    velocity = np.zeros((frames, len(pairs)))
    gains: list[float] = []
    for k, (i, j) in enumerate(pairs):
        x = state[:, i].astype(np.float64)
        a = action[:, j].astype(np.float64)
        dx, da = x[lag:] - x[:-lag], a[lag:] - a[:-lag]
        ok = np.isfinite(dx) & np.isfinite(da)
        gain = 1.0
        if np.count_nonzero(ok) >= 8:
            cx, ca = dx[ok] - dx[ok].mean(), da[ok] - da[ok].mean()  # a drift's steady rate is the intercept
            if float(np.dot(ca, ca)) > 0:
                gain = float(np.dot(cx, ca) / np.dot(ca, ca))
        residuals[:, k] = x - gain * a
        velocity[:, k] = _velocity(a)
        gains.append(gain)
    heights, where = persistent_steps(residuals, dt)
    prominence = step_prominence(heights, residuals, dt)
    for k, (i, j) in enumerate(pairs):
        step = where[k]
        stands = prominence[k]
        standing = stands is not None and stands >= STEP_FIT_PROMINENCE
        fit = trend_fit(state[:, i], action[:, j], velocity[:, k], step if standing else None)
        if fit is None:
            continue
        out["residual_trend"][i] = _finite_or_none(fit[5] - gains[k] * fit[6])  # the fit is linear in r
        out["residual_fit"][i] = fit
        out["residual_step"][i] = heights[k]
        out["residual_step_frame"][i] = where[k]
        out["residual_step_prominence"][i] = prominence[k]
    return out


def trend_fit(x: np.ndarray, a: np.ndarray, velocity: np.ndarray, step: int | None = None) -> list[Any] | None:
    """``[n, Σa, Σa², Σx, Σx·a, γ(x), γ(a)]`` of one state channel ``x`` and one action channel ``a``
    (see :func:`residual_signals`): the sums over the finite frames and the progress coefficient
    ``γ`` of the least-squares fit ``y = α + β·velocity + γ·s + δ·H`` for ``y = x`` and ``y = a``
    (``H`` 0 before ``step`` and 1 from it; no ``H`` without a step). None with fewer than 8 finite frames.
    """
    x = np.asarray(x, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    frames = len(x)
    ok = np.isfinite(x) & np.isfinite(a)
    if np.count_nonzero(ok) < 8:
        return None
    columns = [np.ones(frames), velocity, np.linspace(0.0, 1.0, frames)]
    if step is not None and 0 < step < frames:
        columns.append((np.arange(frames) >= step).astype(np.float64))
    design = np.stack(columns, axis=1)[ok]
    proj, *_ = np.linalg.lstsq(design, np.stack([x[ok], a[ok]], axis=1), rcond=None)
    xs, as_ = x[ok], a[ok]
    return [
        float(ok.sum()),
        float(as_.sum()),
        float(np.dot(as_, as_)),
        float(xs.sum()),
        float(np.dot(xs, as_)),
        _finite_or_none(proj[2, 0]),
        _finite_or_none(proj[2, 1]),
    ]


def candidate_fits(
    state: np.ndarray,
    action: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    fitted: Sequence[bool],
    skip: Sequence[int],
    dt: float,
) -> list[list[Any]]:
    """:func:`trend_fit` of the other plausible pairs of the channels paired by correlation.

    Where names do not pair a state channel with its command, correlation over one episode may
    pair it otherwise than most episodes do (two joints that move together). For every state
    channel that is not paired by name (nor in ``skip``) and every action channel that is not
    paired by name, a pair not in ``pairs`` whose changes over ``CHANGE_SPAN_S`` correlate at
    least ``CANDIDATE_CORRELATION`` (absolute) gets its fit, so the dataset profile can judge
    the drift of the pair most episodes make (``DatasetProfile.trends``).

    Returns:
        ``[[state channel, action channel, *fit], ...]``.
    """
    named = [p for p, f in zip(pairs, fitted, strict=True) if not f]
    free = _change_correlation(state, action, named, skip, _change_span(state.shape[0], dt))
    if free is None:  # also with fewer than 8 frames
        return []
    free_s, free_a, corr = free
    out: list[list[Any]] = []
    for r, i in enumerate(free_s):
        for c, j in enumerate(free_a):
            if (i, j) in pairs or not np.isfinite(corr[r, c]) or corr[r, c] < CANDIDATE_CORRELATION:
                continue
            column = action[:, j].astype(np.float64)
            fit = trend_fit(state[:, i], column, _velocity(column))
            if fit is not None:
                out.append([i, j, *fit])
    return out


def pooled_slope(fits: Sequence[Sequence[float]]) -> float | None:
    """Least-squares slope ``c1`` of ``x ~ c0 + c1·a`` over every frame of many episodes.

    Args:
        fits: ``residual_fit`` rows (``[n, Σa, Σa², Σx, Σx·a, ...]``) of one state/action pair.

    Returns:
        The slope, or None when the action never varies.
    """
    n, sa, saa, sx, sxa = (float(sum(f[k] for f in fits)) for k in range(5))
    denom = n * saa - sa * sa
    if n < 2 or not denom > 0:
        return None
    return (n * sxa - sx * sa) / denom


def pooled_trend(fit: Sequence[float | None] | None, slope: float | None) -> float | None:
    """Drift of one episode's state from the dataset-wide map of its action: ``γ(x) - c1·γ(a)``.

    Returns:
        The trend in state units, None when the fit or the slope is unknown.
    """
    if fit is None or slope is None or fit[5] is None or fit[6] is None:
        return None
    return float(fit[5]) - slope * float(fit[6])


def frozen_runs(state: np.ndarray, action: np.ndarray | None, pairs: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """The longest stretch where the state stream stopped while the robot was commanded to move.

    A *frozen run* is a maximal run of consecutive, bit-identical state rows (the
    stream repeated its last value). It counts when, over the run, the matched action
    channels move (max - min over the run) at least ``FROZEN_MIN_TRAVEL`` of a channel's
    range and, unless the run lasts to the end of the episode, the state then catches up
    with a jump of at least ``FROZEN_MIN_JUMP`` of a channel's range (without an action:
    that jump alone). A robot that holds still holds its action too, so an idle pause is
    not a frozen run; a state stream that starts late and then moves off smoothly (no
    catch-up) is a start-up delay, not a stream that froze.

    Returns:
        ``{"frozen_frames": longest counted run in frames (0 if none), "frozen_start":
        its first frame or None, "frozen_jump": the catch-up jump after it as a share of
        the channel range (largest channel) or None, "identical_run": the longest run of
        identical rows, counted or not}``.
    """
    frames = state.shape[0]
    result: dict[str, Any] = dict(NO_FROZEN_RUN)
    if frames < 3:
        return result
    same = np.all(state[1:] == state[:-1], axis=1)  # NaN rows never compare equal
    if not same.any():
        result["identical_run"] = 1
        return result
    ranges = channel_ranges(state)
    ranges = np.where(np.isfinite(ranges) & (ranges > 0), ranges, np.nan)
    edges = np.diff(np.concatenate([[0], same.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)  # transitions [s, e) are "same"
    result["identical_run"] = int((ends - starts).max()) + 1
    best = 0
    with warnings.catch_warnings():  # an all-NaN row or action channel compares as not moving
        warnings.simplefilter("ignore", RuntimeWarning)
        for s, e in zip(starts, ends, strict=True):
            run = int(e - s) + 1  # rows s .. e are identical
            if run <= best:
                continue
            jump = float(np.nanmax(np.abs(state[e + 1] - state[e]) / ranges)) if e + 1 < frames else np.nan
            known = bool(np.isfinite(jump))
            if action is not None and pairs:
                seg = action[s : e + 1, [j for _, j in pairs]].astype(np.float64)
                travel = np.nanmax(seg, axis=0) - np.nanmin(seg, axis=0)
                moved = bool(np.any(travel >= FROZEN_MIN_TRAVEL * ranges[[i for i, _ in pairs]]))
            else:
                moved = known and jump >= FROZEN_MIN_JUMP
            if moved and (not known or jump >= FROZEN_MIN_JUMP):
                best = run
                result.update(frozen_frames=run, frozen_start=int(s), frozen_jump=round(jump, 6) if known else None)
    return result


def longest_true_run(mask: np.ndarray) -> int:
    """Length of the longest run of True in a 1-D boolean array."""
    if mask.size == 0 or not mask.any():
        return 0
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())

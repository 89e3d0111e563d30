"""The offline judge's rules: execution grade from an episode's signals vs its dataset.

Each rule that fires raises a :class:`Flag` (severity ``low`` or ``medium``, a
failure_mode or None, a sentence of evidence); :func:`grade_episode` turns the flags into
a quality, a failure_mode, a note and a ``success_opinion``. The rules, their thresholds
(the constants below), the precedence and the dispute rule are docs/judge.md, "Offline
judge rules"; ``benchmarks/judge_faults.py`` measures them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strands_robots.judges.profile import MIN_EPISODES, DatasetProfile, RobustStat

JUDGE_MODEL = "heuristic-v1"

#: Jerk (noise): z of a channel's typical windowed jerk, second largest over arm channels.
JERK_MEDIUM_Z, JERK_LOW_Z = 3.0, 5.0
#: Jerk (noise): a low grade also needs a tremor of this many times the channel's typical
#: frame-to-frame step (the dataset median of ``step_typical``): the tremor's amplitude is
#: estimated from the windowed jerk as white noise, ``jerk * dt**3 / sqrt(20)``.
JERK_LOW_NOISE = 5.0
#: Jerk (spikes): z of a channel's peak windowed jerk, largest over arm channels.
SPIKE_MEDIUM_Z, SPIKE_LOW_Z = 4.0, 12.0
#: Collision: z of a channel's largest kept one-frame step, largest over arm channels; the
#: grade is low when the step is at least COLLISION_LOW_SHARE of the channel's range.
STEP_MEDIUM_Z, COLLISION_LOW_SHARE = 3.0, 0.14
#: A jerk spike is a collision when the same channel keeps a step of this share of its range
#: standing this far above its frame-to-frame steps (a spike that comes back keeps none).
SPIKE_STEP_SHARE, SPIKE_STEP_PROMINENCE = 0.05, 2.0
#: Drift: z of a channel's state-vs-action trend (against the dataset-wide map of its
#: action), largest over matched arm channels; low when the trend is DRIFT_LOW_SHARE of the range.
DRIFT_MEDIUM_Z, DRIFT_LOW_SHARE = 6.0, 0.17
#: A collision's step must stand this far above the channel's own 95th-percentile frame step.
MIN_STEP_PROMINENCE = 3.0
#: A step or drift must also be at least this share of the channel's typical range.
MIN_SHARE = 0.02
#: Frozen stream: longest counted run, as a share of the episode (and at least FROZEN_MIN_FRAMES).
FROZEN_MEDIUM_SHARE, FROZEN_LOW_SHARE, FROZEN_MIN_FRAMES = 0.03, 0.2, 3
#: Camera occlusion: share of sampled frames that are dark, flat or partly covered, on the worst camera.
OCCLUDED_MEDIUM_SHARE, OCCLUDED_LOW_SHARE = 0.1, 0.35
#: Regrasp: gripper events above the dataset median.
SWINGS_MEDIUM_EXCESS, SWINGS_LOW_EXCESS = 2, 5
MIN_GRIPPER_RANGE_SHARE = 0.5
#: Idle / long: robust z of idle_fraction or idle_longest_s / of log duration.
IDLE_Z, LONG_Z = 4.0, 3.5
#: Idle: a single pause of at least this share of the episode makes the grade low.
IDLE_LOW_SHARE = 0.3
#: Incomplete: robust z of log length against the episode's task (alone; with a failed
#: verdict or an end pose away from the dataset's), and the length ratio of a low grade.
SHORT_Z, SHORT_END_Z, SHORT_LOW_RATIO = -2.5, -1.5, 0.5
#: Incomplete: robust z of the end offset (how far the episode ends from where the others end);
#: an episode ending that far off is incomplete at z <= SHORT_END_Z or below SHORT_END_RATIO of its task's median.
END_OFFSET_Z, SHORT_END_RATIO = 3.0, 0.7
#: Incomplete: an episode ending this far off (robust z of the end offset) is incomplete whatever its
#: length (a task whose episodes have several typical lengths), unless a tremor was flagged (noise moves the end pose).
END_ALONE_Z = 5.0

#: failure_mode of the most severe flag; among flags of one severity, the first rule here: a
#: recording fault, then what makes the episode unusable (a collision, a truncation), then the
#: motion's quality, and a lone jerk spike (common in teleoperation) last.
MODE_PRECEDENCE = (
    "nan",
    "uncomputable",
    "frozen",
    "occlusion",
    "collision",
    "short",
    "jerk",
    "drift",
    "regrasp",
    "spike",
)

#: A channel's range is taken as at least this share of the largest arm-channel range.
RANGE_FLOOR_SHARE = 0.2
#: Absolute thresholds (too few episodes to compare), as shares of a channel's range.
ABS_ROUGHNESS = 0.03  # typical |Δ³x| per frame / range
ABS_SPIKE = 0.3  # peak windowed |Δ³x| per frame / range
ABS_STEP = 0.15
ABS_DRIFT = 1.5  # real teleoperation residuals wander far: only a gross drift counts
ABS_SWINGS = 6
ABS_IDLE = 0.5


@dataclass(frozen=True)
class Flag:
    """One rule that fired."""

    severity: str  # "low" | "medium"
    failure_mode: str | None
    evidence: str
    rule: str = ""


@dataclass(frozen=True)
class Grade:
    """What the offline judge writes: the judge block's fields."""

    quality: str
    failure_mode: str | None
    note: str
    flags: tuple[Flag, ...] = ()
    success_opinion: bool | None = None


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _severity(value: float, medium: float, low: float) -> str | None:
    if value >= low:
        return "low"
    if value >= medium:
        return "medium"
    return None


def _at(values: Sequence[Any], index: int) -> Any:
    """``values[index]``, None past the end."""
    return values[index] if index < len(values) else None


def _channel_name(names: Sequence[str], index: int) -> str:
    return str(names[index]) if 0 <= index < len(names) else f"channel {index}"


def _arm_channels(signals: dict[str, Any]) -> list[int]:
    grippers = set(signals.get("gripper_channels") or [])
    width = len(signals.get("jerk_typical") or [])
    return [c for c in range(width) if c not in grippers]


def _z(stat: RobustStat | None, value: float | None) -> float | None:
    if stat is None or value is None:
        return None
    return stat.z(abs(value)) if abs(value) > 0 else None


def _zs(
    profile: DatasetProfile, name: str, values: Sequence[float | None], channels: Sequence[int]
) -> list[tuple[float, int]]:
    """``(z, channel)`` of a per-channel signal over ``channels``, largest first."""
    zs = ((profile.channel_z(name, c, values[c]), c) for c in channels if c < len(values))
    return sorted(((z, c) for z, c in zs if z is not None and math.isfinite(z)), reverse=True)


def _range_of(profile: DatasetProfile | None, signals: dict[str, Any], c: int) -> float | None:
    """The channel's typical range (dataset median, else its own), floored at
    ``RANGE_FLOOR_SHARE`` of the largest arm-channel range: a joint the task never moves
    has a range of sensor noise, and shares of it mean nothing."""
    ranges = signals.get("channel_range") or []
    stat = profile.channel("channel_range", c) if profile is not None else None
    typical = stat.typical() if stat is not None else None
    value = typical or _at(ranges, c)  # the dataset's, else the episode's own
    arm = [ranges[i] for i in _arm_channels(signals) if i < len(ranges) and ranges[i]]
    floor = RANGE_FLOOR_SHARE * max(arm) if arm else 0.0
    value = max(float(value or 0.0), floor)
    return value if value > 0 else None


def tremor_amplitude(jerk: float | None, dt: float, step: RobustStat | None) -> float | None:
    """A tremor's amplitude in units of the channel's typical frame-to-frame step.

    White noise of standard deviation ``s`` has a third difference of RMS ``sqrt(20) * s``,
    so a windowed jerk ``j`` (per second cubed) carries noise of about ``j * dt**3 / sqrt(20)``.
    None without a jerk, a frame period or the dataset's typical step.
    """
    typical = step.typical() if step is not None else None
    if jerk is None or not dt or not typical:
        return None
    return float(jerk) * dt**3 / math.sqrt(20.0) / typical


def uncomputable(signals: dict[str, Any]) -> str | None:
    """Why an episode's motion signals could not be computed, or None when they could."""
    frames = int(signals.get("frames") or 0)
    if frames < 4:
        return f"the episode has {frames} frame(s), too few for motion signals (jerk needs at least 4)"
    typical = signals.get("jerk_typical")
    if typical is not None and len(typical) == 0 and signals.get("rms_state_jerk") is None:
        return "the episode has no observation.state to compute motion signals from"
    if typical and all(v is None for v in typical):
        return "no channel of the state has a finite stretch long enough for motion signals (NaN values)"
    return None


def _frozen_flag(signals: dict[str, Any]) -> Flag | None:
    run = int(signals.get("frozen_frames") or 0)
    frames = max(1, int(signals.get("frames") or 1))
    severity = _severity(run / frames, FROZEN_MEDIUM_SHARE, FROZEN_LOW_SHARE) if run >= FROZEN_MIN_FRAMES else None
    if severity is None:
        return None
    start = signals.get("frozen_start")
    jump = signals.get("frozen_jump")
    catch = f", then a catch-up jump of {jump:.0%} of a channel's range" if isinstance(jump, int | float) else ""
    return Flag(
        severity,
        "other",
        f"frozen state stream: {run} identical state frames from frame {start} while the action kept moving"
        f"{catch} (a recording fault, not motion)",
        "frozen",
    )


def _occlusion_flag(signals: dict[str, Any]) -> Flag | None:
    stats = signals.get("frame_stats") or {}
    share = stats.get("occluded_share")
    severity = None if share is None else _severity(float(share), OCCLUDED_MEDIUM_SHARE, OCCLUDED_LOW_SHARE)
    if severity is None:
        return None
    cameras: dict[str, dict[str, Any]] = stats.get("cameras") or {}
    worst: tuple[str | None, dict[str, Any]] = max(
        cameras.items(), key=lambda kv: kv[1].get("occluded", 0), default=(None, {})
    )
    return Flag(
        severity,
        "camera_occlusion",
        f"camera {worst[0]}: {worst[1].get('occluded')} of {stats.get('sampled_frames')} sampled frames are dark, "
        f"flat or partly covered (frames {worst[1].get('occluded_frames')})",
        "occlusion",
    )


def _step_candidates(
    signals: dict[str, Any], arm: Sequence[int], min_prominence: float = 0.0
) -> list[tuple[int, str, float, float | None]]:
    """``(channel, signal, height, frame)`` of each arm channel's kept step that stands out.

    A channel with a matching action channel is judged on its state-vs-action residual
    (``residual_step``: a jump the command does not make); one without, on the state's
    own kept step net of the action (``step_height``). Either must stand
    ``min_prominence`` (default ``MIN_STEP_PROMINENCE``) times above the signal's own
    frame-to-frame steps (tremor raises every step; only a jump that stands out can be a
    collision).
    """
    min_prominence = min_prominence or MIN_STEP_PROMINENCE
    kinds = {  # signal -> its (heights, prominences, frames), the residual first
        name: [signals.get(key) or [] for key in (name, f"{prefix}_prominence", f"{prefix}_frame")]
        for name, prefix in (("residual_step", "residual_step"), ("step_height", "step"))
    }
    measured = any(prominences for _heights, prominences, _frames in kinds.values())
    out = []
    for c in arm:
        name = next((n for n, (heights, _p, _f) in kinds.items() if _at(heights, c) is not None), None)
        if name is None:
            continue
        heights, prominences, frames = kinds[name]
        prominence = _at(prominences, c)
        if measured and (prominence is None or prominence < min_prominence):
            continue
        out.append((c, name, float(heights[c]), _at(frames, c)))
    return out


def _collision_flag(
    signals: dict[str, Any], profile: DatasetProfile, names: Sequence[str], arm: Sequence[int]
) -> Flag | None:
    candidates = _step_candidates(signals, arm)
    if profile.comparable:
        scored = []
        for c, name, height, frame in candidates:
            z = profile.channel_z(name, c, height)
            scale = _range_of(profile, signals, c)
            if z is not None and math.isfinite(z) and (scale is None or height >= MIN_SHARE * scale):
                scored.append((z, c, height, frame, scale))
        if not scored:
            return None
        z, c, height, frame, scale = max(scored, key=lambda t: t[0])
        if z < STEP_MEDIUM_Z:
            return None
        severity = "low" if scale is not None and height >= COLLISION_LOW_SHARE * scale else "medium"
        share = f", {height / scale:.0%} of its range" if scale else ""
        return Flag(
            severity,
            "collision",
            f"{_channel_name(names, c)} jumps {_fmt(height)} in one frame near frame {frame} and stays there{share}, "
            f"unexplained by the action (robust z {z:.1f} against that channel's typical largest step)",
            "collision",
        )
    shares = [(height / scale, c) for c, _n, height, _f in candidates if (scale := _range_of(None, signals, c))]
    ratio, c = max(shares, key=lambda t: t[0], default=(0.0, -1))  # the largest share of a channel's range
    if ratio < ABS_STEP:
        return None
    return Flag(
        "medium",
        "collision",
        f"{_channel_name(names, c)} jumps {ratio:.0%} of its range in one frame and stays there",
        "collision",
    )


def _idle_flag(signals: dict[str, Any], profile: DatasetProfile, frozen: Flag | None) -> Flag | None:
    """Idle time or one long pause far above the dataset's (comparable datasets only)."""
    idle = signals.get("idle_fraction")
    stat = profile.stats.get("idle_fraction")
    z_run = _z(profile.stats.get("idle_longest_s"), signals.get("idle_longest_s"))
    z_idle = max((z for z in (_z(stat, idle), z_run) if z is not None), default=None)
    if z_idle is None or z_idle < IDLE_Z or idle is None or frozen is not None:
        return None
    typical_idle = f" vs dataset median {stat.typical():.0%}" if stat else ""
    duration = signals.get("duration_s") or 0.0
    pause = (signals.get("idle_longest_s") or 0.0) / duration if duration else 0.0
    return Flag(
        "low" if pause >= IDLE_LOW_SHARE else "medium",
        None,
        f"idle {idle:.0%} of the time{typical_idle}, longest pause "
        f"{_fmt(signals.get('idle_longest_s') or 0)} s (hesitation)",
        "idle",
    )


def flags_for(
    signals: dict[str, Any],
    profile: DatasetProfile,
    verdict: dict[str, Any] | None,
    *,
    episode: int | None = None,
    state_names: Sequence[str] = (),
) -> list[Flag]:
    """Every rule of ``docs/judge.md`` ("Offline judge rules") that fires for one episode."""
    nan_frames = int(signals.get("nan_frames") or 0)
    nan = (
        Flag("low", "other", f"{nan_frames} frame(s) have NaN/inf state values (a recording fault)", "nan")
        if nan_frames
        else None
    )
    frozen = _frozen_flag(signals)
    flags = [f for f in (nan, frozen, _occlusion_flag(signals)) if f is not None]
    if uncomputable(signals) is not None:
        return flags
    names = list(state_names)
    arm = _arm_channels(signals)
    comparable = profile.comparable
    typical, peak = signals.get("jerk_typical") or [], signals.get("jerk_peak") or []
    pairs = [tuple(p) for p in signals.get("action_pairs") or []]
    trends = profile.trends(signals) if comparable else list(signals.get("residual_trend") or [])
    frames = int(signals.get("frames") or 0)
    dt = (signals.get("duration_s") or 0) / frames if frames else 0

    collision = _collision_flag(signals, profile, names, arm)
    idle_flag = _idle_flag(signals, profile, frozen) if comparable else None
    tremor: Flag | None = None
    if collision is not None and frozen is None:
        flags.append(collision)

    # jerk: noise (typical windowed jerk, second-largest arm channel) and spikes (peak)
    if comparable:
        noise = _zs(profile, "jerk_typical", typical, arm)
        spikes = _zs(profile, "jerk_peak", peak, arm)
        pick = noise[1] if len(noise) > 1 else (noise[0] if noise else None)
        if pick is not None and (severity := _severity(pick[0], JERK_MEDIUM_Z, JERK_LOW_Z)):
            z, c = pick
            amplitude = tremor_amplitude(typical[c], dt, profile.channel("step_typical", c))
            if severity == "low" and (amplitude is None or amplitude < JERK_LOW_NOISE):
                severity = "medium"
            tremor = Flag(
                severity,
                "jerky_motion",
                f"tremor: windowed jerk of {_channel_name(names, c)} {_fmt(typical[c])} vs that channel's dataset "
                f"median {_fmt(profile.channel('jerk_typical', c).typical())} (robust z {z:.1f}; "  # type: ignore[union-attr]
                f"{sum(1 for z_, _ in noise if z_ >= JERK_MEDIUM_Z)} arm channel(s) above z {JERK_MEDIUM_Z:g})",
                "jerk",
            )
            flags.append(tremor)
        elif spikes and collision is None and frozen is None:
            z, c = spikes[0]
            scale = _range_of(profile, signals, c)
            candidates = _step_candidates(signals, arm, SPIKE_STEP_PROMINENCE)
            kept = next((h for ch, _n, h, _f in candidates if ch == c), None)
            if (severity := _severity(z, SPIKE_MEDIUM_Z, SPIKE_LOW_Z)) and (
                kept is not None and scale is not None and kept >= SPIKE_STEP_SHARE * scale
            ):
                collision = Flag(
                    "low" if kept >= COLLISION_LOW_SHARE * scale else "medium",
                    "collision",
                    f"{_channel_name(names, c)} jumps {_fmt(kept)} in one frame and stays there (a jerk spike of "
                    f"robust z {z:.1f} that does not come back, unexplained by the action)",
                    "collision",
                )
                flags.append(collision)
            elif severity:
                flags.append(
                    Flag(
                        severity,
                        "jerky_motion",
                        f"jerk spike on {_channel_name(names, c)}: peak windowed jerk {_fmt(peak[c])} vs that channel's "
                        f"typical peak {_fmt(profile.channel('jerk_peak', c).typical())} (robust z {z:.1f})",  # type: ignore[union-attr]
                        "spike",
                    )
                )
    elif dt > 0:
        rough_channels = []  # (score, channel, roughness, spike)
        for c in arm:
            scale = _range_of(None, signals, c)
            if not scale or c >= len(typical) or typical[c] is None:
                continue
            rough = typical[c] * dt**3 / scale
            spike = (peak[c] or 0) * dt**3 / scale
            if rough >= ABS_ROUGHNESS or (spike >= ABS_SPIKE and collision is None and frozen is None):
                rough_channels.append((max(rough / ABS_ROUGHNESS, spike / ABS_SPIKE), c, rough, spike))
        if rough_channels:
            _, c, rough, spike = max(rough_channels, key=lambda t: t[0])
            flags.append(
                Flag(
                    "medium",
                    "jerky_motion",
                    f"{_channel_name(names, c)}: typical third difference {rough:.1%} and peak {spike:.1%} of its "
                    "range per frame (absolute thresholds)",
                    "jerk",
                )
            )

    # drift: state walking away from its command (matched arm channels); not judged over a
    # tremor (noise on the state is no trend) nor a flagged pause (the progress it is fitted on stalls)
    if collision is None and frozen is None and tremor is None and idle_flag is None and pairs and trends:
        drifts = []  # (score, channel, severity, trend, scale)
        arm_channels = set(arm)
        for i, trend in ((i, t) for i, t in enumerate(trends) if t is not None and i in arm_channels):
            scale = _range_of(profile if comparable else None, signals, i)
            if comparable:
                z_trend = profile.channel_z("residual_trend", i, trend)
                if z_trend is None or (scale is not None and abs(trend) < MIN_SHARE * scale):
                    continue
                severity = "medium" if z_trend >= DRIFT_MEDIUM_Z else None
                if severity and scale is not None and abs(trend) >= DRIFT_LOW_SHARE * scale:
                    severity = "low"
                score = z_trend
            else:
                share = abs(trend) / scale if scale else 0.0
                severity = "medium" if share >= ABS_DRIFT else None
                score = share
            if severity:
                drifts.append((score, i, severity, trend, scale))
        if drifts:
            score, i, severity, trend, scale = max(drifts, key=lambda t: t[0])
            share = f", {abs(trend) / scale:.0%} of its range" if scale and comparable else ""
            detail = f"robust z {score:.1f}{share}" if comparable else f"{score:.0%} of its range"
            flags.append(
                Flag(
                    severity,
                    "drift",
                    f"{_channel_name(names, i)} drifts {_fmt(trend)} away from its commanded action over the "
                    f"episode ({detail})",
                    "drift",
                )
            )

    # regrasp: more gripper open/close events than the dataset's episodes have
    swings, moved = profile.swings(signals)
    if swings is not None:
        if comparable and profile.gripper_swings_median is not None and profile.gripper_range_median is not None:
            moved = moved or 0.0
            excess = swings - profile.gripper_swings_median
            if moved >= MIN_GRIPPER_RANGE_SHARE * profile.gripper_range_median and (
                severity := _severity(excess, SWINGS_MEDIUM_EXCESS, SWINGS_LOW_EXCESS)
            ):
                flags.append(
                    Flag(
                        severity,
                        "near_miss",
                        f"gripper opened/closed {swings} times vs dataset median "
                        f"{_fmt(profile.gripper_swings_median)} (regrasp)",
                        "regrasp",
                    )
                )
        elif not comparable and swings >= ABS_SWINGS:
            flags.append(Flag("medium", "near_miss", f"gripper opened/closed {swings} times (regrasp)", "regrasp"))

    # idle and long
    idle = signals.get("idle_fraction")
    if comparable:
        if idle_flag is not None:
            flags.append(idle_flag)
        duration = float(signals.get("duration_s") or 0.0)
        stat = profile.stats.get("duration_s")
        z_long = stat.z(duration) if stat and duration else None
        if stat is not None and z_long is not None and z_long >= LONG_Z:
            flags.append(
                Flag(
                    "medium",
                    None,
                    f"long: {_fmt(duration)} s vs dataset median {_fmt(stat.typical())} s (z {z_long:.1f})",
                    "long",
                )
            )
        length = profile.length_stat(episode)
        z_length = length.z(frames) if length else None
        if z_length is not None and length is not None:
            ratio = frames / length.typical()
            failed = verdict is not None and verdict.get("success") is False
            end_stat = profile.stats.get("end_offset")
            offset = profile.end_offset(signals)
            z_end = end_stat.z(offset) if end_stat is not None and offset is not None else None
            cut = z_end is not None and z_end >= END_OFFSET_Z
            far = z_end is not None and z_end >= END_ALONE_Z and tremor is None
            if (
                z_length <= SHORT_Z
                or (z_length <= SHORT_END_Z and failed)
                or (cut and (z_length <= SHORT_END_Z or ratio <= SHORT_END_RATIO))
                or far
            ):
                severity = "low" if ratio <= SHORT_LOW_RATIO else "medium"
                ends = f"; it ends away from where the task's episodes end (end-pose z {z_end:.1f})" if cut else ""
                flags.append(
                    Flag(
                        severity,
                        "incomplete",
                        f"{'failed and ' if failed else ''}short for its task: {frames} frames, {ratio:.0%} of the "
                        f"task's median {_fmt(length.typical())} (z {z_length:.1f}){ends}",
                        "short",
                    )
                )
    elif idle is not None and idle >= ABS_IDLE and frozen is None:
        flags.append(Flag("medium", None, f"idle {idle:.0%} of the time (hesitation)", "idle"))
    return flags


def success_opinion(flags: Sequence[Flag], verdict: dict[str, Any] | None) -> bool | None:
    """``False`` when a success verdict meets a low-severity ``short`` or ``frozen`` flag, else None."""
    succeeded = verdict is not None and verdict.get("success") is True
    return False if succeeded and any(f.severity == "low" and f.rule in ("short", "frozen") for f in flags) else None


def grade_episode(
    signals: dict[str, Any],
    profile: DatasetProfile,
    verdict: dict[str, Any] | None = None,
    *,
    episode: int | None = None,
    state_names: Sequence[str] = (),
) -> Grade:
    """Apply the rules of ``docs/judge.md`` ("Offline judge rules") to one episode.

    Args:
        signals: ``episode_signals`` of the episode as ``sample_frames`` reports them
            (plus ``frame_stats`` when the dataset has cameras).
        profile: The dataset profile.
        verdict: The deterministic block (only ``success`` is read), or None.
        episode: The episode's index (selects its task's length statistics).
        state_names: Names of the state channels (for the note).

    Returns:
        The :class:`Grade` to write.
    """
    flags = flags_for(signals, profile, verdict, episode=episode, state_names=state_names)
    reason = uncomputable(signals)
    if reason is not None:
        short = None
        length = profile.length_stat(episode) if profile.comparable else None
        if length is not None and signals.get("frames"):
            ratio = int(signals["frames"]) / length.typical()
            if ratio <= SHORT_LOW_RATIO:
                short = Flag("low", "incomplete", f"{ratio:.0%} of the task's median length", "short")
        flags.append(short or Flag("low", "other", "signals could not be computed", "uncomputable"))
    lows = [f for f in flags if f.severity == "low"]
    mediums = [f for f in flags if f.severity == "medium"]
    quality = "low" if lows or len(mediums) >= 2 else "medium" if mediums else "high"
    rank = {rule: k for k, rule in enumerate(MODE_PRECEDENCE)}
    named = sorted(
        (f for f in lows + mediums if f.failure_mode),
        key=lambda f: (f.severity != "low", rank.get(f.rule, len(rank))),
    )
    mode = named[0].failure_mode if named else None
    few = ""
    if not profile.comparable:
        few = (
            f" Only {profile.episodes} episode(s) in the dataset, fewer than {MIN_EPISODES}: too few to compare, so "
            "absolute thresholds were used and length was not graded."
        )
    if reason is not None:
        note = f"Signals could not be computed: {reason}; " + "; ".join(
            f.evidence for f in flags if f.rule != "uncomputable"
        )
        note = note.rstrip("; ") + "." + few
    elif flags:
        note = "; ".join(f.evidence for f in flags) + "." + few
    elif profile.comparable:
        note = (
            f"no anomaly against {profile.episodes} episodes: per-channel jerk and steps, drift from the action, "
            "frozen runs, gripper use, idle time and length are typical."
        )
    else:
        note = "no anomaly on absolute thresholds." + few
    return Grade(quality, mode, note, tuple(flags), success_opinion(flags, verdict))

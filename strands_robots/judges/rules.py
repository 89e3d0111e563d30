"""The offline judge's rules: execution grade from an episode's signals vs its dataset.

Documented in ``docs/judge.md`` ("Offline judge rules"); the thresholds were fixed
before any agreement was measured and are not fitted to a holdout.

Each rule that fires raises a *flag* with a severity (``low`` or ``medium``), a
failure_mode (or None) and a sentence of evidence:

=====================  ==========================================  ==========  ==============
signal                 fires when                                  severity    failure_mode
=====================  ==========================================  ==========  ==============
NaN state              ``nan_frames > 0``                          low         other
jerk                   robust z of log ``rms_state_jerk`` >= 3      low         jerky_motion
                       ... >= 2                                    medium      jerky_motion
gripper chatter        swings - dataset median swings >= 4 [*]     low         near_miss
                       ... >= 2 (one extra close/open cycle) [*]   medium      near_miss
idle                   robust z of ``idle_fraction`` >= 2           medium      None
long episode           robust z of log ``duration_s`` >= 2          medium      None
short failed episode   z of log duration <= -2 and verdict failed  medium      incomplete
=====================  ==========================================  ==========  ==============

[*] only when the episode's gripper range is at least ``MIN_GRIPPER_RANGE_SHARE`` of the
dataset's median range: a gripper that barely moves has nothing but noise to count.

quality: ``high`` with no flag, ``low`` when a low flag fired or two or more medium
flags did, else ``medium``. failure_mode: that of the most severe flag carrying one
(table order breaks ties), None otherwise. Dataset-relative rules need at least
``MIN_EPISODES`` profiled episodes; below that only the NaN rule applies. The judge
has no evidence about success of its own: ``success_opinion`` is always None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strands_robots.judges.profile import DatasetProfile

JUDGE_MODEL = "heuristic-v1"

JERK_LOW_Z = 3.0
JERK_MEDIUM_Z = 2.0
SWINGS_LOW_EXCESS = 4
SWINGS_MEDIUM_EXCESS = 2
MIN_GRIPPER_RANGE_SHARE = 0.5
IDLE_Z = 2.0
LONG_Z = 2.0
SHORT_Z = -2.0


@dataclass(frozen=True)
class Flag:
    """One rule that fired."""

    severity: str  # "low" | "medium"
    failure_mode: str | None
    evidence: str


@dataclass(frozen=True)
class Grade:
    """What the offline judge writes: the judge block's fields."""

    quality: str
    failure_mode: str | None
    note: str
    flags: tuple[Flag, ...] = ()


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def flags_for(signals: dict[str, Any], profile: DatasetProfile, verdict: dict[str, Any] | None) -> list[Flag]:
    """Every rule of the module table that fires for one episode, in table order."""
    flags: list[Flag] = []
    nan_frames = int(signals.get("nan_frames") or 0)
    if nan_frames:
        flags.append(Flag("low", "other", f"{nan_frames} frame(s) have NaN/inf state values (a recording fault)"))
    if not profile.comparable:
        return flags
    jerk = signals.get("rms_state_jerk")
    stat = profile.stats.get("rms_state_jerk")
    z = stat.z(jerk) if stat else None
    if stat is not None and jerk is not None and z is not None and z >= JERK_MEDIUM_Z:
        severity = "low" if z >= JERK_LOW_Z else "medium"
        flags.append(
            Flag(
                severity,
                "jerky_motion",
                f"rms_state_jerk {_fmt(jerk)} vs dataset median {_fmt(stat.typical())} (robust z {z:.1f})",
            )
        )
    swings = signals.get("gripper_swings")
    moved = signals.get("gripper_range") or 0.0
    typical_range = profile.gripper_range_median
    if (
        swings is not None
        and profile.gripper_swings_median is not None
        and typical_range is not None
        and moved >= MIN_GRIPPER_RANGE_SHARE * typical_range
    ):
        excess = swings - profile.gripper_swings_median
        if excess >= SWINGS_MEDIUM_EXCESS:
            severity = "low" if excess >= SWINGS_LOW_EXCESS else "medium"
            flags.append(
                Flag(
                    severity,
                    "near_miss",
                    f"gripper opened/closed {swings} times vs dataset median {_fmt(profile.gripper_swings_median)} "
                    "(regrasp)",
                )
            )
    idle = signals.get("idle_fraction")
    stat = profile.stats.get("idle_fraction")
    z = stat.z(idle) if stat else None
    if stat is not None and idle is not None and z is not None and z >= IDLE_Z:
        flags.append(
            Flag("medium", None, f"idle {idle:.0%} of the time vs dataset median {stat.typical():.0%} (hesitation)")
        )
    duration = signals.get("duration_s")
    stat = profile.stats.get("duration_s")
    z = stat.z(duration) if stat else None
    if stat is None or duration is None or z is None:
        return flags
    if z >= LONG_Z:
        flags.append(
            Flag("medium", None, f"long: {_fmt(duration)} s vs dataset median {_fmt(stat.typical())} s (z {z:.1f})")
        )
    failed = verdict is not None and verdict.get("success") is False
    if z <= SHORT_Z and failed:
        flags.append(
            Flag(
                "medium",
                "incomplete",
                f"failed and short: {_fmt(duration)} s vs dataset median {_fmt(stat.typical())} s (z {z:.1f})",
            )
        )
    return flags


def grade_episode(signals: dict[str, Any], profile: DatasetProfile, verdict: dict[str, Any] | None = None) -> Grade:
    """Apply the rules of the module docstring to one episode.

    Args:
        signals: ``episode_signals`` of the episode (as ``sample_frames`` reports them).
        profile: The dataset profile.
        verdict: The deterministic block (only ``success`` is read), or None.

    Returns:
        The :class:`Grade` to write.
    """
    flags = flags_for(signals, profile, verdict)
    lows = [f for f in flags if f.severity == "low"]
    mediums = [f for f in flags if f.severity == "medium"]
    if lows or len(mediums) >= 2:
        quality = "low"
    elif mediums:
        quality = "medium"
    else:
        quality = "high"
    mode = next((f.failure_mode for f in lows + mediums if f.failure_mode), None)
    if flags:
        note = "; ".join(f.evidence for f in flags) + "."
    elif profile.comparable:
        note = f"no anomaly against {profile.episodes} episodes: jerk, idle time, duration and gripper use are typical."
    else:
        note = (
            f"no NaN state; the dataset has {profile.episodes} episode(s), too few to compare jerk, idle time, "
            "duration and gripper use."
        )
    return Grade(quality, mode, note, tuple(flags))

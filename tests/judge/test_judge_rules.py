"""The offline judge's rules on hand-made signals (``strands_robots.judges.rules``)."""

from __future__ import annotations

import math

import pytest

from strands_robots.judges.profile import MAD_TO_SIGMA, DatasetProfile, robust_stat
from strands_robots.judges.rules import grade_episode


def typical(k: int) -> dict:
    """Episode k of a calm dataset: jerk 100..119, duration 10..11.9 s, idle 10..11.9 %, 2 swings."""
    return {
        "frames": 300 + 6 * k,
        "duration_s": 10.0 + 0.1 * k,
        "rms_state_jerk": 100.0 + k,
        "nan_frames": 0,
        "idle_fraction": 0.10 + 0.001 * k,
        "gripper_swings": 2,
        "gripper_range": 0.5,
    }


@pytest.fixture
def profile():
    return DatasetProfile.from_signals({k: typical(k) for k in range(20)})


def test_robust_stat_worked_example():
    stat = robust_stat([1.0, 2.0, 3.0, 4.0, 100.0, None, float("nan")], log=False, min_scale=0.0)
    assert stat.median == 3.0 and stat.count == 5
    assert stat.scale == pytest.approx(MAD_TO_SIGMA * 1.0)  # |x - 3| = 2, 1, 0, 1, 97 -> median 1
    assert stat.z(6.0) == pytest.approx(3 / MAD_TO_SIGMA)
    log_stat = robust_stat([10.0, 100.0, 1000.0, -1.0], log=True, min_scale=0.05)
    assert log_stat.typical() == pytest.approx(100.0)
    assert log_stat.z(0.0) is None


def test_a_typical_episode_is_high(profile):
    grade = grade_episode(typical(7), profile, {"success": True})
    assert (grade.quality, grade.failure_mode) == ("high", None)
    assert "no anomaly against 20 episodes" in grade.note


def _jerk_for_z(profile, z):
    stat = profile.stats["rms_state_jerk"]
    return math.exp(stat.median + z * stat.scale)


def test_jerk_thresholds(profile):
    medium = grade_episode({**typical(3), "rms_state_jerk": _jerk_for_z(profile, 2.5)}, profile)
    assert (medium.quality, medium.failure_mode) == ("medium", "jerky_motion")
    assert "robust z 2.5" in medium.note
    low = grade_episode({**typical(3), "rms_state_jerk": _jerk_for_z(profile, 3.5)}, profile)
    assert (low.quality, low.failure_mode) == ("low", "jerky_motion")
    below = grade_episode({**typical(3), "rms_state_jerk": _jerk_for_z(profile, 1.9)}, profile)
    assert below.quality == "high"


def test_gripper_chatter_is_a_near_miss(profile):
    assert grade_episode({**typical(1), "gripper_swings": 3}, profile).quality == "high"
    regrasp = grade_episode({**typical(1), "gripper_swings": 4}, profile)
    assert (regrasp.quality, regrasp.failure_mode) == ("medium", "near_miss")
    chatter = grade_episode({**typical(1), "gripper_swings": 6}, profile)
    assert (chatter.quality, chatter.failure_mode) == ("low", "near_miss")
    assert grade_episode({**typical(1), "gripper_swings": None}, profile).quality == "high"


def test_nan_state_is_low_other(profile):
    grade = grade_episode({**typical(2), "nan_frames": 3}, profile)
    assert (grade.quality, grade.failure_mode) == ("low", "other")
    assert "3 frame(s) have NaN" in grade.note


def test_idle_and_long_are_medium_without_a_mode_and_together_low(profile):
    idle = grade_episode({**typical(2), "idle_fraction": 0.5}, profile)
    assert (idle.quality, idle.failure_mode) == ("medium", None)
    assert "hesitation" in idle.note
    long = grade_episode({**typical(2), "duration_s": 20.0}, profile)
    assert (long.quality, long.failure_mode) == ("medium", None)
    both = grade_episode({**typical(2), "idle_fraction": 0.5, "duration_s": 20.0}, profile)
    assert (both.quality, both.failure_mode) == ("low", None)
    assert len(both.flags) == 2


def test_short_episode_is_incomplete_only_when_it_failed(profile):
    short = {**typical(2), "duration_s": 4.0}
    assert grade_episode(short, profile, {"success": True}).quality == "high"
    failed = grade_episode(short, profile, {"success": False})
    assert (failed.quality, failed.failure_mode) == ("medium", "incomplete")


def test_the_most_severe_flag_names_the_failure_mode(profile):
    grade = grade_episode(
        {**typical(2), "gripper_swings": 4, "rms_state_jerk": _jerk_for_z(profile, 4.0)}, profile, {"success": True}
    )
    assert (grade.quality, grade.failure_mode) == ("low", "jerky_motion")


def test_a_small_dataset_only_gets_the_nan_rule():
    small = DatasetProfile.from_signals({k: typical(k) for k in range(3)})
    assert not small.comparable
    wild = {**typical(0), "rms_state_jerk": 1e6, "gripper_swings": 40}
    grade = grade_episode(wild, small)
    assert grade.quality == "high" and "too few to compare" in grade.note
    assert grade_episode({**wild, "nan_frames": 1}, small).quality == "low"

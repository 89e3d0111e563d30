"""The offline judge's rules on hand-made signals (``strands_robots.judges.offline_rules``)."""

from __future__ import annotations

import math

import pytest

from strands_robots.judges.offline_rules import grade_episode
from strands_robots.judges.profile import MAD_TO_SIGMA, DatasetProfile, robust_stat

NAMES = ["j0", "j1", "j2", "gripper"]


def typical(k: int) -> dict:
    """Episode k of a calm dataset: 3 arm joints and a gripper, 300-414 frames at 30 fps."""
    wobble = 1.0 + 0.01 * k
    return {
        "frames": 300 + 6 * k,
        "duration_s": (300 + 6 * k) / 30,
        "rms_state_jerk": 100.0 + k,
        "nan_frames": 0,
        "idle_fraction": 0.10 + 0.001 * k,
        "idle_longest_s": 0.5 + 0.01 * k,
        "gripper_swings": 2,
        "gripper_range": 0.5,
        "gripper_channels": [3],
        "channel_range": [1.0, 1.0, 1.0, 0.5],
        "jerk_typical": [10.0 * wobble, 12.0 * wobble, 8.0 * wobble, 50.0],
        "step_typical": [1e-4 * wobble, 1e-4 * wobble, 1e-4 * wobble, 0.01],
        "jerk_peak": [100.0 * wobble, 120.0 * wobble, 80.0 * wobble, 500.0],
        "step_height": [0.01 * wobble, 0.012 * wobble, 0.008 * wobble, 0.2],
        "step_frame": [10, 20, 30, 40],
        "action_pairs": [[0, 0], [1, 1], [2, 2], [3, 3]],
        "residual_trend": [0.01 * wobble, -0.012 * wobble, 0.008 * wobble, 0.1],
        "frozen_frames": 0,
        "frozen_start": None,
        "frozen_jump": None,
        "identical_run": 1,
    }


@pytest.fixture
def profile():
    return DatasetProfile.from_signals({k: typical(k) for k in range(20)}, {k: "pick" for k in range(20)})


def grade(signals, profile, verdict=None, episode=1):
    return grade_episode(signals, profile, verdict, episode=episode, state_names=NAMES)


def test_robust_stat_worked_example():
    stat = robust_stat([1.0, 2.0, 3.0, 4.0, 100.0, None, float("nan")], log=False, min_scale=0.0)
    assert stat.median == 3.0 and stat.count == 5
    assert stat.scale == pytest.approx(MAD_TO_SIGMA * 1.0)  # |x - 3| = 2, 1, 0, 1, 97 -> median 1
    assert stat.z(6.0) == pytest.approx(3 / MAD_TO_SIGMA)
    log_stat = robust_stat([10.0, 100.0, 1000.0, -1.0], log=True, min_scale=0.05)
    assert log_stat.typical() == pytest.approx(100.0)
    assert log_stat.z(0.0) is None


def test_per_channel_statistics(profile):
    stat = profile.channel("jerk_typical", 1)
    assert stat.typical() == pytest.approx(12.0 * 1.095, rel=0.01) and stat.scale == 0.25  # the channel floor
    assert profile.channel("jerk_typical", 9) is None
    assert profile.length_stat(3).typical() == pytest.approx(357, rel=0.01)  # the task's median length


def test_a_typical_episode_is_high(profile):
    g = grade(typical(3), profile, {"success": True})
    assert (g.quality, g.failure_mode, g.success_opinion) == ("high", None, None)
    assert "no anomaly against 20 episodes" in g.note


def _jerk(profile, channel, z):
    stat = profile.channel("jerk_typical", channel)
    return math.exp(stat.median + z * stat.scale)


def test_jerk_is_judged_per_channel_on_the_second_worst_arm_channel(profile):
    one = {**typical(1), "jerk_typical": [_jerk(profile, 0, 10), 12.0, 8.0, 50.0]}
    assert grade(one, profile).quality == "high"  # one odd channel is not tremor
    two = {**typical(1), "jerk_typical": [_jerk(profile, 0, 10), _jerk(profile, 1, 3.5), 8.0, 50.0]}
    g = grade(two, profile)
    assert (g.quality, g.failure_mode) == ("medium", "jerky_motion") and "j1" in g.note
    strong = {**typical(1), "jerk_typical": [_jerk(profile, 0, 6), _jerk(profile, 1, 6), 8.0, 50.0]}
    # z 6: j1's jerk 58.9 /s^3 is white noise of 58.9 * (1/30)^3 / sqrt(20) = 4.9e-4, 4.9 x its typical step
    assert grade(strong, profile).quality == "medium"
    severe = {**typical(1), "jerk_typical": [_jerk(profile, 0, 10), _jerk(profile, 1, 10), 8.0, 50.0]}
    assert grade(severe, profile).quality == "low"  # z 10: noise 13 x the typical step
    hand = {**typical(1), "jerk_typical": [10.0, 12.0, 8.0, 1e9]}  # a quantised gripper never counts
    assert grade(hand, profile).quality == "high"


def test_a_kept_step_is_a_collision_and_masks_the_jerk_spike(profile):
    stat = profile.channel("step_height", 2)
    height = math.exp(stat.median + 6 * stat.scale)
    hit = {**typical(1), "step_height": [0.01, 0.012, height, 0.2], "jerk_peak": [100.0, 120.0, 1e6, 500.0]}
    g = grade(hit, profile)  # z 6 but 3.6 % of the range: medium
    assert (g.quality, g.failure_mode) == ("medium", "collision") and "j2 jumps" in g.note
    assert "jerk spike" not in g.note
    big = grade({**hit, "step_height": [0.01, 0.012, 0.2, 0.2]}, profile)  # 20 % of the range: low
    assert (big.quality, big.failure_mode) == ("low", "collision") and "20% of its range" in big.note
    spike = {**typical(1), "jerk_peak": [100.0, 120.0, 1e6, 500.0]}
    assert grade(spike, profile).failure_mode == "jerky_motion"


def test_drift_from_the_action(profile):
    stat = profile.channel("residual_trend", 1)  # signed, linear: median -0.0131, scale floored at 1 % of the range
    assert not stat.log and stat.median == pytest.approx(-0.012 * 1.095, rel=0.01) and stat.scale == 0.01
    trend = stat.median - 7 * stat.scale  # z 7, 8 % of the range
    g = grade({**typical(1), "residual_trend": [0.01, trend, 0.008, 0.1]}, profile)
    assert (g.quality, g.failure_mode) == ("medium", "drift") and "j1 drifts" in g.note
    assert (
        grade({**typical(1), "residual_trend": [0.01, stat.median - 5 * stat.scale, 0.008, 0.1]}, profile).quality
        == "high"
    )
    far = grade({**typical(1), "residual_trend": [0.01, stat.median + 25 * stat.scale, 0.008, 0.1]}, profile)
    assert (far.quality, far.failure_mode) == ("low", "drift")


def test_a_frozen_stream_is_other_and_disputes_a_success(profile):
    frozen = {**typical(1), "frozen_frames": 70, "frozen_start": 100, "frozen_jump": 0.3}  # 23 % of 306 frames
    g = grade(frozen, profile, {"success": True})
    assert (g.quality, g.failure_mode, g.success_opinion) == ("low", "other", False)
    assert "frozen state stream: 70 identical state frames from frame 100" in g.note
    g = grade({**frozen, "frozen_frames": 40}, profile, {"success": True})  # 13 %: medium, no dispute
    assert (g.quality, g.failure_mode, g.success_opinion) == ("medium", "other", None)
    short_run = {**typical(1), "frozen_frames": 12, "frozen_start": 100}  # 12 / 306 = 3.9 %: medium
    g = grade(short_run, profile, {"success": True})
    assert (g.quality, g.failure_mode, g.success_opinion) == ("medium", "other", None)


def test_a_three_frame_freeze_of_a_short_episode_is_named():
    brief = {k: {**typical(k), "frames": 75 + k, "duration_s": (75 + k) / 30} for k in range(20)}
    profile = DatasetProfile.from_signals(brief, {k: "pick" for k in range(20)})
    short = {**brief[1], "frozen_frames": 3, "frozen_start": 40, "frozen_jump": 0.4}
    g = grade(short, profile)
    assert g.failure_mode == "other" and "3 identical state frames" in g.note  # 4 % of 75 frames
    assert grade({**short, "frozen_frames": 2}, profile).failure_mode != "other"  # two equal rows are no freeze


def test_camera_occlusion(profile):
    stats = {"sampled_frames": 16, "occluded_share": 0.25, "cameras": {"cam": {"occluded": 4, "occluded_frames": [1]}}}
    g = grade({**typical(1), "frame_stats": stats}, profile)
    assert (g.quality, g.failure_mode) == ("medium", "camera_occlusion") and "4 of 16 sampled frames" in g.note
    half = {**stats, "occluded_share": 0.5}
    assert grade({**typical(1), "frame_stats": half}, profile).quality == "low"
    mild = {**stats, "occluded_share": 0.0625}
    assert grade({**typical(1), "frame_stats": mild}, profile).quality == "high"


def test_gripper_chatter_is_a_near_miss(profile):
    assert grade({**typical(1), "gripper_swings": 3}, profile).quality == "high"
    regrasp = grade({**typical(1), "gripper_swings": 4}, profile)
    assert (regrasp.quality, regrasp.failure_mode) == ("medium", "near_miss")
    assert grade({**typical(1), "gripper_swings": 7}, profile).quality == "low"  # 5 above the median
    assert grade({**typical(1), "gripper_swings": 6, "gripper_range": 0.1}, profile).quality == "high"


def test_nan_state_is_low_other(profile):
    g = grade({**typical(1), "nan_frames": 3}, profile)
    assert (g.quality, g.failure_mode) == ("low", "other") and "3 frame(s) have NaN" in g.note


def test_idle_and_long(profile):
    idle = grade({**typical(1), "idle_fraction": 0.5, "idle_longest_s": 2.0}, profile)
    assert (idle.quality, idle.failure_mode) == ("medium", None) and "hesitation" in idle.note
    stalled = grade({**typical(1), "idle_fraction": 0.5, "idle_longest_s": 5.0}, profile)  # one pause of 49 %
    assert (stalled.quality, stalled.failure_mode) == ("low", None)
    both = grade({**typical(1), "idle_fraction": 0.5, "duration_s": 40.0}, profile)
    assert both.quality == "low" and both.failure_mode is None


def test_short_for_its_task_is_incomplete_and_very_short_disputes_a_success(profile):
    half = grade({**typical(1), "frames": 150}, profile, {"success": True})
    assert (half.quality, half.failure_mode, half.success_opinion) == ("low", "incomplete", False)
    assert "short for its task: 150 frames" in half.note
    shorter = grade({**typical(1), "frames": 240}, profile, {"success": True})  # z -3.2
    assert (shorter.failure_mode, shorter.success_opinion) == ("incomplete", None)
    assert grade({**typical(1), "frames": 290}, profile, {"success": True}).quality == "high"
    assert grade({**typical(1), "frames": 270}, profile, {"success": True}).quality == "high"  # z -2.3


def test_short_and_ending_away_from_the_task_end_is_incomplete():
    ends = {k: {**typical(k), "end_state": [0.1 * (k % 3), 0.5, 0.0, 0.2]} for k in range(20)}
    profile = DatasetProfile.from_signals(ends, {k: "pick" for k in range(20)})
    cut = {**typical(1), "frames": 270, "end_state": [0.9, 0.1, 0.6, 0.2]}  # z -2.3, ends mid-reach
    g = grade(cut, profile, {"success": True})
    assert (g.quality, g.failure_mode) == ("medium", "incomplete") and "ends away from where" in g.note
    done = {**typical(1), "frames": 270, "end_state": [0.1, 0.5, 0.0, 0.2]}
    assert grade(done, profile, {"success": True}).quality == "high"  # short but finished where the others finish
    assert profile.end_offset(done) < 1 < profile.end_offset(cut)
    assert grade({**typical(1), "frames": 320}, profile, {"success": False}).failure_mode is None
    failed = grade({**typical(1), "frames": 270}, profile, {"success": False})
    assert failed.failure_mode == "incomplete" and failed.success_opinion is None  # no opinion against a failure


def test_ending_far_from_the_task_end_is_incomplete_at_any_length():
    ends = {k: {**typical(k), "end_state": [0.1 * (k % 3), 0.5, 0.0, 0.2]} for k in range(20)}
    profile = DatasetProfile.from_signals(ends, {k: "pick" for k in range(20)})
    far = {**typical(1), "end_state": [1.0, -0.5, 0.9, 0.2]}  # full length, stopped mid-task
    g = grade(far, profile, {"success": True})
    assert (g.quality, g.failure_mode) == ("medium", "incomplete") and "ends away from where" in g.note
    shaky = {**far, "jerk_typical": [_jerk(profile, 0, 10), _jerk(profile, 1, 10), 8.0, 50.0]}
    assert grade(shaky, profile).failure_mode == "jerky_motion"  # a tremor moves the end pose: not read as a cut


def test_uncomputable_signals_are_never_typical(profile):
    tiny = {**typical(1), "frames": 3, "jerk_typical": [None] * 4, "rms_state_jerk": None}
    g = grade(tiny, profile, {"success": True})
    assert g.quality == "low" and g.failure_mode == "incomplete"  # 3 frames of a ~350-frame task
    assert g.note.startswith("Signals could not be computed: the episode has 3 frame(s)")
    alone = DatasetProfile.from_signals({0: tiny})
    g = grade_episode(tiny, alone, {"success": True}, episode=0)
    assert (g.quality, g.failure_mode) == ("low", "other") and "typical" not in g.note
    nan = {**typical(1), "jerk_typical": [None] * 4, "nan_frames": 306}
    assert grade(nan, profile).note.startswith("Signals could not be computed: no channel")


def test_a_small_dataset_says_so_and_uses_absolute_thresholds():
    calm = {**typical(0), "jerk_typical": [1.0, 1.0, 1.0, 5.0]}  # |Δ³x| per frame ~4e-5 of the range
    small = DatasetProfile.from_signals({k: calm for k in range(3)})
    g = grade_episode(calm, small)
    assert g.quality == "high"
    assert "Only 3 episode(s) in the dataset, fewer than 8: too few to compare" in g.note
    rough = {**calm, "jerk_typical": [1e3, 1.0, 1.0, 5.0]}  # 1000 * (1/30)**3 = 3.7 % of the range per frame
    g = grade_episode(rough, small)
    assert (g.quality, g.failure_mode) == ("medium", "jerky_motion") and "absolute thresholds" in g.note
    stepped = {**calm, "step_height": [0.3, 0.0, 0.0, 0.0]}
    assert grade_episode(stepped, small).failure_mode == "collision"
    chatter = {**calm, "gripper_swings": 8}
    assert grade_episode(chatter, small).failure_mode == "near_miss"
    frozen = {**calm, "frozen_frames": 70, "frozen_start": 5}
    assert grade_episode(frozen, small, {"success": True}).success_opinion is False

"""Sampling maths and motion signals (docs/judge.md, "The four tools": ``sample_frames``)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strands_robots.signals import (
    count_gripper_events,
    episode_signals,
    frame_period,
    gripper_groups,
    rms_state_jerk,
    sample_indices,
)


@pytest.mark.parametrize(
    ("length", "n", "expected"),
    [
        (90, 4, [0, 30, 59, 89]),  # 89/3 = 29.67 -> 30; 59.33 -> 59
        (10, 4, [0, 3, 6, 9]),
        (4, 3, [0, 2, 3]),  # 1.5: the tie goes to the even neighbour, 2
        (10, 3, [0, 4, 9]),  # 4.5: the tie goes to 4, not 5
        (6, 5, [0, 1, 2, 4, 5]),  # 1.25, 2.5 -> 2, 3.75
        (5, 2, [0, 4]),
        (90, 1, [89]),  # one frame is the last one
        (3, 10, [0, 1, 2]),  # n clamped to the length
        (1, 4, [0]),
    ],
)
def test_sample_indices_worked_examples(length, n, expected):
    assert sample_indices(length, n) == expected


@given(st.integers(1, 5000), st.integers(1, 200))
def test_sample_indices_match_the_formula_exactly(length, n):
    n_eff = min(n, length)
    # Python's round of the exact ratio: ties go to the even neighbour, as
    # strands-robots 0.5.3's round(i*(L-1)/(n-1)) does.
    ratios = [Fraction(i * (length - 1), n_eff - 1) for i in range(n_eff)] if n_eff > 1 else []
    expected = [round(r) for r in ratios] if n_eff > 1 else [length - 1]
    got = sample_indices(length, n)
    assert got == expected
    assert got[-1] == length - 1 and all(a < b for a, b in zip(got, got[1:], strict=False))


def test_sample_indices_refuse_nonsense():
    with pytest.raises(ValueError):
        sample_indices(0, 4)
    with pytest.raises(ValueError):
        sample_indices(10, 0)


def _hand_trajectory():
    # channel 0: s = t**3 at dt = 0.1 s -> third difference 6*dt**3, jerk exactly 6
    # channel 1: a unit blip at frame 3 -> third differences 1, -3, 3 (then /dt**3)
    t = np.arange(6) * 0.1
    state = np.stack([t**3, np.array([0, 0, 0, 1, 0, 0], dtype=float)], axis=1)
    return state, t


def test_rms_state_jerk_equals_the_hand_computed_value():
    state, t = _hand_trajectory()
    # elements of the third difference / dt**3: 6, 6, 6 and 1000, -3000, 3000
    expected = math.sqrt((3 * 6.0**2 + 1000.0**2 + 3000.0**2 + 3000.0**2) / 6)
    assert rms_state_jerk(state, t) == pytest.approx(expected, rel=1e-9)
    assert rms_state_jerk(state[:, :1], t) == pytest.approx(6.0, rel=1e-9)


def test_rms_state_jerk_falls_back_to_fps_and_uses_the_median_spacing():
    state, t = _hand_trajectory()
    assert rms_state_jerk(state[:, :1], None, fps=10) == pytest.approx(6.0, rel=1e-9)
    jittered = t.copy()
    jittered[5] = 0.55  # one long gap does not move the median spacing (0.1 s)
    assert rms_state_jerk(state[:, :1], jittered) == pytest.approx(6.0, rel=1e-9)
    assert frame_period(None, None) is None
    # no usable period at all: the raw per-frame third difference (0.006)
    assert rms_state_jerk(state[:, :1], None, None) == pytest.approx(0.006, rel=1e-9)


def test_rms_state_jerk_is_nan_aware_and_needs_four_frames():
    state, t = _hand_trajectory()
    state[0, 1] = np.nan  # drops channel 1's first third difference (1000) only
    expected = math.sqrt((3 * 6.0**2 + 3000.0**2 + 3000.0**2) / 5)
    assert rms_state_jerk(state, t) == pytest.approx(expected, rel=1e-9)
    assert rms_state_jerk(state[:3], t[:3]) is None
    assert rms_state_jerk(np.full((6, 2), np.nan), t) is None


def test_gripper_groups():
    so101 = ["shoulder_pan.pos", "elbow_flex.pos", "gripper.pos"]
    assert gripper_groups(so101) == {"gripper.pos": [2]}
    g1 = ["kLeftElbow", "kLeftHandPinky", "kLeftHandRing", "kRightHandPinky", "kRightHandIndex"]
    assert gripper_groups(g1) == {"kLeftHand": [1, 2], "kRightHand": [3, 4]}
    assert gripper_groups(["x", "y"]) == {}


def test_gripper_events_are_the_ssc_detectors_events():
    """One detector: the judge counts exactly what the subtask-chain checker detects."""
    from strands_robots.ssc.gripper import detect_gripper_events

    close_open = np.array([1.0, 0.9, 0.5, 0.2, 0.21, 0.19, 0.6, 1.0])
    assert count_gripper_events(close_open) == 2
    regrasp = np.concatenate([close_open, close_open[1:]])
    assert count_gripper_events(regrasp, "left_gripper") == 4
    assert [e.kind for e in detect_gripper_events(regrasp, arm="left", mode="position")] == ["close", "open"] * 2
    assert count_gripper_events(np.array([0.5, 0.5001, 0.4999, 0.5])) == 0  # below the detector's minimum range
    assert count_gripper_events(np.array([0.0, np.nan, 1.0])) == 1
    assert count_gripper_events(np.full(5, 0.3)) == 0


def test_episode_signals_worked_example():
    fps = 10
    n = 40
    state = np.zeros((n, 2))
    state[10:20, 0] = np.linspace(0, 1, 10)  # moves for 1 s, idle otherwise
    state[20:, 0] = 1.0
    state[:, 1] = np.where((np.arange(n) >= 12) & (np.arange(n) < 25), 0.0, 1.0)  # gripper closes, opens
    state[5, 0] = np.nan
    s = episode_signals(state, np.arange(n) / fps, fps, ["joint", "gripper"])
    assert s["frames"] == 40 and s["duration_s"] == pytest.approx(4.0)
    assert s["nan_frames"] == 1
    assert s["gripper_swings"] == 2 and s["gripper_range"] == 1.0
    assert 0.4 < s["idle_fraction"] < 0.9
    assert s["rms_state_jerk"] == pytest.approx(rms_state_jerk(state, np.arange(n) / fps))
    empty = episode_signals(None, None, 30, [])
    assert empty["frames"] == 0 and empty["rms_state_jerk"] is None

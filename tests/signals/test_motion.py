"""Per-channel signals on synthesized arrays with known answers (``strands_robots.signals``)."""

from __future__ import annotations

import numpy as np
import pytest

from strands_robots.signals import episode_signals, frame_stats
from strands_robots.signals.frames import flat_cell_share, occluded_frames
from strands_robots.signals.gripper import count_gripper_events, dataset_swings
from strands_robots.signals.motion import (
    candidate_fits,
    correlated_action_channels,
    end_state,
    frozen_runs,
    longest_true_run,
    match_action_channels,
    persistent_steps,
    pooled_slope,
    pooled_trend,
    residual_signals,
    step_prominence,
    typical_steps,
    windowed_jerk,
)
from strands_robots.ssc.gripper import moved

DT = 0.1


def test_windowed_jerk_of_a_cubic_and_of_a_blip():
    t = np.arange(40) * DT
    state = np.stack([t**3, np.zeros(40)], axis=1)
    state[20, 1] = 1.0  # one blip: third differences 1, -3, 3, -1 over four windows' worth
    typical, peak = windowed_jerk(state, DT)
    assert typical[0] == pytest.approx(6.0) and peak[0] == pytest.approx(6.0)  # Δ³(t³) = 6 dt³ everywhere
    assert typical[1] == 0.0  # the median window never sees the blip
    # window = 0.5 s / 0.1 s = 5 samples; the worst window holds 1, -3, 3, -1 (and a 0): sqrt(20/5) / dt³
    assert peak[1] == pytest.approx(np.sqrt(20 / 5) / DT**3)
    assert windowed_jerk(state[:3], DT) == ([None, None], [None, None])


def test_persistent_steps_see_a_kept_jump_not_a_spike_nor_a_commanded_move():
    n = 60
    state = np.zeros((n, 3))
    state[30:, 0] = 0.5  # a step that stays
    state[30, 1] = 0.5  # a spike that comes back
    state[:, 2] = np.linspace(0, 1, n)  # smooth motion: 1/59 per frame
    heights, frames = persistent_steps(state, DT)
    assert heights[0] == pytest.approx(0.5) and frames[0] == 30
    assert heights[1] == pytest.approx(0.0)
    assert heights[2] == pytest.approx(1 / 59)
    action = state.copy()  # the action made the same step 2 frames earlier: commanded, no collision
    action[28:, 0] = 0.5
    action[28:30, 0] = 0.5
    heights, _ = persistent_steps(state, DT, action, [(0, 0)])
    assert heights[0] == pytest.approx(0.0)


def test_step_prominence_tells_a_collision_from_tremor():
    n = 60
    rng = np.random.default_rng(1)
    smooth = np.linspace(0, 1, n)[:, None]
    hit = smooth.copy()
    hit[30:] += 0.5
    heights, _ = persistent_steps(hit, DT)
    # 0.5 + 1/59 over the 95th-percentile frame step (1/59: the 5 % tail holds the jump itself)
    assert step_prominence(heights, hit, DT)[0] == pytest.approx((0.5 + 1 / 59) / (1 / 59), rel=0.05)
    shaky = smooth + rng.normal(0, 0.05, (n, 1))
    heights, _ = persistent_steps(shaky, DT)
    assert step_prominence(heights, shaky, DT)[0] < 1.5
    assert step_prominence([None, 0.0], np.zeros((5, 2)), DT) == [None, 0.0]


def test_match_action_channels():
    assert match_action_channels(["a", "Gripper"], ["gripper", "b", "a"], 2, 3) == [(0, 2), (1, 0)]
    assert match_action_channels([], [], 3, 3) == [(0, 0), (1, 1), (2, 2)]
    assert match_action_channels(["a"], [], 1, 1) == []


def test_residual_trend_is_the_drift_net_of_tracking_lag_and_of_a_step():
    n = 200
    s = np.linspace(0, 1, n)
    action = np.sin(2 * np.pi * s)[:, None]
    lagging = action - 3.0 * np.gradient(action[:, 0])[:, None]  # pure tracking lag: no drift
    drifting = lagging + 0.2 * s[:, None]
    assert residual_signals(lagging, action, [(0, 0)], DT)["residual_trend"][0] == pytest.approx(0.0, abs=1e-9)
    out = residual_signals(drifting, action, [(0, 0)], DT)
    assert out["residual_trend"][0] == pytest.approx(0.2, abs=1e-6)
    assert out["residual_step"][0] < 0.01  # a ramp has no kept step
    hit = lagging.copy()
    hit[120:] += 0.3  # a collision: the state jumps and stays, the command does not
    out = residual_signals(hit, action, [(0, 0)], DT)
    assert out["residual_step"][0] == pytest.approx(0.3, abs=0.02) and out["residual_step_frame"][0] == 120
    assert out["residual_step_prominence"][0] > 10
    assert abs(out["residual_trend"][0]) < 0.02  # the step is not read as drift (a 0.3 step would fit a trend of ~0.3)
    short = residual_signals(drifting[:5], action[:5], [(0, 0)], DT)
    assert short["residual_trend"] == [None] and short["residual_fit"] == [None]


def test_the_gain_of_a_leader_arm_is_fitted_on_changes_so_drift_is_not_absorbed():
    n = 300
    s = np.linspace(0, 1, n)
    leader = np.stack([np.sin(2 * np.pi * s), np.cos(3 * np.pi * s)], axis=1)
    follower = 2.0 * leader[:, [1]] + 0.5  # state channel 0 follows action channel 1, in other units
    follower = np.concatenate([follower, np.zeros((n, 1))], axis=1)  # a joint no command drives
    assert correlated_action_channels(follower, leader, lag=20) == [(0, 1)]
    assert correlated_action_channels(follower, leader, [(0, 1)], lag=20) == []
    drifting = follower.copy()
    drifting[:, 0] += 0.4 * s
    out = residual_signals(drifting, leader, [(0, 1)], DT)
    assert out["residual_trend"][0] == pytest.approx(0.4, abs=0.02) and out["residual_trend"][1] is None


def test_pooled_map_over_episodes():
    rng = np.random.default_rng(0)
    fits = []
    for _ in range(10):
        a = rng.normal(size=(100, 1)).cumsum(axis=0)
        x = 1.5 * a + 2.0
        fits.append(residual_signals(x, a, [(0, 0)], DT)["residual_fit"][0])
    assert pooled_slope(fits) == pytest.approx(1.5)
    s = np.linspace(0, 1, 100)
    a = np.sin(6 * s)[:, None]
    fit = residual_signals(1.5 * a + 0.3 * s[:, None], a, [(0, 0)], DT)["residual_fit"][0]
    assert pooled_trend(fit, 1.5) == pytest.approx(0.3, abs=1e-6)
    assert pooled_trend(None, 1.5) is None and pooled_slope([[1, 0, 0, 0, 0]]) is None


def test_end_state_and_gripper_counts_with_the_dataset_range():
    assert end_state(np.array([[0.0, 1.0], [5.0, np.nan], [6.0, 2.0], [7.0, np.nan]])) == [6.0, 1.5]
    assert end_state(np.array([[np.nan], [np.nan]])) == [None]
    idle = 0.5 + 0.03 * np.sin(np.linspace(0, 40, 300))  # an idle hand: sensor noise only
    assert count_gripper_events(idle) > 4  # alone, its own range makes noise look like grasps
    assert count_gripper_events(idle, value_range=(0.2, 0.9)) == 0
    assert moved(0.47, 0.53) and not moved(0.47, 0.53, value_range=(0.2, 0.9))
    swings = dataset_swings({"left": 9, "right": 4}, {"left": [0.47, 0.53], "right": [0.3, 0.8]}, {"left": (0.2, 0.9)})
    assert swings == (4, pytest.approx(0.5))
    assert dataset_swings({}, {}, {}) == (None, None)


def test_frozen_runs_need_a_moving_action():
    n = 50
    action = np.linspace(0, 1, n)[:, None].repeat(2, axis=1)
    state = action.copy()
    state[10:20] = state[10]  # rows 10..19 identical while the action moves on, then a catch-up jump
    out = frozen_runs(state, action, [(0, 0), (1, 1)])
    assert (out["frozen_frames"], out["frozen_start"], out["identical_run"]) == (10, 10, 10)
    assert out["frozen_jump"] == pytest.approx((10 / 49) / 0.98, rel=1e-3)  # the jump over the 1-99 % range
    held = action.copy()
    held[10:20] = held[10]  # an idle pause: the action holds too
    assert frozen_runs(held.copy(), held, [(0, 0)])["frozen_frames"] == 0
    assert frozen_runs(held.copy(), held, [(0, 0)])["identical_run"] == 10
    late = action.copy()
    late[:10] = late[0]  # the state stream starts late, then moves off smoothly: no catch-up jump
    late[10:] = action[:40] + (late[0] - action[0])
    assert frozen_runs(late, action, [(0, 0)])["frozen_frames"] == 0
    no_action = frozen_runs(state, None, [])
    assert no_action["frozen_frames"] == 10  # judged by the catch-up jump alone
    assert longest_true_run(np.array([1, 1, 0, 1, 1, 1, 0], dtype=bool)) == 3


def test_frame_stats_flag_flat_frames_on_a_textured_camera():
    rng = np.random.default_rng(0)
    textured = [rng.integers(0, 255, (24, 32, 3), dtype=np.uint8) for _ in range(6)]
    textured[2] = np.zeros((24, 32, 3), np.uint8)  # blacked out
    textured[4] = np.full((24, 32, 3), 35, np.uint8)  # covered
    blank = [np.full((24, 32, 3), 10 * i, np.uint8) for i in range(6)]  # a camera that always films a wall
    stats = frame_stats({"front": textured, "wrist": blank}, [0, 10, 20, 30, 40, 50])
    assert stats["cameras"]["front"]["occluded_frames"] == [20, 40]
    assert stats["cameras"]["wrist"]["occluded"] == 0
    assert stats["occluded_share"] == pytest.approx(2 / 6, rel=1e-5)
    assert frame_stats({}, [])["occluded_share"] is None
    assert occluded_frames([]) == []


def test_frame_stats_flag_a_partly_covered_lens():
    rng = np.random.default_rng(1)
    frames = [rng.integers(0, 255, (48, 64, 3), dtype=np.uint8) for _ in range(8)]
    frames[3][:, :32] = 30  # the left half covered by a dark flat band: 4 of 8 grid columns
    frames[6][:20] = 40  # the top 20 of 48 rows: 2 whole grid rows (25 %) of the 8
    frames[5][:, :4] = 0  # a thin band: half a grid column, below the 25 % a cover needs
    stats = frame_stats({"front": frames}, list(range(8)))
    assert stats["cameras"]["front"]["occluded_frames"] == [3, 6]
    assert flat_cell_share(frames[3]) == pytest.approx(0.5) and flat_cell_share(frames[0]) == 0.0
    # a camera whose every frame shows the same flat half (a table edge) is never covered
    steady = [f.copy() for f in frames[:4]]
    for f in steady:
        f[:, :32] = 90
    assert frame_stats({"top": steady}, list(range(4)))["occluded_share"] == 0.0
    assert occluded_frames([30.0, 30.0, 30.0], [0.0, 0.6, 0.1]) == [False, True, False]


def test_candidate_fits_keep_the_pair_most_episodes_make():
    n = 300
    s = np.linspace(0, 1, n)
    command = np.stack([np.sin(2 * np.pi * s), 0.9 * np.sin(2 * np.pi * s) + 0.1 * np.cos(9 * s)], axis=1)
    state = command.copy()  # two joints that move together: correlation may pair them crosswise
    state[:, 0] += 0.3 * s  # joint 0 drifts from its command
    fits = candidate_fits(state, command, [(0, 1), (1, 0)], [True, True], [], DT)
    pairs = {(row[0], row[1]): row[2:] for row in fits}
    assert set(pairs) == {(0, 0), (1, 1)}  # the other plausible pairs of the crosswise ones
    assert pooled_trend(pairs[(0, 0)], 1.0) == pytest.approx(0.3, abs=0.01)
    assert candidate_fits(state, command, [(0, 0), (1, 1)], [False, False], [], DT) == []  # named pairs are final


def test_typical_steps():
    state = np.array([[0.0, 1.0], [1.0, 1.0], [3.0, np.nan], [6.0, 1.5], [7.0, 2.5]])
    assert typical_steps(state) == [pytest.approx(1.5), pytest.approx(0.5)]  # |dx| 1 2 3 1; 0 and 1 (NaNs left out)


def test_episode_signals_carry_the_per_channel_signals():
    n = 90
    t = np.arange(n) / 30
    action = np.stack([np.sin(t), np.cos(t), (t > 1.5).astype(float)], axis=1)
    state = action.copy()
    state[45:, 0] += 0.4  # collision on j0
    s = episode_signals(state, t, 30, ["j0", "j1", "gripper"], action, ["j0", "j1", "gripper"])
    assert s["action_pairs"] == [[0, 0], [1, 1], [2, 2]] and s["gripper_channels"] == [2]
    assert s["step_height"][0] == pytest.approx(0.4, abs=0.02) and s["step_frame"][0] == 45
    assert s["step_height"][2] == pytest.approx(0.0)  # the gripper's step was commanded
    assert len(s["jerk_typical"]) == len(s["jerk_peak"]) == len(s["channel_range"]) == 3
    assert s["frozen_frames"] == 0 and s["gripper_swings"] == 1
    short = episode_signals(state[:3], t[:3], 30, ["j0", "j1", "gripper"], action[:3], ["j0", "j1", "gripper"])
    assert short["jerk_typical"] == [None, None, None] and short["residual_trend"] == [None, None, None]

"""Gripper-event detection: command sign flips, position threshold with hysteresis, real datasets."""

from __future__ import annotations

import numpy as np
import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.ssc.gripper import detect_gripper_events, events_for_channels, find_gripper_channels


def _fk(events):
    return [(e.frame, e.kind) for e in events]


def test_command_mode_sign_flips_between_non_zero_values():
    values = [1, 1, 0, 0, -1, -1, 0, -1, 1, 0.0, 1, -0.5]
    events = detect_gripper_events(values, arm="left", mode="command")
    assert _fk(events) == [(4, "close"), (8, "open"), (11, "close")]
    assert all(e.arm == "left" for e in events)


def test_command_mode_dead_band_and_polarity():
    values = [0.8, 0.05, -0.05, 0.04, -0.9, -0.9, 0.7]
    assert _fk(detect_gripper_events(values, arm="right", threshold=0.1)) == [(4, "close"), (6, "open")]
    # with positive = close, the same stream reads the other way round
    assert _fk(detect_gripper_events(values, arm="right", threshold=0.1, open_is_high=False)) == [
        (4, "open"),
        (6, "close"),
    ]
    # without a dead band every small sign change is a flip
    assert _fk(detect_gripper_events(values, arm="right")) == [(2, "close"), (3, "open"), (4, "close"), (6, "open")]


def test_position_mode_relative_threshold_ignores_noise():
    rng = np.random.default_rng(0)
    values = np.concatenate([np.full(50, 40.0), np.full(50, 5.0), np.full(50, 40.0)])
    noisy = values + rng.normal(0, 1.0, values.size)
    assert _fk(detect_gripper_events(noisy, arm="right", mode="position")) == [(50, "close"), (99, "open")]


def test_position_mode_dates_the_change_of_hold():
    """A staged close is dated on arrival at the closed plateau, a release on departure from it."""
    staged = [2] * 10 + [34] * 10 + [25] * 10 + [18] * 5 + [11] * 10 + [24] * 5 + [2] * 5
    events = detect_gripper_events(staged, arm="right", mode="position")
    assert _fk(events) == [(9, "open"), (35, "close"), (44, "open"), (50, "close")]
    assert [e.value for e in events] == [2, 11, 11, 2]


def test_position_mode_counts_a_grasp_on_a_wide_object_and_a_partial_release():
    """Piper episode 50 / 24 style: the grasp stops above mid-range, the release opens only half way."""
    wide = [1] * 10 + [64] * 10 + [32] * 10 + [62] * 10 + [1] * 10
    assert [k for _, k in _fk(detect_gripper_events(wide, arm="right", mode="position"))] == [
        "open",
        "close",
        "open",
        "close",
    ]
    partial = [11] * 10 + [67] * 10 + [12] * 10 + [42] * 10 + [6] * 10
    assert [k for _, k in _fk(detect_gripper_events(partial, arm="right", mode="position"))] == [
        "open",
        "close",
        "open",
        "close",
    ]
    # a fixed mid-range level with hysteresis misses both (the A4 limitation)
    assert _fk(detect_gripper_events(wide, arm="right", mode="position", threshold=32.5)) == [
        (10, "open"),
        (40, "close"),
    ]


def test_position_mode_explicit_threshold_nan_and_flat_channel():
    values = [30, 30, np.nan, 10, 10, np.nan, 35]
    assert _fk(detect_gripper_events(values, arm="right", mode="position", threshold=20, hysteresis=0)) == [
        (3, "close"),
        (6, "open"),
    ]
    assert _fk(detect_gripper_events([30, np.nan, 10, 10, 35], arm="left", mode="position")) == [
        (2, "close"),
        (3, "open"),
    ]
    assert detect_gripper_events(np.full(100, 12.0), arm="right", mode="position") == []
    assert detect_gripper_events(12.0 + 0.1 * np.sin(np.arange(100)), arm="right", mode="position") == []
    assert detect_gripper_events([np.nan, np.nan], arm="right", mode="position") == []


def test_position_mode_closed_is_high():
    values = [0] * 5 + [50] * 5 + [0] * 5
    assert _fk(detect_gripper_events(values, arm="left", mode="position", open_is_high=False)) == [
        (5, "close"),
        (9, "open"),
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"arm": "middle"}, "arm must be"),
        ({"arm": "left", "mode": "width"}, "mode must be"),
        ({"arm": "left", "hysteresis": -1}, ">= 0"),
    ],
)
def test_bad_arguments_are_typed_errors(kwargs, message):
    with pytest.raises(LabelValidationError, match=message):
        detect_gripper_events([0, 1], **kwargs)


def test_two_dimensional_values_are_refused():
    with pytest.raises(LabelValidationError, match="1-D"):
        detect_gripper_events(np.zeros((5, 2)), arm="left")


def test_find_gripper_channels_by_name():
    assert find_gripper_channels({"observation.state": {"names": ["a", "gripper.pos"]}})["right"].index == 1
    bimanual = {
        "observation.state": {"names": [["left_joint", "left_gripper", "right_joint", "right_gripper_pos"]]},
    }
    found = find_gripper_channels(bimanual)
    assert {a: c.index for a, c in found.items()} == {"left": 1, "right": 3}
    assert (
        find_gripper_channels({"action": {"names": {"motors": ["x", "gripper"]}}}, single_arm="left")["left"].index == 1
    )
    assert find_gripper_channels({"observation.state": {"names": ["kLeftHandIndex"]}}) == {}


# ----------------------------------------------------------------------- real datasets
#: Events found on the shared datasets (docs/ssc.md lists them all).
REAL = {
    "so101-record-test-v30": {
        0: [(93, "open"), (198, "close"), (258, "open"), (298, "close")],
        1: [(100, "open"), (253, "close"), (317, "open"), (343, "close")],
        2: [(159, "open"), (208, "close"), (247, "open"), (265, "close")],
        3: [(126, "open"), (201, "close"), (257, "open"), (280, "close")],
    },
    "lerobot-written-v30-video": {
        0: [(23, "close"), (59, "open")],
        1: [(36, "close"), (59, "open")],
        2: [(18, "close"), (47, "open")],
        3: [(32, "close"), (74, "open")],
    },
    "piper-act-v30-multifile": {
        0: [(52, "open"), (158, "close"), (196, "open"), (220, "close")],
        17: [(32, "open"), (146, "close"), (150, "open"), (237, "close"), (287, "open")],
        24: [(41, "open"), (124, "close"), (174, "open"), (225, "close")],
        32: [(113, "close"), (222, "open")],
        50: [(42, "open"), (91, "close"), (142, "open"), (170, "close")],
    },
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_events_on_shared_datasets(shared_dataset, name):
    from strands_robots.dataset import open_dataset

    ds = open_dataset(shared_dataset(name))
    channels = find_gripper_channels(ds.features)
    assert list(channels) == ["right"] and channels["right"].name == "gripper.pos"
    for episode, expected in REAL[name].items():
        cols = ds.read_frames(episode, columns=[channels["right"].feature])
        assert _fk(events_for_channels(cols, channels)) == expected, (name, episode)

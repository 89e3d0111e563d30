"""NAVIGATE prefill from base motion, base-velocity features, and the navigate rule on a real dataset."""

from __future__ import annotations

import numpy as np
import pytest

from strands_robots.errors import DatasetError, EpisodeNotFoundError
from strands_robots.segments import (
    episode_base_velocity,
    find_base_velocity_feature,
    prefill_navigate,
    save_segmentation,
    validate_segmentation,
)
from strands_robots.segments.motion import moving_intervals, smooth
from strands_robots.segments.navigate import covering


def test_prefill_marks_exactly_the_drive(dataset):
    segments = prefill_navigate(dataset, 0)
    assert [(s["start"], s["end"], s["template_id"]) for s in segments] == [
        (0, 10, None),
        (10, 30, "N1"),
        (30, 60, None),
    ]
    assert segments[1]["prefill"] == "base_motion" and segments[1]["label"] is None
    assert [(s["start"], s["end"], s["template_id"]) for s in prefill_navigate(dataset, 1)] == [(0, 40, None)]
    # a higher threshold than the drive speed: nothing moves
    assert [s["template_id"] for s in prefill_navigate(dataset, 0, threshold=0.5)] == [None]


def test_prefill_with_an_explicit_feature_and_components(dataset):
    by_name = prefill_navigate(dataset, 0, "observation.base_velocity", dims=["vx"])
    assert [(s["start"], s["end"]) for s in by_name if s["template_id"] == "N1"] == [(10, 30)]
    # only the y component: the base never moves along y
    assert [s["template_id"] for s in prefill_navigate(dataset, 0, "observation.base_velocity", dims=[1])] == [None]
    with pytest.raises(DatasetError, match="no feature 'base_vel'"):
        prefill_navigate(dataset, 0, "base_vel")
    with pytest.raises(DatasetError, match="no component named 'vz'"):
        prefill_navigate(dataset, 0, "observation.base_velocity", dims=["vz"])
    with pytest.raises(EpisodeNotFoundError):
        prefill_navigate(dataset, 2)


def test_prefill_without_metadata_is_refused(tmp_path):
    with pytest.raises(DatasetError, match="meta/info.json"):
        prefill_navigate(tmp_path, 0)


def test_find_base_velocity_feature():
    assert find_base_velocity_feature({"observation.base_velocity": {"dtype": "float32"}}) == (
        "observation.base_velocity",
        None,
    )
    assert find_base_velocity_feature(
        {"action.base_motion": {"dtype": "float32"}, "observation.base_vel": {"dtype": "float64"}}
    ) == ("observation.base_vel", None)
    state = {"observation.state": {"dtype": "float32", "names": {"motors": ["arm_0", "base_vel_x", "base_vel_y"]}}}
    assert find_base_velocity_feature(state) == ("observation.state", [1, 2])
    assert find_base_velocity_feature({"observation.images.base": {"dtype": "video"}}) is None


def test_motion_helpers():
    assert moving_intervals(np.array([0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1], bool), min_frames=2) == [(1, 7)]
    assert moving_intervals(np.array([1, 1, 0, 0, 0, 1], bool), min_frames=2) == [(0, 2)]
    out = smooth(np.array([0, 0, 9, 0, 0, np.nan, np.nan, np.nan, np.nan]), 3)
    assert out[2] == 0 and np.isnan(out[6]) and out[5] == 0
    assert covering(10, [(2, 5)]) == [
        {"start": 0, "end": 2, "template_id": None, "label": None, "slots": {}, "prefill": None},
        {"start": 2, "end": 5, "template_id": "N1", "label": None, "slots": {}, "prefill": "base_motion"},
        {"start": 5, "end": 10, "template_id": None, "label": None, "slots": {}, "prefill": None},
    ]


def test_navigate_rule_against_the_dataset_feature(dataset, valid_ep0):
    velocity = episode_base_velocity(dataset, 0)
    assert velocity.shape == (60, 2)
    assert validate_segmentation(60, valid_ep0, task="put the mug away", base_velocity=velocity) == []
    moved = [dict(s) for s in valid_ep0]
    moved[0]["label"], moved[1]["label"] = "navigate to the counter", "open the left cabinet door"
    found = validate_segmentation(60, moved, task="put the mug away", base_velocity=velocity)
    assert [(f.kind, f.start, f.end) for f in found] == [("navigate_base_motion", 0, 10)]


def test_prefilled_segments_are_refused_until_labelled(dataset):
    from strands_robots.segments import SegmentationRefused

    segments = prefill_navigate(dataset, 0)
    with pytest.raises(SegmentationRefused) as info:
        save_segmentation(dataset, 0, segments, annotator="a")
    assert [(f.kind, f.start, f.end) for f in info.value.findings] == [
        ("unparseable_label", 0, 10),
        ("unparseable_label", 10, 30),
        ("unparseable_label", 30, 60),
    ]
    segments[0].update(label="open the fridge")
    segments[1].update(slots={"destination": "counter"})
    segments[2].update(label="pick up the mug from the counter")
    saved = save_segmentation(dataset, 0, segments, annotator="a").record
    assert [s["label"] for s in saved["segments"]] == [
        "open the fridge", "navigate to the counter", "pick up the mug from the counter",
    ]  # fmt: skip

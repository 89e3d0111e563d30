"""Channel groups by name prefix (strands_robots/dataset/channels.py)."""

from __future__ import annotations

import pytest

from strands_robots.dataset.channels import channel_groups, name_tokens

G1_ARM = ["ShoulderPitch", "ShoulderRoll", "ShoulderYaw", "Elbow", "WristRoll", "WristPitch", "WristYaw"]
G1_HAND = ["Pinky", "Ring", "Middle", "Index", "ThumbBend", "ThumbRotation"]


def test_tokens():
    assert name_tokens("kLeftShoulderPitch") == ("k", "Left", "Shoulder", "Pitch")
    assert name_tokens("shoulder_pan.pos") == ("shoulder", "pan", "pos")
    assert name_tokens("joint_10") == ("joint", "10")


def test_a_humanoid_splits_into_arms_and_hands():
    names = [f"k{side}{j}" for side in ("Left", "Right") for j in G1_ARM]
    names += [f"k{side}Hand{j}" for side in ("Left", "Right") for j in G1_HAND]
    groups = channel_groups(names)
    assert [g.channels for g in groups] == [
        tuple(range(0, 7)),
        tuple(range(7, 14)),
        tuple(range(14, 20)),
        tuple(range(20, 26)),
    ]
    assert [g.label for g in groups] == [
        "kLeft Shoulder/Elbow/Wrist",
        "kRight Shoulder/Elbow/Wrist",
        "kLeftHand Pinky/Ring/Middle/…",
        "kRightHand Pinky/Ring/Middle/…",
    ]


def test_small_vectors_stay_one_group_and_big_unnamed_ones_are_cut_in_runs():
    so101 = [
        "shoulder_pan.pos",
        "shoulder_lift.pos",
        "elbow_flex.pos",
        "wrist_flex.pos",
        "wrist_roll.pos",
        "gripper.pos",
    ]
    assert [g.channels for g in channel_groups(so101)] == [tuple(range(6))]
    runs = channel_groups([], 19, max_size=8)
    assert [(g.label, len(g.channels)) for g in runs] == [("[0:8]", 8), ("[8:16]", 8), ("[16:19]", 3)]
    same = channel_groups(["x"] * 10, max_size=4)
    assert [len(g.channels) for g in same] == [4, 4, 2]
    with pytest.raises(ValueError, match="max_size"):
        channel_groups(so101, max_size=0)


def test_every_channel_once_in_order_for_mixed_names():
    names = ["base_x", "base_y", "base_yaw"] + [f"arm_joint_{i}" for i in range(12)] + ["", "gripper"]
    groups = channel_groups(names, max_size=5)
    flat = [c for g in groups for c in g.channels]
    assert sorted(flat) == list(range(len(names))) and all(len(g.channels) <= 5 for g in groups)
    assert groups[0].channels == (0, 1, 2)

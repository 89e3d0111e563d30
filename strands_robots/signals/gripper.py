"""Gripper closure channels of a state vector and their open/close events.

One gripper-event detector serves the whole project: the subtask-chain checker's
:func:`strands_robots.ssc.gripper.detect_gripper_events` (position mode, its default
relative threshold). The offline judge's regrasp signal counts the events that
detector finds, so the judge and the chain checker can never disagree on how many
times a gripper opened and closed in one episode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np


def gripper_groups(state_names: Sequence[str]) -> dict[str, list[int]]:
    """State channels that open and close a gripper, grouped per effector.

    Every channel whose name contains ``gripper`` is a group of its own; without one,
    channels whose name contains ``hand`` are grouped by the name up to and including
    ``hand`` (``kLeftHandPinky`` and ``kLeftHandRing`` -> ``kLeftHand``), a group
    standing for a dexterous hand's closure. Case-insensitive.

    Returns:
        ``{group name: [channel indices]}``, empty when the robot has no such channel.
    """
    groups = {str(name): [i] for i, name in enumerate(state_names) if "gripper" in str(name).lower()}
    if groups:
        return groups
    for i, name in enumerate(state_names):
        match = re.search("hand", str(name), flags=re.IGNORECASE)
        if match:
            groups.setdefault(str(name)[: match.end()], []).append(i)
    return groups


def count_gripper_events(closure: np.ndarray, name: str = "", value_range: tuple[float, float] | None = None) -> int:
    """Open and close events of one closure signal (a close then an open are two).

    Args:
        closure: ``(frames,)`` closure (or opening) of one gripper; NaN samples are
            skipped.
        name: The group's name; ``left`` in it dates the events on the left arm (the
            count does not depend on it).
        value_range: The closure's ``(min, max)`` across the dataset, passed to the
            detector: an episode in which the hand moves less than 20 % of it is an
            idle hand holding sensor noise and has no events.

    Returns:
        The number of events :func:`strands_robots.ssc.gripper.detect_gripper_events`
        finds in position mode with its default threshold (0 for a channel that never
        moved).
    """
    from strands_robots.ssc.gripper import detect_gripper_events  # the one detector

    arm = "left" if "left" in name.lower() else "right"
    return len(
        detect_gripper_events(np.asarray(closure, dtype=np.float64), arm=arm, mode="position", value_range=value_range)
    )


def dataset_swings(
    events: Mapping[str, int], spans: Mapping[str, Sequence[float]], value_ranges: Mapping[str, Sequence[float]]
) -> tuple[int | None, float | None]:
    """An episode's gripper events counted as with the dataset's ``value_range`` per group.

    ``events`` are the per-group counts of :func:`count_gripper_events` without a
    range and ``spans`` the group's ``[min, max]`` closure in the episode. The detector
    with ``value_range`` finds the same events when the hand moved
    (:func:`strands_robots.ssc.gripper.moved`) and none otherwise, so the count is
    recomputed without the closure samples.

    Returns:
        ``(largest count over the groups that moved, largest span of those groups)``;
        ``(0, largest span)`` when no group moved and ``(None, None)`` without a group.
    """
    from strands_robots.ssc.gripper import moved

    if not events:
        return None, None
    counts, widths = [], []
    for name, count in events.items():
        lo, hi = (float(v) for v in spans.get(name, (0.0, 0.0)))
        vr = value_ranges.get(name)
        widths.append(hi - lo)
        if moved(lo, hi, value_range=None if vr is None else (float(vr[0]), float(vr[1]))):
            counts.append((int(count), hi - lo))
    if not counts:
        return 0, max(widths)
    return max(c for c, _ in counts), max(w for _, w in counts)

"""Numpy signals of one episode: sampling, motion, gripper events, frame statistics.

Pure computation on arrays (no I/O, no tools): the judge tools (``sample_frames``),
the offline judge's dataset profile, the review page and the report all import the
same numbers from here. Modules: :mod:`.sampling` (which frames, frame period),
:mod:`.gripper` (closure channels and their open/close events), :mod:`.motion` (per-channel
jerk, steps, drift, frozen runs), :mod:`.frames` (dark, flat or partly covered camera frames),
:mod:`.episode` (the per-episode signal dictionary).
"""

from strands_robots.signals.episode import episode_signals, rms_state_jerk
from strands_robots.signals.frames import frame_stats
from strands_robots.signals.gripper import count_gripper_events, gripper_groups
from strands_robots.signals.sampling import frame_period, sample_indices

__all__ = [
    "count_gripper_events",
    "episode_signals",
    "frame_period",
    "frame_stats",
    "gripper_groups",
    "rms_state_jerk",
    "sample_indices",
]

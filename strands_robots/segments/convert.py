"""Frames -> seconds at the edges, and segments -> the outcome labels' ``subtasks`` (docs/segments.md,
"Outcome subtasks": frame ``f`` is at ``f / fps`` s).
"""

from __future__ import annotations

from typing import Any

from strands_robots.arguments import FPS, SECONDS, number_argument, number_refusal
from strands_robots.errors import LabelValidationError
from strands_robots.segments.templates import TASK_COMPLETE

#: Decimals kept in seconds (microseconds; avoids 0.30000000000000004).
SECONDS_DECIMALS = 6


_FPS_REFUSAL = number_refusal("fps", FPS, "pass the dataset's frames per second, e.g. fps=30 (CLI: --fps 30).")


def check_fps(fps: Any) -> float:
    """A positive finite fps (:data:`strands_robots.arguments.FPS`), as a float.

    Raises:
        LabelValidationError: a bool, text, NaN, infinity, zero or a negative number.
    """
    return number_argument(fps, _FPS_REFUSAL, FPS)


def check_seconds(value: Any, what: str) -> float:
    """A number of seconds (a timestamp, a duration, a window): finite and 0 or more
    (:data:`strands_robots.arguments.SECONDS`), as a float.

    Raises:
        LabelValidationError: a bool, text, NaN, infinity or a negative number.
    """
    return number_argument(value, number_refusal(what, SECONDS, f"pass {what} in seconds, e.g. {what}=0.5."), SECONDS)


def frame_to_seconds(frame: int, fps: float) -> float:
    """Seconds from the episode start of frame boundary ``frame``."""
    return round(frame / check_fps(fps), SECONDS_DECIMALS)


def segments_to_subtasks(segments: Any, fps: float, *, include_task_complete: bool = True) -> list[dict[str, Any]]:
    """A segmentation as the outcome labels' ``subtasks``.

    Args:
        segments: Stored segments (``[{"start", "end", "label", ...}]`` in frames), or a
            stored record with a ``segments`` list.
        fps: Frames per second of the dataset (``open_dataset(root).fps``).
        include_task_complete: Keep the trailing ``TASK_COMPLETE`` interval.

    Returns:
        ``[{"label", "start_ts", "end_ts", "outcome": None}]`` sorted by ``start_ts``,
        seconds from the episode start.

    Raises:
        LabelValidationError: bad fps or a segment without integer frames and a label.
    """
    fps = check_fps(fps)
    if isinstance(segments, dict):
        segments = segments.get("segments")
    if not isinstance(segments, list):
        raise LabelValidationError("segments must be a list of {start, end, label} in frames (or a stored record).")
    out = []
    for i, seg in enumerate(sorted(segments, key=lambda s: (s.get("start", 0), s.get("end", 0)))):
        start, end, label = seg.get("start"), seg.get("end"), seg.get("label")
        if type(start) is not int or type(end) is not int or not isinstance(label, str) or not label:
            raise LabelValidationError(f"segments[{i}] needs integer start/end frames and a label, got {seg!r}.")
        if label == TASK_COMPLETE and not include_task_complete:
            continue
        out.append(
            {
                "label": label,
                "start_ts": frame_to_seconds(start, fps),
                "end_ts": frame_to_seconds(end, fps),
                "outcome": None,
            }
        )
    return out

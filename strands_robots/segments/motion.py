"""Base speed from a base-velocity feature: norm, moving median and moving intervals (docs/segments.md,
"Validation and findings" and "Label pool, reference examples, prefill").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strands_robots.arguments import SPEED_THRESHOLD, number_argument, number_refusal
from strands_robots.errors import LabelValidationError

#: Default speed threshold in the feature's units (m/s for a base velocity).
DEFAULT_THRESHOLD = 0.05


def check_threshold(value: Any, what: str = "base_speed_threshold") -> float:
    """A base-speed threshold: a positive finite number (:data:`strands_robots.arguments.SPEED_THRESHOLD`).

    The same limits hold for the segment rules, :func:`prefill_navigate` and the SSC
    cascade, so a threshold one of them takes is taken by all. ``what`` names the value
    in the message: an argument (``base_speed_threshold``) or a command-line option
    (``--threshold``).

    Raises:
        LabelValidationError: a bool, text, NaN, infinity, zero or a negative number.
    """
    example = f"{what} {DEFAULT_THRESHOLD}" if what.startswith("--") else f"{what}={DEFAULT_THRESHOLD}"
    remedy = f"pass a speed in the base-velocity feature's units, e.g. {example} (m/s)."
    return number_argument(value, number_refusal(what, SPEED_THRESHOLD, remedy), SPEED_THRESHOLD)


def base_speed(values: Any, length: int | None = None) -> np.ndarray:
    """Per-frame speed: the value itself for a 1-D feature, the Euclidean norm per row for 2-D.

    Args:
        values: Array-like, shape ``(frames,)`` or ``(frames, dims)``.
        length: When given, the number of frames ``values`` must have.

    Returns:
        Float array of shape ``(frames,)``; NaN rows stay NaN.

    Raises:
        LabelValidationError: wrong shape or frame count.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 2:
        arr = np.sqrt(np.sum(arr * arr, axis=1))
    elif arr.ndim == 1:
        arr = np.abs(arr)
    else:
        raise LabelValidationError(f"base velocity must have shape (frames,) or (frames, dims), got {arr.shape}.")
    if length is not None and arr.shape[0] != length:
        raise LabelValidationError(
            f"base velocity has {arr.shape[0]} frames but the episode has {length}; pass the episode's own rows."
        )
    return arr


def smooth(speed: np.ndarray, window: int) -> np.ndarray:
    """Centred moving median over ``window`` frames (NaN-aware; edges use the frames available).

    A median removes single-frame spikes and, unlike a mean, keeps the start and end of a
    drive on the frame where they happen.
    """
    window = int(window)
    if window <= 1 or speed.size == 0:
        return speed.copy()
    half = window // 2
    padded = np.concatenate((np.full(half, np.nan), speed, np.full(window - 1 - half, np.nan)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, window)
    out = np.full(speed.shape[0], np.nan)
    has_value = ~np.all(np.isnan(windows), axis=1)
    out[has_value] = np.nanmedian(windows[has_value], axis=1)
    return out


def moving_intervals(moving: np.ndarray, min_frames: int = 1) -> list[tuple[int, int]]:
    """Half-open ``[start, end)`` runs of True in ``moving``.

    Runs shorter than ``min_frames`` are dropped, and stationary gaps shorter than
    ``min_frames`` between two runs are bridged (a brief stop inside one drive).
    """
    runs: list[list[int]] = []
    padded = np.concatenate(([False], moving.astype(bool), [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    for start, end in zip(edges[::2], edges[1::2], strict=True):
        if runs and start - runs[-1][1] < min_frames:
            runs[-1][1] = int(end)
        else:
            runs.append([int(start), int(end)])
    return [(s, e) for s, e in runs if e - s >= min_frames]

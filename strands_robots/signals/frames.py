"""Cheap statistics of decoded camera frames: is a camera blacked out or covered?

Pure numpy on decoded ``(H, W, 3)`` uint8 images (a few sampled frames per camera,
shrunk before they get here). Rule: ``docs/judge.md`` ("Offline judge rules").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Frames the judge decodes per camera for these statistics (evenly spaced, first and last included).
STAT_FRAMES = 16
#: Longest side, in pixels, of a frame decoded for statistics.
STAT_MAX_SIDE = 64
#: A frame is flat (a covered or blacked-out lens) when its luma standard deviation is below this.
FLAT_LUMA_STD = 6.0
#: ... but only on a camera whose usual frames (75th percentile of the sampled ones) have at
#: least this many times that texture: a camera that always films a blank wall is not occluded.
TEXTURE_RATIO = 3.0


def luma(image: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma of an ``(H, W, 3)`` (or ``(H, W)``) image, float64 0-255."""
    array = np.asarray(image, dtype=np.float64)
    if array.ndim == 2:
        return array
    return array[..., 0] * 0.299 + array[..., 1] * 0.587 + array[..., 2] * 0.114


def frame_flags(image: np.ndarray) -> tuple[float, float]:
    """``(mean luma, luma std)`` of one frame (0-255 scale)."""
    y = luma(image)
    return float(y.mean()), float(y.std())


def occluded_frames(stds: Sequence[float]) -> list[bool]:
    """Which frames of one camera are occluded: flat (luma std below ``FLAT_LUMA_STD``)
    on a camera whose 75th-percentile frame has ``TEXTURE_RATIO`` times that texture."""
    if not len(stds):
        return []
    reference = float(np.percentile(np.asarray(stds, dtype=np.float64), 75))
    if reference < TEXTURE_RATIO * FLAT_LUMA_STD:
        return [False] * len(stds)
    return [s < FLAT_LUMA_STD for s in stds]


def frame_stats(images: Mapping[str, Sequence[np.ndarray]], frame_indices: Sequence[int]) -> dict[str, Any]:
    """Occlusion statistics of sampled frames of every camera.

    Args:
        images: Camera key -> decoded images, one per entry of ``frame_indices``.
        frame_indices: The sampled ``frame_index`` values.

    Returns:
        ``{"sampled_frames": n, "cameras": {key: {"occluded": count, "occluded_frames":
        [frame_index, ...], "mean_luma": median mean luma, "luma_std": median luma std}},
        "occluded_share": the largest share of occluded frames (:func:`occluded_frames`)
        over the cameras}``; ``occluded_share`` is None without a camera.
    """
    cameras: dict[str, Any] = {}
    worst: float | None = None
    for key, frames in sorted(images.items()):
        flags = [frame_flags(image) for image in frames]
        bad = occluded_frames([std for _, std in flags])
        occluded = [int(f) for f, b in zip(frame_indices, bad, strict=True) if b]
        cameras[key] = {
            "occluded": len(occluded),
            "occluded_frames": occluded,
            "mean_luma": round(float(np.median([m for m, _ in flags])), 2) if flags else None,
            "luma_std": round(float(np.median([sd for _, sd in flags])), 2) if flags else None,
        }
        if flags:
            share = len(occluded) / len(flags)
            worst = share if worst is None else max(worst, share)
    return {
        "sampled_frames": len(frame_indices),
        "cameras": cameras,
        "occluded_share": None if worst is None else round(worst, 6),
    }

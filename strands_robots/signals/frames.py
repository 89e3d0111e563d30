"""Cheap statistics of decoded camera frames: is a camera blacked out or (partly) covered?

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
#: A frame is cut into a GRID x GRID grid of cells for the partial-cover test.
GRID = 8
#: A cell is flat when its luma standard deviation is below this (a covered part of the lens).
FLAT_CELL_STD = 1.5
#: A frame is partly covered when its share of flat cells exceeds the camera's usual share
#: (the median over the sampled frames) by at least this much.
COVER_SHARE = 0.25


def luma(image: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma of an ``(H, W, 3)`` (or ``(H, W)``) image, float64 0-255."""
    array = np.asarray(image, dtype=np.float64)
    if array.ndim == 2:
        return array
    return array[..., 0] * 0.299 + array[..., 1] * 0.587 + array[..., 2] * 0.114


def flat_cell_share(image: np.ndarray) -> float:
    """Share of the ``GRID`` x ``GRID`` cells of a frame whose luma std is below ``FLAT_CELL_STD``
    (0.0 for a frame smaller than the grid)."""
    y = luma(image)
    height, width = y.shape[0] // GRID, y.shape[1] // GRID
    if not height or not width:
        return 0.0
    cells = y[: height * GRID, : width * GRID].reshape(GRID, height, GRID, width)
    return float(np.mean(cells.std(axis=(1, 3)) < FLAT_CELL_STD))


def occluded_frames(stds: Sequence[float], covered: Sequence[float] | None = None) -> list[bool]:
    """Which frames of one camera are occluded, on a camera whose 75th-percentile frame has
    ``TEXTURE_RATIO`` times ``FLAT_LUMA_STD`` of texture (a camera that films a blank wall never is):
    a frame that is flat (luma std below ``FLAT_LUMA_STD``: blacked out or covered whole) or
    partly covered (its share of flat cells, ``covered``, ``COVER_SHARE`` above the camera's median).

    Args:
        stds: Luma std of each sampled frame.
        covered: :func:`flat_cell_share` of each sampled frame (None: whole-frame test only).
    """
    if not len(stds):
        return []
    reference = float(np.percentile(np.asarray(stds, dtype=np.float64), 75))
    if reference < TEXTURE_RATIO * FLAT_LUMA_STD:
        return [False] * len(stds)
    usual = float(np.median(covered)) if covered is not None and len(covered) else 0.0
    shares = covered if covered is not None else [0.0] * len(stds)
    return [s < FLAT_LUMA_STD or c - usual >= COVER_SHARE for s, c in zip(stds, shares, strict=True)]


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
        flags = [(float(y.mean()), float(y.std())) for y in map(luma, frames)]  # (mean, std) luma per frame
        bad = occluded_frames([std for _, std in flags], [flat_cell_share(image) for image in frames])
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

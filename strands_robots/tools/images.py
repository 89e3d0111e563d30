"""Compact image content blocks for a model (docs/judge.md, ``sample_frames``).

A decoded frame becomes strands' image content block
``{"image": {"format": "jpeg", "source": {"bytes": ...}}}``, downscaled so its longer
side is at most ``max_side`` pixels and JPEG-encoded (a fraction of PNG's size for
camera frames; every strands provider accepts JPEG).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

#: Longest image side sent to a model, in pixels.
DEFAULT_MAX_SIDE = 512
JPEG_QUALITY = 85


def downscale(frame: np.ndarray, max_side: int = DEFAULT_MAX_SIDE) -> Image.Image:
    """``frame`` (H x W x 3 uint8) as a Pillow image whose longer side is <= ``max_side``.

    The aspect ratio is kept; a smaller frame is not enlarged.

    Raises:
        ValueError: not an H x W x 3 (or H x W) array, or ``max_side`` < 1.
    """
    if max_side < 1:
        raise ValueError(f"max_side must be >= 1 pixel, got {max_side}")
    array = np.asarray(frame)
    if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] not in (1, 3, 4)):
        raise ValueError(f"a frame must be H x W x 3, got shape {array.shape}")
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    image = Image.fromarray(array).convert("RGB")
    if max(image.size) > max_side:
        image.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    return image


def image_block(frame: np.ndarray, max_side: int = DEFAULT_MAX_SIDE) -> dict[str, Any]:
    """A strands image content block holding ``frame`` as downscaled JPEG bytes."""
    buffer = io.BytesIO()
    downscale(frame, max_side).save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return {"image": {"format": "jpeg", "source": {"bytes": buffer.getvalue()}}}

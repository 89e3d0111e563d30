"""Compact image content blocks for a model (docs/judge.md, ``sample_frames``).

A decoded frame, already shrunk so its longer side is at most ``max_side`` pixels by
:func:`strands_robots.dataset.video.decode_frames` (the one shrinking rule), becomes
strands' image content block ``{"image": {"format": "jpeg", "source": {"bytes": ...}}}``,
JPEG-encoded (a fraction of PNG's size for camera frames; every strands provider accepts JPEG).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

#: Longest image side sent to a model, in pixels (the ``max_side`` the judge tools decode with).
DEFAULT_MAX_SIDE = 512
JPEG_QUALITY = 85


def image_block(frame: np.ndarray) -> dict[str, Any]:
    """A strands image content block holding ``frame`` (``H x W x 3`` uint8 RGB) as JPEG bytes."""
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return {"image": {"format": "jpeg", "source": {"bytes": buffer.getvalue()}}}

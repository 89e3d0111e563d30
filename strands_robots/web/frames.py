"""Camera frames as JPEG for the page's scrubber, decoded server-side with a small LRU cache.

The browser asks for one frame at a time; decoding each alone would seek in the mp4
every time. Frames are decoded in aligned blocks of :data:`BLOCK` consecutive frames
with one :meth:`Dataset.decode_frames` call (which, for v3.0, reads only the
episode's own part of the shared mp4), encoded to JPEG, and the block is kept in a
byte-bounded LRU cache. Scrubbing or playing through an episode then decodes each
block once. Concurrent requests for the same block wait for one decoder.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from strands_robots.dataset import Dataset

#: Frames decoded per request (aligned: frames ``[k*BLOCK, (k+1)*BLOCK)``).
BLOCK = 16
#: Longer side of served frames, pixels.
MAX_SIDE = 480
JPEG_QUALITY = 82
#: Cache budget, bytes of JPEG.
CACHE_BYTES = 96 << 20

BlockKey = tuple[int, str, int]


def to_jpeg(image: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    """``HxWx3`` uint8 RGB -> JPEG bytes (Pillow)."""
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


class FrameCache:
    """JPEG frames of one dataset, decoded in blocks and cached.

    Args:
        dataset: The open dataset (the server's own; never a path from a request).
        block: Frames per decoded block.
        max_side: Longer side of the served images, pixels.
        max_bytes: Cache budget; least recently used blocks are dropped beyond it.

    Attributes:
        decoded_blocks: Blocks decoded so far (for tests).
    """

    def __init__(
        self, dataset: Dataset, *, block: int = BLOCK, max_side: int = MAX_SIDE, max_bytes: int = CACHE_BYTES
    ) -> None:
        self.dataset = dataset
        self.block = block
        self.max_side = max_side
        self.max_bytes = max_bytes
        self.decoded_blocks = 0
        self._blocks: OrderedDict[BlockKey, list[bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._pending: dict[BlockKey, threading.Lock] = {}

    def jpeg(self, episode: int, camera: str, frame: int) -> bytes:
        """The JPEG of ``frame`` of ``episode`` seen by ``camera``.

        Raises:
            EpisodeNotFoundError, FrameIndexError, DatasetError, MissingFileError,
            FrameDecodeError: as :meth:`Dataset.decode_frames` (checked before decoding).
        """
        from strands_robots.dataset.video import frame_index_argument

        length = self.dataset.episodes[episode].length
        frame = frame_index_argument(frame, episode, length)
        start = frame - frame % self.block
        key = (episode, camera, start)
        images = self._get(key)
        if images is None:
            with self._lock:
                gate = self._pending.setdefault(key, threading.Lock())
            with gate:
                images = self._get(key)
                if images is None:
                    indices = list(range(start, min(start + self.block, length)))
                    decoded = self.dataset.decode_frames(episode, camera, indices, max_side=self.max_side)
                    images = [to_jpeg(image) for image in decoded]
                    self._put(key, images)
            with self._lock:
                self._pending.pop(key, None)
        return images[frame - start]

    def _get(self, key: BlockKey) -> list[bytes] | None:
        with self._lock:
            images = self._blocks.get(key)
            if images is not None:
                self._blocks.move_to_end(key)
            return images

    def _put(self, key: BlockKey, images: list[bytes]) -> None:
        size = sum(len(i) for i in images)
        with self._lock:
            self.decoded_blocks += 1
            self._blocks[key] = images
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._blocks) > 1:
                _, dropped = self._blocks.popitem(last=False)
                self._bytes -= sum(len(i) for i in dropped)

"""``decode_frames``: camera images of chosen frames of one episode: ``video`` features decoded with
PyAV by a :class:`VideoCursor` that seeks or decodes forward, ``image`` features from the parquet bytes
with Pillow. The rules (a frame's video time, the half-period window, when to seek): docs/dataset.md,
"Decoding frames".
"""

from __future__ import annotations

import io
import math
import numbers
from collections.abc import Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import av
import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from strands_robots.arguments import int_argument
from strands_robots.dataset.episodes import Episode
from strands_robots.dataset.errors import FrameIndexError, MissingFileError
from strands_robots.dataset.frames import read_frames, resolve_episode
from strands_robots.dataset.hub import fetch_missing
from strands_robots.errors import DatasetError, FrameDecodeError, LabelValidationError

if TYPE_CHECKING:
    from strands_robots.dataset.layout import Layout


class VideoCursor:
    """Decode frames of one mp4 at increasing times, seeking only when it is cheaper.

    Attributes:
        path: The mp4 file.
        decoded: Frames decoded so far (for tests and benchmarks).
        seeks: Seeks performed so far.
    """

    #: Frames kept after decoding, so two close requests can share candidates.
    BUFFER = 3
    #: Seconds added to a seek target: float32 timestamps of hour-long files are off by ~1e-4 s.
    SEEK_SLACK = 1e-4

    def __init__(self, path: Path, fps: float) -> None:
        self.path = path
        self.fps = float(fps)
        try:
            self.container = av.open(str(path))
        except av.FFmpegError as exc:
            raise FrameDecodeError(f"{path} cannot be opened as video ({exc}); restore or re-encode it.") from exc
        if not self.container.streams.video:
            self.container.close()
            raise DatasetError(f"{path} has no video stream; re-encode or restore the file.")
        self.stream = self.container.streams.video[0]
        self.time_base: Fraction = self.stream.time_base or Fraction(1, 1)
        self._frames: Iterator[av.VideoFrame] | None = None
        self._ended = False
        self._buf: list[tuple[float, av.VideoFrame]] = []
        self._last_key: float | None = None
        self._gop: float | None = None  # seconds between the last two keyframes seen
        self.decoded = 0
        self.seeks = 0

    def close(self) -> None:
        """Close the container."""
        self.container.close()

    def __enter__(self) -> VideoCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _seek(self, t: float) -> None:
        pts = max(0, math.floor(Fraction(t) / self.time_base)) if t > 0 else 0
        self.container.seek(pts, stream=self.stream, backward=True, any_frame=False)
        self._frames = self.container.decode(self.stream)
        self._ended = False
        self._buf = []
        self._last_key = None
        self.seeks += 1

    def _decode_next(self) -> bool:
        assert self._frames is not None
        try:
            frame = next(self._frames)
        except StopIteration:
            self._ended = True
            return False
        except av.FFmpegError as exc:
            raise FrameDecodeError(f"{self.path}: decoding failed ({exc}); the file may be truncated.") from exc
        t = float(frame.pts * self.time_base) if frame.pts is not None else float(frame.time or 0.0)
        if frame.key_frame:
            if self._last_key is not None and t > self._last_key:
                self._gop = t - self._last_key
            self._last_key = t
        self._buf.append((t, frame))
        del self._buf[: -self.BUFFER]
        self.decoded += 1
        return True

    def _forward_limit(self) -> float:
        """Largest gap (seconds) worth decoding forward instead of seeking."""
        if self._gop is not None:
            return self._gop
        if self._last_key is not None and self._buf:
            return max(self._buf[-1][0] - self._last_key, 1.0 / self.fps)
        return 1.0 / self.fps

    def _must_seek(self, t: float, tol: float) -> bool:
        if self._frames is None or not self._buf:
            return True
        if t < self._buf[0][0] - tol:
            return True  # behind what is buffered
        return (t - self._buf[-1][0]) > self._forward_limit() + 1e-9

    def frame_near(self, t: float, tol: float) -> tuple[float, av.VideoFrame]:
        """The decoded frame nearest to time ``t`` (seconds), within ``tol``.

        Raises:
            FrameDecodeError: No decoded frame lies within ``tol`` of ``t``.
        """
        if self._must_seek(t, tol):
            # The keyframe at or before t (+ a slack for float32 timestamps) precedes every frame
            # that can be nearest to t, except one closer than SEEK_SLACK to t itself.
            self._seek(t + self.SEEK_SLACK)
        # a frame within SEEK_SLACK below t (float32 timestamps) is t's own frame: stop there
        while (not self._buf or self._buf[-1][0] < t - self.SEEK_SLACK) and not self._ended:
            self._decode_next()
        if not self._buf:
            raise FrameDecodeError(
                f"{self.path}: no frame decoded near {t:.4f} s (the video ends before it). The mp4 is "
                "shorter than the episode, or from_timestamp is wrong in meta/episodes."
            )
        best_t, best = min(self._buf, key=lambda item: abs(item[0] - t))
        if abs(best_t - t) > tol:
            near = ", ".join(f"{bt:.4f} s" for bt, _ in self._buf)
            raise FrameDecodeError(
                f"{self.path}: requested time {t:.4f} s has no decoded frame within {tol:.4f} s "
                f"(half a frame period); nearest decoded frames at {near}. The video may be shorter than "
                "the episode, or its from_timestamp / timestamps may be wrong."
            )
        return best_t, best


def _scaled_size(width: int, height: int, max_side: int | None) -> tuple[int, int] | None:
    """``(width, height)`` shrunk so the longer side is at most ``max_side`` pixels (aspect kept),
    or None when the image fits already (or ``max_side`` is None)."""
    if max_side is None:
        return None
    if max_side < 1:
        raise ValueError(f"max_side must be >= 1, got {max_side}")
    scale = max_side / max(width, height)
    if scale >= 1:
        return None
    return max(1, round(width * scale)), max(1, round(height * scale))


def downscale(image: Image.Image, max_side: int | None) -> Image.Image:
    """Shrink ``image`` so its longer side is at most ``max_side`` pixels (bilinear), keeping aspect."""
    size = _scaled_size(*image.size, max_side)
    return image if size is None else image.resize(size, Image.Resampling.BILINEAR)


def _to_array(frame: av.VideoFrame, max_side: int | None) -> np.ndarray:
    """RGB pixels, shrunk by libswscale (bilinear) as :func:`downscale` shrinks an image."""
    size = _scaled_size(frame.width, frame.height, max_side)
    if size is None:
        return frame.to_ndarray(format="rgb24")
    return frame.to_ndarray(width=size[0], height=size[1], format="rgb24", interpolation="BILINEAR")


def frame_index_argument(frame: Any, episode: int, length: int) -> int:
    """A ``frame_index`` of an episode of ``length`` frames (``[0, length)``; numpy integers
    taken as their value; ``bool``, ``3.0`` and text refused).

    Raises:
        FrameIndexError: not an integer, or outside the episode.
    """

    def refuse(f: Any) -> FrameIndexError:
        if isinstance(f, numbers.Integral) and not isinstance(f, bool):
            return FrameIndexError(f"frame_index {f} is outside episode {episode} (frames 0..{length - 1}).")
        return FrameIndexError(f"frame_index {f!r} is not an integer (episode {episode}).")

    return int_argument(frame, refuse, minimum=0, maximum=length - 1)


def frame_times(ds: Layout, ep: Episode) -> np.ndarray:
    """Per-frame ``timestamp`` (seconds, index = ``frame_index``) of one episode.

    From the data's ``timestamp`` column when the data file has one, else ``frame_index / fps``.
    """
    if ep.data_file.is_file() and "timestamp" in pq.read_schema(ep.data_file).names:
        return read_frames(ds, ep, ["timestamp"])["timestamp"].astype(np.float64)
    return np.arange(ep.length, dtype=np.float64) / float(ds.fps)


def decode_frames(
    ds: Layout,
    episode: int | Episode,
    camera: str,
    frame_indices: Sequence[int],
    max_side: int | None = None,
    timestamps: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Decode camera images of chosen frames of one episode.

    Args:
        ds: An open dataset.
        episode: ``episode_index`` (or the :class:`Episode`).
        camera: A full camera feature key from ``ds.camera_keys``.
        frame_indices: ``frame_index`` values within the episode (``[0, length)``), any
            order, repeats allowed.
        max_side: When given, images are shrunk (bilinear, aspect kept) so their longer
            side is at most this many pixels.
        timestamps: The episode's ``timestamp`` column (seconds, index = ``frame_index``)
            when the caller has already read it; otherwise it is read from the data file.

    Returns:
        One ``HxWx3`` uint8 RGB array per requested frame, in the requested order.

    Raises:
        EpisodeNotFoundError: No such episode.
        FrameIndexError: A frame index outside the episode.
        DatasetError: ``camera`` is not a camera feature, or the episode has no video reference.
        LabelValidationError: ``max_side`` is not a positive integer (nor None).
        MissingFileError: The mp4 (or the data parquet of an ``image`` feature) is missing;
            a ``FileNotFoundError`` naming the file and the episode.
        FrameDecodeError: No decoded frame within half a frame period of a requested time.
    """
    if max_side is not None:
        max_side = int_argument(
            max_side,
            lambda v: LabelValidationError(
                f"max_side must be a positive integer number of pixels, got {type(v).__name__} {v!r}; "
                "pass e.g. max_side=480, or None for full-size images."
            ),
            minimum=1,
        )
    ep = resolve_episode(ds, episode)
    if camera not in ds.camera_keys:
        raise DatasetError(f"{camera!r} is not a camera of {ds.root}; cameras: {list(ds.camera_keys)}.")
    indices = [frame_index_argument(f, ep.episode_index, ep.length) for f in frame_indices]
    if not indices:
        return []
    if ds.features[camera].get("dtype") == "image":
        return _decode_images(ds, ep, camera, indices, max_side)
    ref = ep.videos.get(camera)
    if ref is None:
        raise DatasetError(
            f"episode {ep.episode_index} has no video reference for {camera!r}: meta/episodes lacks "
            f"videos/{camera}/chunk_index, file_index and from_timestamp. Repair the episodes metadata."
        )
    if not ref.path.is_file() and not fetch_missing(ds.root, ref.path):
        raise MissingFileError(
            f"video file {ref.path} of episode {ep.episode_index} (camera {camera}) is missing; restore the "
            "dataset's videos/ directory, or read state only (read_frames)."
        )
    if timestamps is not None and len(timestamps) == ep.length:
        times = np.asarray(timestamps, dtype=np.float64)
    else:
        times = frame_times(ds, ep)
    tol = 0.5 / float(ds.fps)
    wanted = sorted(set(indices), key=lambda f: times[f])
    decoded: dict[int, np.ndarray] = {}
    with VideoCursor(ref.path, ds.fps) as cursor:
        for f in wanted:
            t = ref.from_timestamp + float(times[f])
            try:
                _, frame = cursor.frame_near(t, tol)
            except FrameDecodeError as exc:
                raise FrameDecodeError(f"episode {ep.episode_index} camera {camera} frame_index {f}: {exc}") from None
            decoded[f] = _to_array(frame, max_side)
    return _in_request_order(indices, decoded)


def _in_request_order(indices: list[int], decoded: dict[int, np.ndarray]) -> list[np.ndarray]:
    seen: set[int] = set()
    out = []
    for f in indices:
        out.append(decoded[f] if f not in seen else decoded[f].copy())
        seen.add(f)
    return out


def _decode_images(ds: Layout, ep: Episode, camera: str, indices: list[int], max_side: int | None) -> list[np.ndarray]:
    columns = [camera, "frame_index"] if camera != "frame_index" else [camera]
    frames = read_frames(ds, ep, columns)
    order = frames["frame_index"] if "frame_index" in frames else np.arange(ep.length)
    decoded: dict[int, np.ndarray] = {}
    for f in sorted(set(indices)):
        rows = np.flatnonzero(order == f)
        if rows.size == 0:
            raise FrameIndexError(f"episode {ep.episode_index} has no row with frame_index {f}.")
        cell = frames[camera][int(rows[0])]
        data = cell.get("bytes") if isinstance(cell, dict) else cell
        if not data:
            raise DatasetError(
                f"episode {ep.episode_index} frame {f}: image feature {camera!r} holds no bytes in "
                f"{ep.data_file}; images must be embedded in the parquet."
            )
        with Image.open(io.BytesIO(data)) as image:
            decoded[f] = np.asarray(downscale(image.convert("RGB"), max_side))
    return _in_request_order(indices, decoded)

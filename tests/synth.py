"""Synthetic LeRobot datasets for tests (real parquet via pyarrow, real mp4 via PyAV).

Any test module can ``from tests.synth import make_v3_dataset, make_v21_dataset`` (pytest
runs with ``pythonpath = ["."]``, so ``tests`` is importable as a namespace package).

Content is a closed formula so tests can check exactly what they read:

- ``observation.state[f, c] = synth_state(e, f, c) = 1000 * e + f + c / 100`` (float32) for
  frame ``f`` of episode ``e``; ``action`` is the state + 0.5.
- every video frame is one flat grey level ``synth_gray(e, f)`` in all channels; two
  neighbouring frames differ by 5 levels and episodes are offset, so an off-by-one frame or
  a wrong episode offset shows. Video is H.264 (libx264, qp 0, yuv420p); decoded grey is
  within +-2 levels of the formula.
- ``image`` features hold a PNG of the same grey level.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

DEFAULT_TASK = "Pick the block and place it in the bin"
V3_DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
V3_VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
V2_DATA_PATH = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
V2_VIDEO_PATH = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"


def synth_state(e: int, f: int | np.ndarray, c: int | np.ndarray) -> np.ndarray:
    """``observation.state`` value of channel ``c`` at frame ``f`` of episode ``e``."""
    return np.asarray(1000.0 * e + np.asarray(f) + np.asarray(c) / 100.0, dtype=np.float32)


def synth_gray(e: int, f: int) -> int:
    """Grey level (0..255) of every pixel of frame ``f`` of episode ``e``."""
    return 20 + (37 * e + 5 * f) % 215


def _state_block(e: int, length: int, dim: int) -> np.ndarray:
    f = np.arange(length)[:, None]
    c = np.arange(dim)[None, :]
    return synth_state(e, f, c)


def _features(
    state_dim: int, state_names: Any, cameras: Sequence[str], size: tuple[int, int], fps: float, image: bool
) -> dict[str, Any]:
    width, height = size
    names = [f"joint_{i}.pos" for i in range(state_dim)] if state_names == "default" else state_names
    features: dict[str, Any] = {
        "observation.state": {"dtype": "float32", "shape": [state_dim], "names": names},
        "action": {"dtype": "float32", "shape": [state_dim], "names": names},
    }
    for key in cameras:
        features[key] = {
            "dtype": "image" if image else "video",
            "shape": [height, width, 3],
            "names": ["height", "width", "channels"],
        }
        if not image:
            features[key]["info"] = {
                "video.height": height,
                "video.width": width,
                "video.codec": "h264",
                "video.pix_fmt": "yuv420p",
                "video.fps": fps,
                "video.channels": 3,
                "has_audio": False,
            }
    for key, dtype in (
        ("timestamp", "float32"),
        ("frame_index", "int64"),
        ("episode_index", "int64"),
        ("index", "int64"),
        ("task_index", "int64"),
    ):
        features[key] = {"dtype": dtype, "shape": [1], "names": None}
    return features


def _png(level: int, size: tuple[int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (level, level, level)).save(buf, format="PNG")
    return buf.getvalue()


def _rows(
    episodes: Sequence[tuple[int, int]],
    *,
    start_index: Sequence[int],
    fps: float,
    state_dim: int,
    nan_at: dict[int, Iterable[tuple[int, int]]],
    image_keys: Sequence[str],
    size: tuple[int, int],
    shuffle: bool,
    task_index: dict[int, int],
) -> pa.Table:
    tables = []
    for (e, length), first in zip(episodes, start_index, strict=True):
        state = _state_block(e, length, state_dim)
        for f, c in nan_at.get(e, ()):
            state[f, c] = np.nan
        f = np.arange(length, dtype=np.int64)
        cols: dict[str, pa.Array] = {
            "observation.state": pa.FixedSizeListArray.from_arrays(pa.array(state.reshape(-1)), state_dim),
            "action": pa.FixedSizeListArray.from_arrays(pa.array((state + 0.5).reshape(-1)), state_dim),
        }
        for key in image_keys:
            cols[key] = pa.array(
                [{"bytes": _png(synth_gray(e, int(i)), size), "path": None} for i in f],
                type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
            )
        cols["timestamp"] = pa.array((f / fps).astype(np.float32))
        cols["frame_index"] = pa.array(f)
        cols["episode_index"] = pa.array(np.full(length, e, dtype=np.int64))
        cols["index"] = pa.array(first + f)
        cols["task_index"] = pa.array(np.full(length, task_index.get(e, 0), dtype=np.int64))
        table = pa.table(cols)
        if shuffle:  # rows stored out of frame order: readers must sort by frame_index
            table = table.take(pa.array(np.random.default_rng(e).permutation(length)))
        tables.append(table)
    return pa.concat_tables(tables)


def encode_gray_video(
    path: Path, segments: Sequence[tuple[int, int]], *, fps: float, size: tuple[int, int], gop: int
) -> None:
    """Write one mp4 holding ``segments`` (``(episode_index, length)``) back to back.

    Frame ``f`` of episode ``e`` is a flat grey :func:`synth_gray` image; frame ``i`` of the
    file has pts ``i / fps``. ``gop`` is the keyframe interval in frames.
    """
    width, height = size
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = Fraction(fps).limit_denominator(1001)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(
            "libx264", rate=rate, options={"g": str(gop), "keyint_min": str(gop), "qp": "0", "preset": "ultrafast"}
        )
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        i = 0
        for e, length in segments:
            for f in range(length):
                level = synth_gray(e, f)
                frame = av.VideoFrame.from_ndarray(np.full((height, width, 3), level, dtype=np.uint8), "rgb24")
                frame.pts, frame.time_base = i, 1 / rate
                for packet in stream.encode(frame):
                    container.mux(packet)
                i += 1
        for packet in stream.encode():
            container.mux(packet)


def _groups(indices: list[int], episodes_per_file: int | None) -> list[list[int]]:
    if not episodes_per_file:
        return [indices]
    return [indices[i : i + episodes_per_file] for i in range(0, len(indices), episodes_per_file)]


def _write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=4))


def make_v3_dataset(
    root: str | Path,
    lengths: Sequence[int],
    *,
    fps: float = 30,
    state_dim: int = 6,
    episode_indices: Sequence[int] | None = None,
    episodes_per_file: int | None = None,
    video: bool = False,
    cameras: Sequence[str] = ("observation.images.front",),
    video_size: tuple[int, int] = (32, 24),
    gop: int = 2,
    image: bool = False,
    tasks: Sequence[str] = (DEFAULT_TASK,),
    task_of: dict[int, int] | None = None,
    state_names: Any = "default",
    nan_at: dict[int, Iterable[tuple[int, int]]] | None = None,
    from_timestamp_drift: dict[int, float] | None = None,
    shuffle_rows: bool = False,
    codebase_version: str | None = "v3.0",
    info_overrides: dict[str, Any] | None = None,
) -> Path:
    """Write a LeRobot v3.0 dataset at ``root`` and return ``root``.

    Args:
        root: Directory to create (must not hold a dataset yet).
        lengths: Frames per episode, in ``episode_index`` order.
        fps: Frames per second.
        state_dim: Width of ``observation.state`` and ``action``.
        episode_indices: Real ``episode_index`` values (default ``0..n-1``); may be
            non-contiguous, e.g. ``[10, 30, 40]``.
        episodes_per_file: Split data, videos and episodes metadata into files of this many
            episodes (``file-000``, ``file-001``, ...); None puts all in one file each.
        video: Write one H.264 mp4 per camera per file, episodes back to back, with
            per-episode ``from_timestamp`` / ``to_timestamp`` (frames: :func:`synth_gray`).
        cameras: Camera feature keys.
        video_size: ``(width, height)`` of the frames.
        gop: Keyframe interval of the mp4 (LeRobot uses 2; most encoders 60 or more).
        image: Store the cameras as ``image`` features (PNG bytes in the data parquet) instead.
        tasks: Task strings (``task_index`` = position).
        task_of: ``episode_index`` -> ``task_index`` (default 0).
        state_names: ``names`` of the state feature (default ``joint_i.pos``; pass a nested
            list, a dict or None to exercise those forms).
        nan_at: ``episode_index`` -> ``[(frame, channel), ...]`` set to NaN in the state.
        from_timestamp_drift: ``episode_index`` -> seconds added to its ``from_timestamp``
            and ``to_timestamp`` in the metadata only (the mp4 is unchanged).
        shuffle_rows: Store each episode's rows in a random frame order.
        codebase_version: Header version (None leaves it out).
        info_overrides: Keys merged into ``meta/info.json`` last (e.g. ``{"total_episodes": True}``).

    Returns:
        ``root`` as a Path.
    """
    root = Path(root)
    indices = list(episode_indices) if episode_indices is not None else list(range(len(lengths)))
    assert len(indices) == len(lengths), "one length per episode"
    length_of = dict(zip(indices, lengths, strict=True))
    task_of = task_of or {}
    drift = from_timestamp_drift or {}
    image_keys = list(cameras) if image else []
    video_keys = list(cameras) if (video and not image) else []

    starts = dict(zip(indices, np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int).tolist(), strict=True))
    meta: dict[str, list] = {
        k: []
        for k in ("episode_index", "tasks", "length", "data/chunk_index", "data/file_index")
        + ("dataset_from_index", "dataset_to_index")
    }
    for key in video_keys:
        for field in ("chunk_index", "file_index", "from_timestamp", "to_timestamp"):
            meta[f"videos/{key}/{field}"] = []
    groups = _groups(indices, episodes_per_file)
    for file_index, group in enumerate(groups):
        eps = [(e, length_of[e]) for e in group]
        table = _rows(
            eps,
            start_index=[starts[e] for e in group],
            fps=fps,
            state_dim=state_dim,
            nan_at=nan_at or {},
            image_keys=image_keys,
            size=video_size,
            shuffle=shuffle_rows,
            task_index=task_of,
        )
        data_path = root / V3_DATA_PATH.format(chunk_index=0, file_index=file_index)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(data_path, table.schema) as writer:
            offset = 0
            for _, length in eps:  # one row group per episode, as LeRobot writes
                writer.write_table(table.slice(offset, length))
                offset += length
        for key in video_keys:
            encode_gray_video(
                root / V3_VIDEO_PATH.format(video_key=key, chunk_index=0, file_index=file_index),
                eps,
                fps=fps,
                size=video_size,
                gop=gop,
            )
        t = 0.0
        for e, length in eps:
            meta["episode_index"].append(e)
            meta["tasks"].append([tasks[task_of.get(e, 0)]])
            meta["length"].append(length)
            meta["data/chunk_index"].append(0)
            meta["data/file_index"].append(file_index)
            meta["dataset_from_index"].append(starts[e])
            meta["dataset_to_index"].append(starts[e] + length)
            for key in video_keys:
                meta[f"videos/{key}/chunk_index"].append(0)
                meta[f"videos/{key}/file_index"].append(file_index)
                meta[f"videos/{key}/from_timestamp"].append(t + drift.get(e, 0.0))
                meta[f"videos/{key}/to_timestamp"].append(t + length / fps + drift.get(e, 0.0))
            t += length / fps
    meta_table = pa.table(meta)
    offset = 0
    for file_index, group in enumerate(groups):
        path = root / "meta" / "episodes" / "chunk-000" / f"file-{file_index:03d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(meta_table.slice(offset, len(group)), path)
        offset += len(group)
    pq.write_table(
        pa.table({"task_index": pa.array(range(len(tasks)), pa.int64()), "task": list(tasks)}),
        root / "meta" / "tasks.parquet",
    )
    info: dict[str, Any] = {
        "codebase_version": codebase_version,
        "fps": fps,
        "features": _features(state_dim, state_names, cameras if (video or image) else (), video_size, fps, image),
        "total_episodes": len(indices),
        "total_frames": int(sum(lengths)),
        "total_tasks": len(tasks),
        "chunks_size": 1000,
        "data_path": V3_DATA_PATH,
        "video_path": V3_VIDEO_PATH if video_keys else None,
        "robot_type": "synthetic",
    }
    if codebase_version is None:
        del info["codebase_version"]
    info.update(info_overrides or {})
    _write_json(root / "meta" / "info.json", info)
    return root


def make_v21_dataset(
    root: str | Path,
    lengths: Sequence[int],
    *,
    fps: float = 30,
    state_dim: int = 6,
    episode_indices: Sequence[int] | None = None,
    video: bool = False,
    cameras: Sequence[str] = ("observation.images.front",),
    video_size: tuple[int, int] = (32, 24),
    gop: int = 2,
    tasks: Sequence[str] = (DEFAULT_TASK,),
    state_names: Any = "default",
    nan_at: dict[int, Iterable[tuple[int, int]]] | None = None,
    codebase_version: str = "v2.1",
    info_overrides: dict[str, Any] | None = None,
) -> Path:
    """Write a LeRobot v2.1 (or v2.0) dataset at ``root``: one parquet and one mp4 per episode.

    ``meta/episodes.jsonl``, ``meta/tasks.jsonl``, ``meta/info.json`` with the v2 path
    templates; content as in :func:`make_v3_dataset` (same formulas). v2.0 also gets
    ``meta/stats.json`` (empty object). Returns ``root``.
    """
    root = Path(root)
    indices = list(episode_indices) if episode_indices is not None else list(range(len(lengths)))
    assert len(indices) == len(lengths), "one length per episode"
    video_keys = list(cameras) if video else []
    start = 0
    lines = []
    for e, length in zip(indices, lengths, strict=True):
        table = _rows(
            [(e, length)],
            start_index=[start],
            fps=fps,
            state_dim=state_dim,
            nan_at=nan_at or {},
            image_keys=[],
            size=video_size,
            shuffle=False,
            task_index={},
        )
        path = root / V2_DATA_PATH.format(episode_chunk=e // 1000, episode_index=e)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)
        for key in video_keys:
            encode_gray_video(
                root / V2_VIDEO_PATH.format(episode_chunk=e // 1000, video_key=key, episode_index=e),
                [(e, length)],
                fps=fps,
                size=video_size,
                gop=gop,
            )
        lines.append(json.dumps({"episode_index": e, "tasks": [tasks[0]], "length": length}))
        start += length
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "meta" / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    (root / "meta" / "tasks.jsonl").write_text(
        "\n".join(json.dumps({"task_index": i, "task": t}) for i, t in enumerate(tasks)) + "\n"
    )
    if codebase_version == "v2.0":
        _write_json(root / "meta" / "stats.json", {})
    info: dict[str, Any] = {
        "codebase_version": codebase_version,
        "robot_type": "synthetic",
        "total_episodes": len(indices),
        "total_frames": int(sum(lengths)),
        "total_tasks": len(tasks),
        "total_videos": len(indices) * len(video_keys),
        "total_chunks": 1,
        "chunks_size": 1000,
        "fps": fps,
        "splits": {"train": f"0:{len(indices)}"},
        "data_path": V2_DATA_PATH,
        "video_path": V2_VIDEO_PATH if video_keys else None,
        "features": _features(state_dim, state_names, video_keys, video_size, fps, False),
    }
    info.update(info_overrides or {})
    _write_json(root / "meta" / "info.json", info)
    return root

"""Synthetic LeRobot datasets for tests and benchmarks (real parquet via pyarrow, real mp4 via PyAV).

Any test module can ``from tests.synth import make_v3_dataset, make_v21_dataset`` (pytest
runs with ``pythonpath = ["."]``, so ``tests`` is importable as a namespace package). The
benchmarks import it too (it needs no pytest): :func:`write_dataset` is the one writer of
a LeRobot v2.x / v3.0 dataset from per-episode arrays (state, action, camera clips, task),
and :func:`make_v3_dataset` / :func:`make_v21_dataset` are it filled with a closed formula,
so tests can check exactly what they read:

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

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
#: libx264 options of LeRobot-like lossy video: a keyframe every 2 frames.
LEROBOT_VIDEO = {"g": "2", "crf": "23", "preset": "ultrafast"}
#: The frame-index columns every data parquet ends with, and their dtypes.
INDEX_COLUMNS = (
    ("timestamp", "float32"),
    ("frame_index", "int64"),
    ("episode_index", "int64"),
    ("index", "int64"),
    ("task_index", "int64"),
)


def lossless_video(gop: int) -> dict[str, str]:
    """libx264 options of the formula videos: lossless (qp 0), a keyframe every ``gop`` frames."""
    return {"g": str(gop), "keyint_min": str(gop), "qp": "0", "preset": "ultrafast"}


@dataclass
class EpisodeArrays:
    """One episode as :func:`write_dataset` stores it.

    Attributes:
        state: ``(length, state_dim)`` float32 (``observation.state``).
        action: ``(length, action_dim)`` float32, or None for a dataset without ``action``.
        task: The episode's task string.
        video: Camera key -> ``(length, height, width, 3)`` uint8 RGB frames.
    """

    state: np.ndarray
    action: np.ndarray | None = None
    task: str = DEFAULT_TASK
    video: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return int(self.state.shape[0])


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


def features(
    state_dim: int,
    state_names: Any,
    *,
    action_dim: int | None = None,
    action_names: Any = None,
    cameras: Mapping[str, tuple[int, int]] | None = None,
    fps: float,
    image: bool = False,
) -> dict[str, Any]:
    """``meta/info.json`` ``features``: state, action (when ``action_dim``), cameras, the index columns.

    ``cameras`` maps a camera key to its ``(height, width)``; ``image`` declares them as
    ``image`` features (PNG in the data parquet) instead of H.264 ``video``.
    """
    out: dict[str, Any] = {"observation.state": {"dtype": "float32", "shape": [state_dim], "names": state_names}}
    if action_dim is not None:
        out["action"] = {"dtype": "float32", "shape": [action_dim], "names": action_names}
    for key, (height, width) in (cameras or {}).items():
        out[key] = {"dtype": "image" if image else "video", "shape": [height, width, 3]}
        out[key]["names"] = ["height", "width", "channels"]
        if not image:
            out[key]["info"] = {
                "video.height": height,
                "video.width": width,
                "video.codec": "h264",
                "video.pix_fmt": "yuv420p",
                "video.fps": fps,
                "video.channels": 3,
                "has_audio": False,
            }
    for key, dtype in INDEX_COLUMNS:
        out[key] = {"dtype": dtype, "shape": [1], "names": None}
    return out


def _png(frame: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(frame)).save(buf, format="PNG")
    return buf.getvalue()


def encode_video(path: Path, clips: Sequence[np.ndarray], *, fps: float, options: Mapping[str, str]) -> None:
    """Write ``clips`` (each ``(length, height, width, 3)`` uint8 RGB) back to back as one H.264 mp4.

    Frame ``i`` of the file has pts ``i / fps``; ``options`` are libx264's
    (:data:`LEROBOT_VIDEO`, :func:`lossless_video`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = Fraction(fps).limit_denominator(1001)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=rate, options=dict(options))
        stream.height, stream.width = clips[0].shape[1:3]
        stream.pix_fmt = "yuv420p"
        i = 0
        for clip in clips:
            for image in clip:
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), "rgb24")
                frame.pts, frame.time_base = i, 1 / rate
                for packet in stream.encode(frame):
                    container.mux(packet)
                i += 1
        for packet in stream.encode():
            container.mux(packet)


def gray_clip(e: int, length: int, size: tuple[int, int]) -> np.ndarray:
    """The ``(length, height, width, 3)`` frames of episode ``e`` (:func:`synth_gray`; a broadcast view)."""
    width, height = size
    levels = np.array([synth_gray(e, f) for f in range(length)], dtype=np.uint8)
    return np.broadcast_to(levels[:, None, None, None], (length, height, width, 3))


def encode_gray_video(
    path: Path, segments: Sequence[tuple[int, int]], *, fps: float, size: tuple[int, int], gop: int
) -> None:
    """Write one mp4 holding ``segments`` (``(episode_index, length)``) back to back.

    Frame ``f`` of episode ``e`` is a flat grey :func:`synth_gray` image; frame ``i`` of the
    file has pts ``i / fps``. ``gop`` is the keyframe interval in frames.
    """
    clips = [gray_clip(e, length, size) for e, length in segments]
    encode_video(path, clips, fps=fps, options=lossless_video(gop))


def episode_table(
    episode: EpisodeArrays,
    e: int,
    first: int,
    *,
    fps: float,
    task_index: int,
    image_keys: Sequence[str] = (),
    shuffle: bool = False,
) -> pa.Table:
    """The data rows of one episode: state, action, PNG images of ``image_keys``, the index columns.

    ``first`` is the global ``index`` of its frame 0; ``shuffle`` stores the rows in a
    random frame order (readers must sort by ``frame_index``).
    """
    length = episode.length
    f = np.arange(length, dtype=np.int64)
    state = np.asarray(episode.state, dtype=np.float32)
    cols: dict[str, pa.Array] = {
        "observation.state": pa.FixedSizeListArray.from_arrays(pa.array(state.reshape(-1)), state.shape[1]),
    }
    if episode.action is not None:
        action = np.asarray(episode.action, dtype=np.float32)
        cols["action"] = pa.FixedSizeListArray.from_arrays(pa.array(action.reshape(-1)), action.shape[1])
    for key in image_keys:
        cols[key] = pa.array(
            [{"bytes": _png(frame), "path": None} for frame in episode.video[key]],
            type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        )
    cols["timestamp"] = pa.array((f / fps).astype(np.float32))
    cols["frame_index"] = pa.array(f)
    cols["episode_index"] = pa.array(np.full(length, e, dtype=np.int64))
    cols["index"] = pa.array(first + f)
    cols["task_index"] = pa.array(np.full(length, task_index, dtype=np.int64))
    table = pa.table(cols)
    if shuffle:
        table = table.take(pa.array(np.random.default_rng(e).permutation(length)))
    return table


def episodes_meta_columns(
    indices: Sequence[int] | np.ndarray,
    lengths: Sequence[int] | np.ndarray,
    starts: Sequence[int] | np.ndarray,
    tasks: Sequence[str],
    *,
    file_index: int,
    fps: float,
    video_keys: Sequence[str] = (),
    drift: Sequence[float] | np.ndarray | None = None,
) -> dict[str, pa.Array]:
    """The LeRobot v3.0 ``meta/episodes`` columns of the episodes of one file (vectorised).

    Args:
        indices: ``episode_index`` per episode.
        lengths: Frames per episode.
        starts: Global ``index`` of each episode's frame 0 (``dataset_from_index``).
        tasks: Each episode's task string.
        file_index: The data (and video) file the episodes are in (chunk 0).
        fps: Frames per second.
        video_keys: Cameras whose ``videos/KEY/...`` columns are added: the episodes
            back to back in one mp4 per file, ``from_timestamp`` the running sum of the
            lengths before it (seconds).
        drift: Seconds added to each episode's ``from_timestamp`` and ``to_timestamp``.

    Returns:
        Column name -> array, in LeRobot's order.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    m = len(lengths)
    zeros = np.zeros(m, dtype=np.int64)
    cols: dict[str, pa.Array] = {
        "episode_index": pa.array(np.asarray(indices, dtype=np.int64)),
        "tasks": pa.array([[t] for t in tasks], pa.list_(pa.string())),
        "length": pa.array(lengths),
        "data/chunk_index": pa.array(zeros),
        "data/file_index": pa.array(np.full(m, file_index, dtype=np.int64)),
        "dataset_from_index": pa.array(starts),
        "dataset_to_index": pa.array(starts + lengths),
    }
    seconds = lengths / fps
    t = np.concatenate([[0.0], np.cumsum(seconds)[:-1]]) if m else np.zeros(0)
    offset = np.zeros(m) if drift is None else np.asarray(drift, dtype=np.float64)
    for key in video_keys:
        cols[f"videos/{key}/chunk_index"] = pa.array(zeros)
        cols[f"videos/{key}/file_index"] = pa.array(np.full(m, file_index, dtype=np.int64))
        cols[f"videos/{key}/from_timestamp"] = pa.array(t + offset)
        cols[f"videos/{key}/to_timestamp"] = pa.array(t + seconds + offset)
    return cols


def _groups(positions: list[int], episodes_per_file: int | None) -> list[list[int]]:
    if not episodes_per_file:
        return [positions]
    return [positions[i : i + episodes_per_file] for i in range(0, len(positions), episodes_per_file)]


def _write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=4))


def write_dataset(
    root: str | Path,
    episodes: Sequence[EpisodeArrays],
    *,
    fps: float,
    layout: Literal["v3", "v2"] = "v3",
    codebase_version: str | None = "v3.0",
    episode_indices: Sequence[int] | None = None,
    tasks: Sequence[str] | None = None,
    state_names: Any = None,
    action_names: Any = None,
    cameras: Sequence[str] = (),
    image: bool = False,
    video_options: Mapping[str, str] = LEROBOT_VIDEO,
    episodes_per_file: int | None = None,
    shuffle_rows: bool = False,
    from_timestamp_drift: dict[int, float] | None = None,
    robot_type: str = "synthetic",
    info_overrides: dict[str, Any] | None = None,
) -> Path:
    """Write ``episodes`` as a LeRobot dataset at ``root`` and return ``root``.

    Args:
        root: Directory to create (must not hold a dataset yet).
        episodes: The episodes (anything with ``state``, ``action``, ``task``, ``video``
            and ``length`` as :class:`EpisodeArrays` has them), in ``episode_index`` order.
        fps: Frames per second.
        layout: ``"v3"`` (data, video and episodes metadata in files of several episodes;
            ``meta/tasks.parquet``) or ``"v2"`` (one parquet and one mp4 per episode;
            ``meta/episodes.jsonl``, ``meta/tasks.jsonl``).
        codebase_version: Header version (None leaves it out); ``"v2.0"`` also writes an
            empty ``meta/stats.json``.
        episode_indices: Real ``episode_index`` values (default ``0..n-1``; may be non-contiguous).
        tasks: Task strings, ``task_index`` = position (default: the episodes' tasks, sorted).
        state_names: ``names`` of the state feature.
        action_names: ``names`` of the action feature (default ``state_names``).
        cameras: Camera keys (each episode's ``video`` has their frames).
        image: Store the cameras as ``image`` features (PNG bytes in the data parquet; v3 only).
        video_options: libx264 options of the mp4s.
        episodes_per_file: v3: files of this many episodes (``file-000``, ``file-001``, ...);
            None puts all in one file each.
        shuffle_rows: v3: store each episode's rows in a random frame order.
        from_timestamp_drift: v3: ``episode_index`` -> seconds added to its ``from_timestamp``
            and ``to_timestamp`` in the metadata only (the mp4 is unchanged).
        robot_type: ``robot_type`` of ``meta/info.json``.
        info_overrides: Keys merged into ``meta/info.json`` last.
    """
    root = Path(root)
    indices = list(episode_indices) if episode_indices is not None else list(range(len(episodes)))
    assert len(indices) == len(episodes), "one episode_index per episode"
    tasks = list(tasks) if tasks is not None else sorted({ep.task for ep in episodes})
    task_index = {t: i for i, t in enumerate(tasks)}
    lengths = [ep.length for ep in episodes]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(int).tolist()
    first = episodes[0] if episodes else None
    sizes = {key: tuple(first.video[key].shape[1:3]) for key in cameras} if first is not None else {}
    feature_map = features(
        int(first.state.shape[1]) if first is not None else 0,
        state_names,
        action_dim=None if first is None or first.action is None else int(first.action.shape[1]),
        action_names=state_names if action_names is None else action_names,
        cameras=sizes,
        fps=fps,
        image=image,
    )
    info: dict[str, Any] = {
        "codebase_version": codebase_version,
        "robot_type": robot_type,
        "total_episodes": len(indices),
        "total_frames": int(sum(lengths)),
        "total_tasks": len(tasks),
        "chunks_size": 1000,
        "fps": fps,
        "features": feature_map,
    }
    video_keys = [] if image else list(cameras)
    if layout == "v2":
        _write_v2(root, episodes, indices, starts, tasks, task_index, fps, video_keys, video_options)
        info.update(
            total_videos=len(indices) * len(video_keys),
            total_chunks=1,
            splits={"train": f"0:{len(indices)}"},
            data_path=V2_DATA_PATH,
            video_path=V2_VIDEO_PATH if video_keys else None,
        )
        if codebase_version == "v2.0":
            _write_json(root / "meta" / "stats.json", {})
    else:
        _write_v3(
            root,
            episodes,
            indices,
            starts,
            tasks,
            task_index,
            fps,
            video_keys,
            list(cameras) if image else [],
            video_options,
            episodes_per_file,
            shuffle_rows,
            from_timestamp_drift or {},
        )
        info.update(data_path=V3_DATA_PATH, video_path=V3_VIDEO_PATH if video_keys else None)
    if codebase_version is None:
        del info["codebase_version"]
    info.update(info_overrides or {})
    _write_json(root / "meta" / "info.json", info)
    return root


def _write_v3(
    root: Path,
    episodes: Sequence[EpisodeArrays],
    indices: list[int],
    starts: list[int],
    tasks: list[str],
    task_index: dict[str, int],
    fps: float,
    video_keys: list[str],
    image_keys: list[str],
    video_options: Mapping[str, str],
    episodes_per_file: int | None,
    shuffle: bool,
    drift: dict[int, float],
) -> None:
    groups = _groups(list(range(len(episodes))), episodes_per_file)
    for file_index, group in enumerate(groups):
        data_path = root / V3_DATA_PATH.format(chunk_index=0, file_index=file_index)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        tables = [
            episode_table(
                episodes[p],
                indices[p],
                starts[p],
                fps=fps,
                task_index=task_index[episodes[p].task],
                image_keys=image_keys,
                shuffle=shuffle,
            )
            for p in group
        ]
        with pq.ParquetWriter(data_path, tables[0].schema) as writer:
            for table in tables:  # one row group per episode, as LeRobot writes
                writer.write_table(table)
        for key in video_keys:
            encode_video(
                root / V3_VIDEO_PATH.format(video_key=key, chunk_index=0, file_index=file_index),
                [episodes[p].video[key] for p in group],
                fps=fps,
                options=video_options,
            )
        meta = episodes_meta_columns(
            [indices[p] for p in group],
            [episodes[p].length for p in group],
            [starts[p] for p in group],
            [episodes[p].task for p in group],
            file_index=file_index,
            fps=fps,
            video_keys=video_keys,
            drift=[drift.get(indices[p], 0.0) for p in group],
        )
        path = root / "meta" / "episodes" / "chunk-000" / f"file-{file_index:03d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(meta), path)
    pq.write_table(
        pa.table({"task_index": pa.array(range(len(tasks)), pa.int64()), "task": list(tasks)}),
        root / "meta" / "tasks.parquet",
    )


def _write_v2(
    root: Path,
    episodes: Sequence[EpisodeArrays],
    indices: list[int],
    starts: list[int],
    tasks: list[str],
    task_index: dict[str, int],
    fps: float,
    video_keys: list[str],
    video_options: Mapping[str, str],
) -> None:
    lines = []
    for p, (e, episode) in enumerate(zip(indices, episodes, strict=True)):
        path = root / V2_DATA_PATH.format(episode_chunk=e // 1000, episode_index=e)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(episode_table(episode, e, starts[p], fps=fps, task_index=task_index[episode.task]), path)
        for key in video_keys:
            encode_video(
                root / V2_VIDEO_PATH.format(episode_chunk=e // 1000, video_key=key, episode_index=e),
                [episode.video[key]],
                fps=fps,
                options=video_options,
            )
        lines.append(json.dumps({"episode_index": e, "tasks": [episode.task], "length": episode.length}))
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "meta" / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    (root / "meta" / "tasks.jsonl").write_text(
        "\n".join(json.dumps({"task_index": i, "task": t}) for i, t in enumerate(tasks)) + "\n"
    )


def _formula_episodes(
    indices: list[int],
    lengths: Sequence[int],
    *,
    state_dim: int,
    tasks: Sequence[str],
    task_of: dict[int, int],
    nan_at: dict[int, Iterable[tuple[int, int]]],
    cameras: Sequence[str],
    size: tuple[int, int],
) -> list[EpisodeArrays]:
    out = []
    for e, length in zip(indices, lengths, strict=True):
        state = _state_block(e, length, state_dim)
        for f, c in nan_at.get(e, ()):
            state[f, c] = np.nan
        video = {key: gray_clip(e, length, size) for key in cameras}
        out.append(EpisodeArrays(state, state + 0.5, tasks[task_of.get(e, 0)], video))
    return out


def _names(state_dim: int, state_names: Any) -> Any:
    return [f"joint_{i}.pos" for i in range(state_dim)] if state_names == "default" else state_names


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
    """Write a LeRobot v3.0 dataset of the formula content at ``root`` and return ``root``.

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
    indices = list(episode_indices) if episode_indices is not None else list(range(len(lengths)))
    assert len(indices) == len(lengths), "one length per episode"
    shown = list(cameras) if (video or image) else []
    episodes = _formula_episodes(
        indices,
        lengths,
        state_dim=state_dim,
        tasks=tasks,
        task_of=task_of or {},
        nan_at=nan_at or {},
        cameras=shown,
        size=video_size,
    )
    return write_dataset(
        root,
        episodes,
        fps=fps,
        layout="v3",
        codebase_version=codebase_version,
        episode_indices=indices,
        tasks=tasks,
        state_names=_names(state_dim, state_names),
        cameras=shown,
        image=image,
        video_options=lossless_video(gop),
        episodes_per_file=episodes_per_file,
        shuffle_rows=shuffle_rows,
        from_timestamp_drift=from_timestamp_drift,
        info_overrides=info_overrides,
    )


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
    templates; content as in :func:`make_v3_dataset` (same formulas; every episode has
    ``tasks[0]``). v2.0 also gets ``meta/stats.json`` (empty object). Returns ``root``.
    """
    indices = list(episode_indices) if episode_indices is not None else list(range(len(lengths)))
    assert len(indices) == len(lengths), "one length per episode"
    shown = list(cameras) if video else []
    episodes = _formula_episodes(
        indices,
        lengths,
        state_dim=state_dim,
        tasks=tasks,
        task_of={},
        nan_at=nan_at or {},
        cameras=shown,
        size=video_size,
    )
    return write_dataset(
        root,
        episodes,
        fps=fps,
        layout="v2",
        codebase_version=codebase_version,
        episode_indices=indices,
        tasks=tasks,
        state_names=_names(state_dim, state_names),
        cameras=shown,
        video_options=lossless_video(gop),
        info_overrides=info_overrides,
    )

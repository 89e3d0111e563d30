"""Build ``examples/toy_dataset/`` from the MIT-licensed g1-inspire-v21 dataset.

Three episodes (``episode_index`` 0, 1, 2) of 90 frames at 30 fps, each a 3-second window
of g1 episodes 1, 2 and 4 (the only ones whose video is shared) in which the right hand
closes on the yellow bottle and lifts it. The output uses LeRobot's v3.0 layout as
``lerobot`` 0.6 writes it (compare ``../shared/datasets/lerobot-written-v30-video``):

- ``data/chunk-000/file-000.parquet``: one file, one row group per episode;
- ``videos/observation.images.cam_high/chunk-000/file-000.mp4``: ONE mp4 with the three
  episodes back to back (AV1, keyframe every 2 frames), so ``from_timestamp`` is 0, 3 and 6 s;
- ``meta/episodes/chunk-000/file-000.parquet`` with LeRobot's columns (``stats/*`` included),
  ``meta/tasks.parquet``, ``meta/info.json``, ``meta/stats.json``;
- ``LICENSE`` (the source's MIT license) and ``SOURCE.md``.

Frames are read with this project's own reader (``strands_robots.dataset``). Nothing is
written outside the output directory; the source is only read.

Usage::

    .venv/bin/python examples/build_toy_dataset.py [--source DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from strands_robots.dataset import open_dataset

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "datasets" / "g1-inspire-v21"
DEFAULT_OUT = REPO / "examples" / "toy_dataset"

FPS = 30
LENGTH = 90  # frames per episode (3 s)
CAMERA = "observation.images.cam_high"
#: source episode_index -> first frame of its window (chosen by looking at the right-hand
#: finger channels, which drop from ~0.75 to ~0.4 as the hand closes, and at the frames).
WINDOWS = {1: 140, 2: 60, 4: 105}
#: Output video size: the source's own 640x480 (at crf 35 the dataset is about 2 MB).
WIDTH, HEIGHT = 640, 480
VIDEO_G, VIDEO_CRF, VIDEO_PRESET = 2, 35, 8
STAT_QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
NUMERIC = ("observation.state", "action", "timestamp", "frame_index", "episode_index", "index", "task_index")


def _scalar_feature(dtype: str) -> dict:
    return {"dtype": dtype, "shape": [1], "names": None}


def _stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """LeRobot's per-feature statistics over the first axis (frames)."""
    values = values.astype(np.float64)
    if values.ndim == 1:
        values = values[:, None]
    out = {
        "min": values.min(axis=0),
        "max": values.max(axis=0),
        "mean": values.mean(axis=0),
        "std": values.std(axis=0),
        "count": np.array([values.shape[0]], dtype=np.int64),
    }
    for q in STAT_QUANTILES:
        out[f"q{round(q * 100):02d}"] = np.quantile(values, q, axis=0)
    return out


def _image_stats(frames: np.ndarray) -> dict[str, np.ndarray]:
    """Per-channel statistics of uint8 frames scaled to [0, 1], shaped (3, 1, 1) like LeRobot's."""
    pixels = frames.reshape(-1, 3).astype(np.float64) / 255.0
    stats = _stats(pixels)
    out = {k: v.reshape(3, 1, 1) for k, v in stats.items() if k != "count"}
    out["count"] = np.array([frames.shape[0]], dtype=np.int64)
    return out


def _resize(rgb: np.ndarray) -> np.ndarray:
    if rgb.shape[:2] == (HEIGHT, WIDTH):
        return rgb
    return np.asarray(Image.fromarray(rgb).resize((WIDTH, HEIGHT), Image.Resampling.LANCZOS))


def _encode_video(frames: list[np.ndarray], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream(
            "libsvtav1", rate=FPS, options={"g": str(VIDEO_G), "crf": str(VIDEO_CRF), "preset": str(VIDEO_PRESET)}
        )
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        for i, rgb in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _pandas_index_metadata() -> bytes:
    """Schema metadata that makes pandas read ``task`` back as the index (as LeRobot writes it)."""
    doc = {
        "index_columns": ["task"],
        "column_indexes": [
            {
                "name": None,
                "field_name": None,
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": {"encoding": "UTF-8"},
            }
        ],
        "columns": [
            {
                "name": "task_index",
                "field_name": "task_index",
                "pandas_type": "int64",
                "numpy_type": "int64",
                "metadata": None,
            },
            {"name": "task", "field_name": "task", "pandas_type": "unicode", "numpy_type": "object", "metadata": None},
        ],
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": "2.2.3",
    }
    return json.dumps(doc).encode()


def _hf_metadata(state_dim: int) -> bytes:
    """``huggingface`` schema metadata LeRobot's data files carry (feature types for ``datasets``)."""
    vector = {"feature": {"dtype": "float32", "_type": "Value"}, "length": state_dim, "_type": "List"}
    features = {"observation.state": vector, "action": vector, "timestamp": {"dtype": "float32", "_type": "Value"}}
    for key in ("frame_index", "episode_index", "index", "task_index"):
        features[key] = {"dtype": "int64", "_type": "Value"}
    return json.dumps({"info": {"features": features}}).encode()


def build(source: Path, out: Path) -> dict:
    src = open_dataset(source)
    task = src.tasks[0]
    state_names = list(src.state_names)
    dim = len(state_names)

    state_type = pa.list_(pa.float32(), dim)
    data_schema = pa.schema(
        [
            ("observation.state", state_type),
            ("action", state_type),
            ("timestamp", pa.float32()),
            ("frame_index", pa.int64()),
            ("episode_index", pa.int64()),
            ("index", pa.int64()),
            ("task_index", pa.int64()),
        ],
        metadata={b"huggingface": _hf_metadata(dim)},
    )

    tmp = Path(tempfile.mkdtemp(prefix="toy_dataset.", dir=out.parent))
    try:
        (tmp / "data" / "chunk-000").mkdir(parents=True)
        (tmp / "meta" / "episodes" / "chunk-000").mkdir(parents=True)
        all_frames: list[np.ndarray] = []
        columns: dict[str, list[np.ndarray]] = {key: [] for key in NUMERIC}
        episode_rows = []
        episode_pixels = []
        with pq.ParquetWriter(tmp / "data" / "chunk-000" / "file-000.parquet", data_schema) as writer:
            for new_index, (source_index, start) in enumerate(WINDOWS.items()):
                rows = src.read_frames(source_index, ["observation.state", "action"])
                wanted = list(range(start, start + LENGTH))
                images = src.decode_frames(source_index, CAMERA, wanted)
                small = [_resize(im) for im in images]
                all_frames += small
                episode_pixels.append(np.stack(small))
                frame_index = np.arange(LENGTH, dtype=np.int64)
                values = {
                    "observation.state": rows["observation.state"][start : start + LENGTH].astype(np.float32),
                    "action": rows["action"][start : start + LENGTH].astype(np.float32),
                    "timestamp": (frame_index / FPS).astype(np.float32),
                    "frame_index": frame_index,
                    "episode_index": np.full(LENGTH, new_index, dtype=np.int64),
                    "index": frame_index + new_index * LENGTH,
                    "task_index": np.zeros(LENGTH, dtype=np.int64),
                }
                for key, arr in values.items():
                    columns[key].append(arr)
                arrays = [
                    pa.FixedSizeListArray.from_arrays(pa.array(values[k].reshape(-1)), dim)
                    if k in ("observation.state", "action")
                    else pa.array(values[k])
                    for k in data_schema.names
                ]
                writer.write_table(pa.Table.from_arrays(arrays, schema=data_schema))
                episode_rows.append((new_index, source_index, start, values))

        _encode_video(all_frames, tmp / "videos" / CAMERA / "chunk-000" / "file-000.mp4")

        # meta/episodes/chunk-000/file-000.parquet, LeRobot v3.0 column names and order
        record: dict[str, list] = {
            "episode_index": [],
            "tasks": [],
            "length": [],
            "data/chunk_index": [],
            "data/file_index": [],
            "dataset_from_index": [],
            "dataset_to_index": [],
            f"videos/{CAMERA}/chunk_index": [],
            f"videos/{CAMERA}/file_index": [],
            f"videos/{CAMERA}/from_timestamp": [],
            f"videos/{CAMERA}/to_timestamp": [],
        }
        stats_cols: dict[str, list] = {}
        for (new_index, _, _, values), pixels in zip(episode_rows, episode_pixels, strict=True):
            record["episode_index"].append(new_index)
            record["tasks"].append([task])
            record["length"].append(LENGTH)
            record["data/chunk_index"].append(0)
            record["data/file_index"].append(0)
            record["dataset_from_index"].append(new_index * LENGTH)
            record["dataset_to_index"].append((new_index + 1) * LENGTH)
            record[f"videos/{CAMERA}/chunk_index"].append(0)
            record[f"videos/{CAMERA}/file_index"].append(0)
            record[f"videos/{CAMERA}/from_timestamp"].append(new_index * LENGTH / FPS)
            record[f"videos/{CAMERA}/to_timestamp"].append((new_index + 1) * LENGTH / FPS)
            per_feature = {key: _stats(values[key]) for key in ("observation.state", "action")}
            per_feature[CAMERA] = _image_stats(pixels)
            for key in ("timestamp", "frame_index", "episode_index", "index", "task_index"):
                per_feature[key] = _stats(values[key])
            for key, stats in per_feature.items():
                for name, value in stats.items():
                    stats_cols.setdefault(f"stats/{key}/{name}", []).append(value.tolist())
        record.update(stats_cols)
        record["meta/episodes/chunk_index"] = [0] * len(episode_rows)
        record["meta/episodes/file_index"] = [0] * len(episode_rows)
        pq.write_table(pa.table(record), tmp / "meta" / "episodes" / "chunk-000" / "file-000.parquet")

        tasks = pa.table({"task_index": pa.array([0], pa.int64()), "task": [task]})
        tasks = tasks.replace_schema_metadata({b"pandas": _pandas_index_metadata()})
        pq.write_table(tasks, tmp / "meta" / "tasks.parquet")

        aggregate = {key: _stats(np.concatenate(columns[key])) for key in NUMERIC}
        aggregate[CAMERA] = _image_stats(np.stack(all_frames))
        stats_doc = {key: {n: v.tolist() for n, v in s.items()} for key, s in aggregate.items()}
        (tmp / "meta" / "stats.json").write_text(json.dumps(stats_doc, indent=4) + "\n")

        state_feature = {"dtype": "float32", "shape": [dim], "names": state_names}
        info = {
            "codebase_version": "v3.0",
            "fps": FPS,
            "features": {
                "observation.state": state_feature,
                "action": dict(state_feature),
                CAMERA: {
                    "dtype": "video",
                    "shape": [HEIGHT, WIDTH, 3],
                    "names": ["height", "width", "channels"],
                    "info": {
                        "video.height": HEIGHT,
                        "video.width": WIDTH,
                        "video.codec": "av1",
                        "video.pix_fmt": "yuv420p",
                        "video.fps": FPS,
                        "video.channels": 3,
                        "has_audio": False,
                        "video.g": VIDEO_G,
                        "video.crf": VIDEO_CRF,
                        "video.preset": VIDEO_PRESET,
                        "video.fast_decode": 0,
                        "video.video_backend": "pyav",
                        "video.extra_options": {},
                        "is_depth_map": False,
                    },
                },
                "timestamp": _scalar_feature("float32"),
                "frame_index": _scalar_feature("int64"),
                "episode_index": _scalar_feature("int64"),
                "index": _scalar_feature("int64"),
                "task_index": _scalar_feature("int64"),
            },
            "total_episodes": len(WINDOWS),
            "total_frames": len(WINDOWS) * LENGTH,
            "total_tasks": 1,
            "chunks_size": 1000,
            "data_files_size_in_mb": 100,
            "video_files_size_in_mb": 200,
            "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
            "video_path": "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
            "robot_type": src.robot_type,
            "splits": {"train": f"0:{len(WINDOWS)}"},
        }
        (tmp / "meta" / "info.json").write_text(json.dumps(info, indent=4) + "\n")
        shutil.copyfile(source / "LICENSE", tmp / "LICENSE")
        (tmp / "SOURCE.md").write_text(_source_md(source))

        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {"out": str(out), "bytes": size}


def _source_md(source: Path) -> str:
    windows = "\n".join(
        f"| {new} | {src} | {start}..{start + LENGTH - 1} | {new * LENGTH / FPS:.1f} .. {(new + 1) * LENGTH / FPS:.1f} |"
        for new, (src, start) in enumerate(WINDOWS.items())
    )
    size_note = (
        "kept at the source's 640x480"
        if (WIDTH, HEIGHT) == (640, 480)
        else f"resized from 640x480 to {WIDTH}x{HEIGHT} (Pillow, Lanczos)"
    )
    return f"""# toy_dataset: source and license

Built by `examples/build_toy_dataset.py` from `g1-inspire-v21`, a real Unitree G1 humanoid
(Inspire dexterous hands) teleoperation dataset in LeRobot v2.1 layout:

- Repository: https://github.com/YifanTian07/G1-policy-train
- Commit: d1d3bb45f16a99eb3220c88b4f84f6c92d306f88 (data added in 1a0a8e01f5b25ee4e17a66e8ba3b3941cea81878)
- License: MIT, "Copyright (c) 2026 Yifan Tian" (copied as `LICENSE` beside this file; the
  MIT license requires keeping that notice with the derived data).
- Task: "Pick up the yellow bottle on the table."

What was taken: 90 consecutive frames (3 s at 30 fps) of source episodes 1, 2 and 4 (the
only episodes whose video is in the shared copy), each a window in which the right hand
closes on the bottle and lifts it:

| episode_index | source episode | source frames | video time in file-000.mp4 (s) |
|---|---|---|---|
{windows}

`observation.state` and `action` (float32[26], names flattened from the source's nested list)
are copied unchanged; `timestamp`, `frame_index`, `index` and `episode_index` are
renumbered for the new episodes. The camera `observation.images.cam_high` was decoded,
{size_note} and re-encoded as ONE AV1 mp4 (libsvtav1, crf {VIDEO_CRF}, keyframe every
{VIDEO_G} frames) holding the three episodes back to back, as LeRobot v3.0 stores them. Statistics (`meta/stats.json`, `stats/*` columns) were
recomputed from the new data.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="g1-inspire-v21 root (read only)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output dataset root (replaced)")
    args = parser.parse_args()
    result = build(args.source.resolve(), args.out.resolve())
    print(f"wrote {result['out']} ({result['bytes'] / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()

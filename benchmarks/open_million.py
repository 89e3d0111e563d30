"""Time ``open_dataset`` on a v3.0 dataset with 1,000,000 episodes (target: about a second).

Measured figures: docs/dataset.md, "Performance".

Writes ``meta/info.json`` and the episodes metadata (LeRobot v3.0 columns, two cameras, a
few ``stats/*`` columns the reader must skip, split over several files as LeRobot does)
under ``benchmarks/_work/`` (or ``--work``), then prints timings of: open, ``len``,
1,000 ``in`` checks, 1,000 random ``episodes[i]`` look-ups, iterating all indices, and
computing ``problems``.

Usage::

    .venv/bin/python benchmarks/open_million.py [--episodes 1000000] [--files 10]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.dataset import open_dataset

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests/synth.py lives beside the package
    sys.path.insert(0, str(REPO))

from tests.synth import episodes_meta_columns  # noqa: E402

CAMERAS = ("observation.images.front", "observation.images.wrist")
TASK = "Pick the block and place it in the bin"


def write_dataset(root: Path, n: int, files: int, fps: int = 30) -> None:
    """The episodes metadata of ``n`` episodes in ``files`` files (``tests/synth.py``'s columns
    plus ``stats/*`` and ``meta/episodes/*``), and ``meta/info.json``; no data or video files."""
    if root.exists():
        shutil.rmtree(root)
    meta = root / "meta" / "episodes" / "chunk-000"
    meta.mkdir(parents=True)
    rng = np.random.default_rng(0)
    lengths = rng.integers(100, 600, size=n).astype(np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    per_file = -(-n // files)
    for k in range(files):
        lo, hi = k * per_file, min(n, (k + 1) * per_file)
        if lo >= hi:
            break
        sl = slice(lo, hi)
        m = hi - lo
        cols = episodes_meta_columns(
            np.arange(lo, hi, dtype=np.int64),
            lengths[sl],
            starts[sl],
            [TASK] * m,
            file_index=k,
            fps=fps,
            video_keys=CAMERAS,
        )
        stats = rng.random((m, 6))
        for name in ("min", "max", "mean", "std"):
            cols[f"stats/observation.state/{name}"] = pa.FixedSizeListArray.from_arrays(
                pa.array(stats.reshape(-1)), 6
            ).cast(pa.list_(pa.float64()))
        cols["meta/episodes/chunk_index"] = pa.array(np.zeros(m, np.int64))
        cols["meta/episodes/file_index"] = pa.array(np.full(m, k, np.int64))
        pq.write_table(pa.table(cols), meta / f"file-{k:03d}.parquet")
    video = {"dtype": "video", "shape": [480, 640, 3], "names": ["height", "width", "channels"]}
    info = {
        "codebase_version": "v3.0",
        "fps": fps,
        "features": {
            "observation.state": {"dtype": "float32", "shape": [6], "names": [f"j{i}" for i in range(6)]},
            **{cam: video for cam in CAMERAS},
        },
        "total_episodes": n,
        "total_frames": int(lengths.sum()),
        "total_tasks": 1,
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "video_path": "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
    }
    (root / "meta" / "info.json").write_text(json.dumps(info))


def timed(label: str, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label:<40} {time.perf_counter() - start:8.3f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "_work" / "million")
    args = parser.parse_args()
    n = args.episodes
    timed(f"write {n:,} episodes metadata ({args.files} files)", lambda: write_dataset(args.work, n, args.files))
    size = sum(p.stat().st_size for p in args.work.rglob("*.parquet"))
    print(f"{'episodes metadata on disk':<40} {size / 1e6:8.1f} MB")
    ds = timed("open_dataset", lambda: open_dataset(args.work))
    ds = timed("open_dataset again (files cached)", lambda: open_dataset(args.work))
    timed("len(episodes)", lambda: len(ds.episodes))
    rng = np.random.default_rng(1)
    probes = rng.integers(0, 2 * n, size=1000).tolist()
    hits = timed("1,000 `in` checks", lambda: sum(p in ds.episodes for p in probes))
    picks = rng.integers(0, n, size=1000).tolist()
    timed("1,000 random episodes[i]", lambda: [ds.episodes[p] for p in picks])
    timed("iterate all episode_index values", lambda: sum(1 for _ in ds.episodes))
    problems = timed("problems (cross-checks, file stats)", lambda: ds.problems)
    print(f"episodes={len(ds.episodes):,} frames={ds.total_frames:,} in-hits={hits} problems={len(problems)}")
    print(f"episodes[{n - 1}] = {ds.episodes[n - 1]}")


if __name__ == "__main__":
    main()

"""Benchmark 1 (docs/performance.md, target 1): 100,000 single annotate_episode calls, the batch
API, and the whole-file-rewrite baseline (what a writer without a journal does), on one machine in
one run.

    .venv/bin/python benchmarks/labels_write.py [--episodes 100000] [--baseline-sample 200]

Prints figures; writes nothing outside a temp directory.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from strands_robots.episode_labels import annotate_episode, annotate_episodes, flush, record_deterministic_verdicts
from strands_robots.storage.atomic import atomic_write_bytes
from strands_robots.storage.codec import dump_canonical, load_json_bytes
from strands_robots.storage.lock import sidecar_lock


def setup(root: Path, n: int) -> float:
    root.mkdir(parents=True)
    start = time.perf_counter()
    verdicts = [
        {"episode": i, "success": i % 3 != 0, "steps": 300, "cumulative_reward": 1.0, "seed": i} for i in range(n)
    ]
    record_deterministic_verdicts(root, verdicts, benchmark="bench")
    return time.perf_counter() - start


def whole_file_rewrite_annotate(path: Path, episode: int) -> None:
    """The baseline: lock, read and parse the whole file, change one record, rewrite it all."""
    with sidecar_lock(path):
        document = load_json_bytes(path.read_bytes(), path)
        record = document["episodes"][str(episode)]
        record["judge"] = {
            "quality": "high",
            "failure_mode": None,
            "note": "baseline",
            "success_opinion": None,
            "disputes_verdict": False,
            "model": "bench",
            "labeled_at": time.time(),
        }
        atomic_write_bytes(path, dump_canonical(document))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--baseline-sample", type=int, default=100)
    args = parser.parse_args()
    n = args.episodes
    with tempfile.TemporaryDirectory() as tmp:
        single = Path(tmp) / "single"
        setup_s = setup(single, n)
        flush(single)
        size_mb = (single / "episode_labels.json").stat().st_size / 1e6
        print(f"setup: recorded {n:,} verdicts in {setup_s:.2f} s ({size_mb:.1f} MB canonical file)")

        start = time.perf_counter()
        for i in range(n):
            annotate_episode(single, i, quality="high" if i % 2 else "medium", note="ok", model="bench")
        single_s = time.perf_counter() - start
        start = time.perf_counter()
        flush(single)
        flush_s = time.perf_counter() - start
        final = json.loads((single / "episode_labels.json").read_text())
        labelled = sum(1 for r in final["episodes"].values() if "judge" in r)
        print(
            f"single annotate_episode x {n:,}: {single_s:.1f} s total, {single_s / n * 1e3:.3f} ms/call; "
            f"final flush {flush_s:.2f} s; judge blocks in the canonical file: {labelled:,}"
        )

        batch = Path(tmp) / "batch"
        setup(batch, n)
        start = time.perf_counter()
        chunk = 1000
        for lo in range(0, n, chunk):
            annotate_episodes(
                batch, [{"episode": i, "quality": "high", "model": "bench"} for i in range(lo, min(n, lo + chunk))]
            )
        flush(batch)
        batch_s = time.perf_counter() - start
        print(
            f"annotate_episodes in batches of {chunk}: {batch_s:.1f} s total for {n:,} ({batch_s / n * 1e6:.1f} us/episode)"
        )

        base = Path(tmp) / "baseline"
        setup(base, n)
        flush(base)
        path = base / "episode_labels.json"
        sample = args.baseline_sample
        start = time.perf_counter()
        for i in range(sample):
            whole_file_rewrite_annotate(path, i)
        base_per = (time.perf_counter() - start) / sample
        print(
            f"whole-file-rewrite baseline: {base_per * 1e3:.0f} ms/call (sample of {sample}); "
            f"extrapolated to {n:,} calls: {base_per * n:.0f} s = {base_per * n / 3600:.1f} h"
        )
        print(f"ratio baseline/journaled per call: {base_per / (single_s / n):.0f}x")
        print(f"cpu count: {os.cpu_count()}")


if __name__ == "__main__":
    main()

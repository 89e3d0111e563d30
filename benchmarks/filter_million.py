"""Benchmark 2 (docs/performance.md, target 2): filter_episodes on a 1,000,000-episode canonical sidecar (~500 MB).

The sidecar is written the way any tool would (``json.dump(indent=2, sort_keys=True)``,
as strands-robots 0.5.3 does), with judge blocks on every episode and 1% reviewed.
Each measurement runs in a fresh process so peak memory (max RSS) is its own:

- cold: no index file (first read);
- warm: the index file beside the sidecar exists (a later process);
- baseline: parse the whole JSON with ``json.load`` and filter in Python (what a reader
  without an index does; it ignores reviews, so it selects a slightly different list).

    .venv/bin/python benchmarks/filter_million.py [--episodes 1000000] [--dir benchmarks/_work]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
from pathlib import Path
root = Path(sys.argv[1]); mode = sys.argv[2]
start = time.perf_counter()
if mode == "baseline":
    document = json.loads((root / "episode_labels.json").read_text())
    rank = {"low": 0, "medium": 1, "high": 2}
    chosen = sorted(int(k) for k, r in document["episodes"].items()
                    if r.get("judge") and r["deterministic"]["success"] and rank[r["judge"]["quality"]] >= 1)
else:
    from strands_robots.episode_labels import filter_episodes
    chosen = filter_episodes(root)
elapsed = time.perf_counter() - start
# VmHWM belongs to this exec'd image (ru_maxrss would carry the parent's peak across fork+exec)
hwm_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"mode": mode, "seconds": elapsed, "selected": len(chosen), "max_rss_mb": hwm_kb / 1024}))
"""


def generate(path: Path, n: int) -> None:
    rnd = random.Random(0)
    qualities = ["low", "medium", "high"]
    modes = [None, "jerky_motion", "near_miss", "drift"]
    episodes = {}
    for i in range(n):
        success = rnd.random() < 0.7
        opinion = None if rnd.random() < 0.8 else (not success)
        record = {
            "episode_index": i,
            "deterministic": {
                "success": success,
                "failure": not success,
                "steps": 300,
                "cumulative_reward": float(success),
                "seed": i,
            },
            "judge": {
                "quality": rnd.choice(qualities),
                "failure_mode": rnd.choice(modes),
                "note": "sampled four frames; the grasp is clean and the approach is steady",
                "success_opinion": opinion,
                "disputes_verdict": opinion is not None and opinion != success,
                "model": "judge-vlm",
                "labeled_at": 1796033549.0 + i,
            },
        }
        episodes[str(i)] = record
    document = {"schema_version": 1, "benchmark": "bench", "episodes": episodes}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, sort_keys=True)
        handle.write("\n")


def add_reviews(root: Path, every: int) -> None:
    """Review 1 in ``every`` disputed episodes through the library (so digests are right)."""
    from strands_robots.episode_labels import flush, list_disputes, review_episode

    for row in list_disputes(root)[::every]:
        review_episode(root, row["episode"], decision="overrule_verdict", reviewer="bench")
    flush(root)


def run(root: Path, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path(__file__).parent / "_work")
    args = parser.parse_args()
    root = args.dir / f"filter_{args.episodes}"
    root.mkdir(parents=True, exist_ok=True)
    sidecar = root / "episode_labels.json"
    if not sidecar.exists():
        start = time.perf_counter()
        generate(sidecar, args.episodes)
        add_reviews(root, every=20)
        print(f"generated {sidecar} in {time.perf_counter() - start:.0f} s")
    print(f"sidecar: {sidecar.stat().st_size / 1e6:.0f} MB, {args.episodes:,} episodes")
    for path in root.glob(".episode_labels.json.index*"):
        path.unlink()
    for mode in ("cold", "warm", "baseline"):
        result = run(root, mode)
        print(
            f"{mode:>8}: {result['seconds']:.2f} s, peak RSS {result['max_rss_mb']:.0f} MB, {result['selected']:,} selected"
        )


if __name__ == "__main__":
    main()

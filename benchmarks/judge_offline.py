"""The offline judge on a synthetic 10,000-episode dataset, and its agreement on g1.

    .venv/bin/python benchmarks/judge_offline.py [--episodes 10000] [--frames 150] [--workers 1] [--cprofile FILE]
    .venv/bin/python benchmarks/judge_offline.py agreement [--source ../shared/datasets/g1-inspire-v21]

``bench`` (the default) writes a LeRobot v3.0 dataset (state only: 6 joints and a
gripper at 30 fps, 1,000 episodes per data file, one row group per episode) into a
temp directory, plants anomalies in 4 % of the episodes (jitter, a regrasp, a long
pause, NaN frames), records verdicts and runs ``run_judge`` (the offline judge's full
tool path per episode) once. It prints the load average before and after (the machine
may be shared), episodes per second, the share of the run in each stage (the profile
pass, each tool, the label writes, the rest), how many ``sample_frames`` calls were
answered from the profile pass, and how the planted episodes were graded. With
``--cprofile FILE`` the run is profiled (``cProfile``; slower) and the top functions by
own time are printed.

``agreement`` copies the g1 dataset's state (no video) to a temp directory, records a
success verdict for every episode (teleoperated demonstrations), runs the offline judge
and prints ``measure_agreement`` against ``benchmarks/judge_g1_holdout.json`` (labels
written by looking at state plots and the three shared videos, before the judge's
rules existed). Nothing is written outside the temp directory.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from strands_robots.dataset import open_dataset
from strands_robots.episode_labels import flush, measure_agreement, read_labels, record_deterministic_verdicts
from strands_robots.judges import run_judge

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests/synth.py lives beside the package
    sys.path.insert(0, str(REPO))

from tests.synth import EpisodeArrays, write_dataset  # noqa: E402

FPS = 30
NAMES = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]
PER_FILE = 1000
TASK = "pick the cube"
PLANTS = ("jitter", "regrasp", "pause", "nan")


def closed(t: np.ndarray, start: float, end: float, ramp: float = 0.05) -> np.ndarray:
    """1 while the gripper is closed on ``[start, end]``, with smooth ramps of ``ramp`` (share of the episode)."""
    up = np.clip((t - start) / ramp, 0, 1)
    down = np.clip((t - end) / ramp, 0, 1)
    smooth = lambda x: x * x * (3 - 2 * x)  # noqa: E731
    return smooth(up) - smooth(down)


def trajectory(rng: np.random.Generator, length: int, plant: str | None) -> np.ndarray:
    """A reach (minimum-jerk), a grasp, a lift; the gripper closes once and opens at the end."""
    t = np.linspace(0.0, 1.0, length)
    s = 10 * t**3 - 15 * t**4 + 6 * t**5
    goal = rng.normal(0, 0.6, 5)
    joints = np.outer(s, goal) + rng.normal(0, 0.002, (length, 5))
    gripper = 1.0 - 0.9 * closed(t, 0.4, 0.85) + rng.normal(0, 0.005, length)
    if plant == "jitter":
        joints += rng.normal(0, 0.03, joints.shape)
    elif plant == "regrasp":
        # two missed grasps before the one that holds
        shut = closed(t, 0.2, 0.3) + closed(t, 0.4, 0.5) + closed(t, 0.6, 0.85)
        gripper = 1.0 - 0.9 * shut + rng.normal(0, 0.005, length)
    elif plant == "pause":
        stop = length // 3
        joints[stop:] = joints[stop]  # the arm stops for the rest of the (longer) episode
        gripper[stop:] = gripper[stop]
    state = np.concatenate([joints, gripper[:, None]], axis=1).astype(np.float32)
    if plant == "nan":
        state[length // 2 : length // 2 + 3, 2] = np.nan
    return state


def build_dataset(root: Path, n: int, frames: int, seed: int = 0) -> dict[int, str]:
    """Write the synthetic v3.0 dataset (``tests/synth.py``'s writer); return episode -> planted anomaly."""
    rng = np.random.default_rng(seed)
    plants = {int(e): PLANTS[k % len(PLANTS)] for k, e in enumerate(rng.choice(n, size=n * 4 // 100, replace=False))}
    lengths = [
        (frames * 2 if plants.get(e) == "pause" else int(rng.integers(frames * 9 // 10, frames * 11 // 10 + 1)))
        for e in range(n)
    ]
    episodes = [EpisodeArrays(trajectory(rng, lengths[e], plants.get(e)), task=TASK) for e in range(n)]
    write_dataset(root, episodes, fps=FPS, state_names=NAMES, episodes_per_file=PER_FILE)  # state only, no action
    return plants


def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "synthetic"
        t0 = time.perf_counter()
        plants = build_dataset(root, args.episodes, args.frames)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        verdicts = [
            {"episode": e, "success": e % 10 != 0, "steps": ep.length} for e, ep in open_dataset(root).episodes.items()
        ]
        record_deterministic_verdicts(root, verdicts, benchmark="synthetic")
        verdict_s = time.perf_counter() - t0
        load_before = os.getloadavg()
        profiler = cProfile.Profile() if args.cprofile else None
        if profiler is not None:
            profiler.enable()
        report = run_judge(root, workers=args.workers)
        if profiler is not None:
            profiler.disable()
        load_after = os.getloadavg()
        t0 = time.perf_counter()
        flush(root)
        flush_s = time.perf_counter() - t0
        total = report.seconds
        n = len(report.labelled)
        print(f"dataset: {args.episodes} episodes x ~{args.frames} frames, v3.0, built in {build_s:.1f} s")
        print(f"verdicts recorded in {verdict_s:.2f} s")
        print(f"judge run: {n} labelled, {len(report.failed)} failed, workers={args.workers}")
        before, after = (" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after))
        print(f"  load average (1, 5, 15 min) before {before}, after {after}")
        print(f"  wall {total:.1f} s -> {n / total:.1f} episodes/s ({1000 * total / n:.2f} ms/episode)")
        print(
            f"  profile pass (every episode's signals): {report.profile_seconds:.1f} s ({report.profile_seconds / total:.1%})"
        )
        for name, seconds in sorted(report.tool_seconds.items(), key=lambda kv: -kv[1]):
            print(f"  inside {name}: {seconds:.1f} s ({seconds / total:.1%} of the run)")
        print(f"  label writes (group commits): {report.write_seconds:.1f} s ({report.write_seconds / total:.1%})")
        rest = total - report.profile_seconds - sum(report.tool_seconds.values()) - report.write_seconds
        print(f"  planning, selection and bookkeeping (the rest): {rest:.1f} s ({rest / total:.1%})")
        print(f"  sample_frames answered from the profile pass: {report.signals_reused}/{n}")
        print(f"  final flush of episode_labels.json: {flush_s:.2f} s")
        if profiler is not None:
            profiler.dump_stats(args.cprofile)
            print(f"cProfile of the run written to {args.cprofile}; top 15 by own time:")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        print(f"quality counts: {report.quality_counts()}; failure modes: {report.failure_mode_counts()}")
        records = read_labels(root)["episodes"]
        for plant in PLANTS:
            eps = [e for e, p in plants.items() if p == plant]
            graded = Counter(
                (records[str(e)]["judge"]["quality"], records[str(e)]["judge"]["failure_mode"]) for e in eps
            )
            print(f"planted {plant:8s} ({len(eps)}): {dict(graded.most_common())}")
        clean = [e for e in range(args.episodes) if e not in plants]
        flagged = sum(1 for e in clean if records[str(e)]["judge"]["quality"] != "high")
        print(f"clean episodes graded below high: {flagged}/{len(clean)} ({flagged / len(clean):.1%})")


def agreement(args: argparse.Namespace) -> None:
    holdout = json.loads((REPO / "benchmarks" / "judge_g1_holdout.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "g1"
        root.mkdir()
        shutil.copytree(args.source / "meta", root / "meta")
        shutil.copytree(args.source / "data", root / "data")
        for p in root.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        ds = open_dataset(root)
        verdicts = [{"episode": e, "success": True, "steps": ep.length} for e, ep in ds.episodes.items()]
        record_deterministic_verdicts(root, verdicts, benchmark="g1-teleoperated-demos")
        report = run_judge(root)
        print(f"offline judge on {len(report.labelled)} g1 episodes in {report.seconds:.1f} s")
        print(f"quality counts: {report.quality_counts()}; failure modes: {report.failure_mode_counts()}")
        result = measure_agreement(root, holdout)
        for key in (
            "episodes_compared",
            "quality_agreement",
            "quality_baseline",
            "quality_kappa",
            "failure_mode_agreement",
            "failure_mode_baseline",
            "failure_mode_kappa",
        ):
            print(f"{key}: {result[key]}")
        print("quality confusion [human][judge]:", json.dumps(result["quality_confusion"]))
        print("disagreements:", json.dumps(result["disagreements"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", choices=("bench", "agreement"), default="bench")
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--cprofile", type=Path, default=None, help="Profile the run with cProfile into this file.")
    parser.add_argument("--source", type=Path, default=REPO.parent / "shared" / "datasets" / "g1-inspire-v21")
    args = parser.parse_args()
    (agreement if args.mode == "agreement" else bench)(args)


if __name__ == "__main__":
    main()

"""Wall time of each ``strands-labels`` command on a 1,000-episode dataset (target: <= 0.5 s each).

Writes a v3.0 dataset of ``--episodes`` episodes of ``--frames`` frames (``tests/synth.py``,
no video) under ``benchmarks/_work/cli_wall/``, then runs a session of commands in order on a
fresh copy (verdicts, annotate, filter, ... each in its own process, interpreter start-up
and exit included), ``--repeat`` times, and prints each command's median wall time and CPU
time (user + system: what a loaded machine inflates less than the wall time). The commands
that read frames (``judge``, ``report``, ``ssc events``) run on one episode: their
cost grows with the episodes they read, not with the labels.

    .venv/bin/python benchmarks/cli_wall.py [--python .venv/bin/python] [--episodes 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: The synthetic dataset's state has no component named like a gripper: name one.
GRIPPER = "right=observation.state:joint_5.pos"
CLI = "from strands_robots.cli.main import run; run()"


def session(root: Path, work: Path, n: int) -> list[tuple[str, list[str]]]:
    """The commands of one labelling session, in order (name, arguments)."""
    verdicts = work / "verdicts.json"
    r = str(root)
    return [
        ("info", ["info", r]),
        ("verdicts", ["verdicts", r, str(verdicts), "--benchmark", "bench"]),
        ("annotate", ["annotate", r, "5", "--quality", "high", "--model", "bench"]),
        ("annotate (dispute)", ["annotate", r, "6", "--quality", "low", "--opinion", "success", "--model", "bench"]),
        ("filter", ["filter", r]),
        ("filter --explain", ["filter", r, "--explain", "--min-quality", "low"]),
        ("show", ["show", r]),
        ("disputes", ["disputes", r]),
        ("resolve", ["resolve", r, "6", "--decision", "overrule_verdict", "--reviewer", "me", "--quality", "medium"]),
        ("agreement", ["agreement", r]),
        ("flush", ["flush", r]),
        ("outcome set", ["outcome", "set", r, "3", "--outcome", "expert_success"]),
        ("outcome list", ["outcome", "list", r]),
        ("outcome export", ["outcome", "export", r, "--out", str(work / "outcomes.jsonl")]),
        ("segments show", ["segments", "show", r]),
        ("segments validate", ["segments", "validate", r]),
        ("remap --dry-run", ["remap", r, "--deleted", str(n - 1), "--dry-run"]),
        ("judge (1 episode)", ["judge", r, "--episodes", "0"]),
        ("report (1 episode)", ["report", r, "--episode", "0", "--out", str(work / "report")]),
        ("ssc events (1 episode)", ["ssc", "events", r, "--episodes", "0", "--gripper", GRIPPER]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with strands_robots installed")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=HERE / "_work" / "cli_wall")
    args = parser.parse_args()
    work = args.work.resolve()
    source = work / f"dataset_{args.episodes}"
    if not (source / "meta" / "info.json").exists():
        from tests.synth import make_v3_dataset

        shutil.rmtree(source, ignore_errors=True)
        make_v3_dataset(source, [args.frames] * args.episodes, episodes_per_file=args.episodes)
    verdicts = [{"episode": i, "success": i % 3 != 0, "steps": args.frames} for i in range(args.episodes)]
    (work / "verdicts.json").write_text(json.dumps(verdicts))
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
    code = "import compileall, os, strands_robots; compileall.compile_dir(os.path.dirname(strands_robots.__file__), quiet=1)"
    subprocess.run([args.python, "-c", code], check=True, env=env)
    load_start = os.getloadavg()[0]
    times: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        root = work / "scratch"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root)
        shutil.rmtree(work / "report", ignore_errors=True)
        for name, argv in session(root, work, args.episodes):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            out = subprocess.run([args.python, "-c", CLI, *argv], capture_output=True, text=True, env=env)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.setdefault(name, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if out.returncode != 0:
                raise SystemExit(f"{name} failed ({out.returncode}):\n{out.stderr[-2000:]}")
            times.setdefault(name, []).append(elapsed)
    load_end = os.getloadavg()[0]
    print(
        f"load average at start: {load_start:.1f}, at end: {load_end:.1f}; {args.episodes:,} episodes; "
        f"medians of {args.repeat}; wall time, and the CPU time (user + system) of the process"
    )
    for name, values in times.items():
        median = statistics.median(values)
        cpu = statistics.median(cpus[name])
        print(f"{name:<24}{median:8.3f} s wall {cpu:8.3f} s CPU{'' if median <= 0.5 else '   wall > 0.5 s'}")
    shutil.rmtree(work / "scratch", ignore_errors=True)


if __name__ == "__main__":
    main()

"""The judge on a local Ray cluster against the thread executor, and where its throughput is bounded.

    .venv/bin/python benchmarks/judge_ray.py [--episodes 2000] [--cpus 2] [--latency-scale 0.02]
        [--sim-workers 1,2,4,8,16] [--latency-only-workers 2,8,24]
        [--parts offline,latency,latency-only,driver]

Three measurements on a synthetic LeRobot v3.0 dataset (state only, 150 frames per
episode, written to a temp directory with verdicts for every episode):

- ``offline``: the offline judge (``heuristic-v1``, the full agent loop per episode) on
  every episode, with ``executor="thread"`` (1 and ``--cpus`` workers) and
  ``executor="ray"`` on a local cluster of ``--cpus`` CPUs. Episodes per second of the
  judging (the Ray cluster's start-up is printed apart: a long run pays it once).
- ``latency``: a scripted strands ``Model`` that waits like a VLM: every model call
  sleeps a uniform 1-5 s times ``--latency-scale`` (seeded), then answers what the offline
  judge would (same tools, same labels). Five calls per episode (verdict, load, sample,
  write, final text). Run on Ray with each of ``--sim-workers`` actors; the
  projected rate at full latency is ``measured rate * latency-scale``.
- ``latency-only``: the same waits around a model that only calls ``write_label`` (two
  calls per episode, no tool CPU work): throughput grows with the actors until the
  driver's per-episode cost bounds it, which one machine can show.
- ``driver``: the ceiling of the design. A model that calls only ``write_label`` (no
  latency, nothing read) on many workers: the episodes per second are then bounded by
  what the driver does per episode (receive the batch, one group commit per batch,
  progress). Also the driver's write alone: ``annotate_episodes`` of 32-episode batches.

Prints one table per part; docs/distributed.md quotes a run and the projection.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests/synth.py lives beside the package
    sys.path.insert(0, str(REPO))

from strands_robots.episode_labels import flush, record_deterministic_verdicts  # noqa: E402
from strands_robots.episode_labels.judge import annotate_episodes  # noqa: E402
from strands_robots.judges import DatasetProfile, run_judge  # noqa: E402
from strands_robots.judges.heuristic import HeuristicJudgeModel, parse_request  # noqa: E402
from strands_robots.judges.scripted import exchanges, last_user_text, text_events, tool_call_events  # noqa: E402
from tests.synth import make_v3_dataset  # noqa: E402

CALLS_PER_EPISODE = 5


class VlmLatencyJudge(HeuristicJudgeModel):
    """The offline judge behind a VLM's latency: each call sleeps ``uniform(1, 5) * scale`` seconds.

    The sleep is ``asyncio.sleep`` inside ``stream`` (a model client waits on the
    network the same way); the answer is the offline judge's next step.
    """

    def __init__(self, profiles: Any = None, *, scale: float = 1.0, seed: int = 0) -> None:
        super().__init__(profiles)
        self.scale = scale
        self.rng = random.Random(seed)

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # noqa: ANN001
        await asyncio.sleep(self.rng.uniform(1.0, 5.0) * self.scale)
        for event in self.next_events(list(messages)):
            yield event


class WriteOnlyJudge(HeuristicJudgeModel):
    """Calls ``write_label`` at once (quality medium), then stops: no reading.

    ``scale`` > 0 makes each of its two model calls sleep ``uniform(1, 5) * scale``
    seconds: a VLM's wait without the tools' CPU work, so one machine can show where the
    driver bounds a cluster whose workers are elsewhere.
    """

    def __init__(self, profiles: Any = None, *, scale: float = 0.0, seed: int = 0) -> None:
        super().__init__(profiles)
        self.scale = scale
        self.rng = random.Random(seed)

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # noqa: ANN001
        if self.scale:
            await asyncio.sleep(self.rng.uniform(1.0, 5.0) * self.scale)
        for event in self.next_events(list(messages)):
            yield event

    def next_events(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        request = parse_request(last_user_text(messages))
        episode = request.episodes[0]
        if not exchanges(messages):
            call = {"root": request.root, "episode": episode, "quality": "medium", "judge_model": "write-only"}
            return list(tool_call_events("write_label", call))
        return list(text_events(f"episode {episode}: done"))


def make_dataset(directory: Path, episodes: int) -> Path:
    root = make_v3_dataset(directory / "ds", [150] * episodes, episodes_per_file=1000)
    verdicts = [{"episode": e, "success": e % 5 != 0, "failure": e % 5 == 0} for e in range(episodes)]
    record_deterministic_verdicts(root, verdicts, benchmark="bench")
    return root


def fresh_copy(root: Path, directory: Path, name: str) -> Path:
    target = directory / name
    shutil.copytree(root, target)
    return target


def rate(report: Any) -> float:
    return len(report.labelled) / report.seconds if report.seconds else 0.0


def timed(root: Path, **kwargs: Any) -> tuple[Any, float, float]:
    """``run_judge`` plus ``(seconds to the first label, steady episodes/s after it)``.

    The steady rate leaves out the start (actors starting, the profile): a long run
    pays it once.
    """
    stamps: list[float] = []
    start = time.perf_counter()
    report = run_judge(root, on_result=lambda result: stamps.append(time.perf_counter()), **kwargs)
    flush(root)  # fold the journal while the temp directory still exists
    if len(stamps) < 2:
        return report, report.seconds, rate(report)
    return report, stamps[0] - start, (len(stamps) - 1) / (stamps[-1] - stamps[0])


def part_offline(base: Path, directory: Path, cpus: int, episodes: int) -> None:
    print(f"\n== offline judge, {episodes} episodes ==")
    print(f"{'executor':<22}{'workers':>8}{'overall ep/s':>13}{'steady ep/s':>12}{'start s':>8}")
    runs = [("thread", w) for w in sorted({1, cpus})] + [("ray", cpus)]
    for executor, workers in runs:
        root = fresh_copy(base, directory, f"{executor}{workers}")
        report, first, steady = timed(root, executor=executor, workers=workers)
        assert len(report.labelled) == episodes, report.failed[:3]
        name = "ray (local cluster)" if executor == "ray" else executor
        print(f"{name:<22}{workers:>8}{rate(report):>13.1f}{steady:>12.1f}{first:>8.1f}")


def part_latency(base: Path, directory: Path, scale: float, worker_counts: list[int]) -> None:
    profile = DatasetProfile.from_dataset(base)
    mean_episode = 3.0 * CALLS_PER_EPISODE
    print(f"\n== VLM latency simulation: 1-5 s per call x {scale} ({mean_episode * scale:.2f} s per episode) ==")
    print(f"{'ray workers':>11}{'episodes':>9}{'steady ep/s':>12}{'ideal':>8}{'start s':>8}{'at 1-5 s: ep/h':>16}")
    for workers in worker_counts:
        n = max(24, 8 * workers)
        root = fresh_copy(base, directory, f"lat{workers}")
        model = VlmLatencyJudge({root: profile}, scale=scale, seed=workers)
        report, first, steady = timed(
            root, model=model, executor="ray", workers=workers, episodes=range(n), batch_size=1
        )
        assert len(report.labelled) == n, report.failed[:3]
        ideal = workers / (mean_episode * scale)
        print(f"{workers:>11}{n:>9}{steady:>12.2f}{ideal:>8.2f}{first:>8.1f}{steady * scale * 3600:>16.0f}")


def part_latency_only(base: Path, directory: Path, scale: float, worker_counts: list[int]) -> None:
    mean_episode = 3.0 * 2
    print(f"\n== latency only (write_label, 2 calls of 1-5 s x {scale}: {mean_episode * scale:.2f} s per episode) ==")
    print(f"{'ray workers':>11}{'episodes':>9}{'steady ep/s':>12}{'ideal':>8}{'start s':>8}")
    for workers in worker_counts:
        n = max(48, 24 * workers)
        root = fresh_copy(base, directory, f"lato{workers}")
        model = WriteOnlyJudge(scale=scale, seed=workers)
        report, first, steady = timed(
            root, model=model, executor="ray", workers=workers, episodes=range(n), batch_size=4
        )
        assert len(report.labelled) == n, report.failed[:3]
        ideal = workers / (mean_episode * scale)
        print(f"{workers:>11}{n:>9}{steady:>12.2f}{ideal:>8.2f}{first:>8.1f}")


def part_driver(base: Path, directory: Path, cpus: int, episodes: int) -> None:
    print(f"\n== the driver's bound, {episodes} episodes ==")
    root = fresh_copy(base, directory, "drv-write")
    batches = [list(range(i, min(i + 32, episodes))) for i in range(0, episodes, 32)]
    start = time.perf_counter()
    for batch in batches:
        annotate_episodes(root, [{"episode": e, "quality": "medium", "model": "bench"} for e in batch])
    seconds = time.perf_counter() - start
    print(f"annotate_episodes, 32 per commit: {episodes / seconds:,.0f} episodes/s (driver write alone)")
    print(f"{'ray workers':>11}{'batch':>7}{'steady ep/s':>12}{'start s':>8}")
    for workers, batch_size in ((cpus, 32), (2 * cpus, 32), (2 * cpus, 64)):
        root = fresh_copy(base, directory, f"drv{workers}-{batch_size}")
        report, first, steady = timed(
            root, model=WriteOnlyJudge(), executor="ray", workers=workers, batch_size=batch_size
        )
        assert len(report.labelled) == episodes, report.failed[:3]
        print(f"{workers:>11}{batch_size:>7}{steady:>12.1f}{first:>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--latency-scale", type=float, default=0.02)
    parser.add_argument("--sim-workers", default="1,2,4,8,16")
    parser.add_argument("--latency-only-workers", default="2,8,24")
    parser.add_argument("--parts", default="offline,latency,latency-only,driver")
    args = parser.parse_args()
    parts = set(args.parts.split(","))

    import ray

    with tempfile.TemporaryDirectory(prefix="judge-ray-") as tmp:
        directory = Path(tmp)
        base = make_dataset(directory, args.episodes)
        start = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, object_store_memory=128 * 1024**2, log_to_driver=False)
        print(f"local Ray cluster of {args.cpus} CPUs started in {time.perf_counter() - start:.1f} s")
        try:
            if "offline" in parts:
                part_offline(base, directory, args.cpus, args.episodes)
            if "latency" in parts:
                part_latency(base, directory, args.latency_scale, [int(w) for w in args.sim_workers.split(",")])
            if "latency-only" in parts:
                workers = [int(w) for w in args.latency_only_workers.split(",")]
                part_latency_only(base, directory, args.latency_scale, workers)
            if "driver" in parts:
                part_driver(base, directory, args.cpus, args.episodes)
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()

"""Model judges in parallel: episodes per second against a loopback model server (docs/judge.md).

Starts the fake model server (``tests/fake_vlm.py``) in its own process on 127.0.0.1,
answering every request after a fixed delay (default 200 ms), writes a synthetic dataset (one camera, H.264) with
verdicts, and runs ``run_judge(model="openai:fake-vlm", base_url=..., workers=N)`` at each
``--workers`` value (the real strands ``OpenAIModel`` over real HTTP; images on). Each
episode is one conversation of 4 requests (verdict, frames with images, label, final
text), so one worker cannot beat ``1 / (4 x delay)`` episodes per second.

Prints per worker count: episodes, seconds, episodes/s, the speed-up over one worker and
its share of the ideal N x, the CPU time per episode of this process and of the server's, the
load average before and after, and the server's request
count (``GET /_log``; it must equal the run's cost summary).

``--cpu-split`` also prints where this process's CPU time per episode goes (thread CPU
time, ``time.thread_time``, around each part): inside the judge's tools, inside the model
requests (the strands provider class, the OpenAI SDK and httpx, from the request to the
last event; of it the SDK's request transform and the two client constructions), strands'
telemetry serialising the conversation, strands' deep copies of it, and the rest (the
agent loop, threads, event loops).

    .venv/bin/python benchmarks/judge_wire.py                 # --workers 1 4 16 --delay 0.2
    .venv/bin/python benchmarks/judge_wire.py --episodes 16 --workers 1 4
    .venv/bin/python benchmarks/judge_wire.py --workers 1 --episodes 24 --cpu-split
    .venv/bin/python benchmarks/judge_wire.py --workers 16 --processes 2   # 2 processes of 8 conversations

``--processes P`` splits each run of at least P workers over P processes (started and
warmed up before the clock starts), each running ``run_judge`` with ``workers / P``
threads on its share of the episodes; the CPU column is then the processes' sum. Runs of
fewer workers (the 1-worker baseline) stay in this process.
"""

from __future__ import annotations

import argparse
import collections
import copy
import cProfile
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.request
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from strands_robots.episode_labels import record_deterministic_verdicts  # noqa: E402
from strands_robots.judges import run_judge  # noqa: E402
from tests.synth import make_v3_dataset  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def fake_server(delay: float):
    """``python -m tests.fake_vlm`` in a child process; yields ``(base URL, its process id)``."""
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_vlm", "--port", str(port), "--delay", str(delay), "--quiet"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/_log", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        yield url, child.pid
    finally:
        child.terminate()
        child.wait(timeout=10)


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far; None where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_totals(url: str) -> dict[str, int]:
    return json.loads(urllib.request.urlopen(f"{url}/_log", timeout=30).read())


class CpuSplit:
    """Thread CPU seconds spent in named parts of the judge, summed over threads.

    Wraps the functions in place (this benchmark's process only). A part that calls
    another part counts the inner one too (the model requests include the transform);
    nested calls of one part count once.
    """

    def __init__(self) -> None:
        self.seconds: collections.Counter[str] = collections.Counter()
        self._inside = threading.local()

    def timed(self, name: str, function):
        split = self

        def wrapper(*args, **kwargs):
            depth = getattr(split._inside, name, 0)
            setattr(split._inside, name, depth + 1)
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                setattr(split._inside, name, depth)
                if depth == 0:
                    split.seconds[name] += time.thread_time() - start

        return wrapper

    def timed_async(self, name: str, function):
        split = self

        async def wrapper(*args, **kwargs):
            start = time.thread_time()
            try:
                return await function(*args, **kwargs)
            finally:
                split.seconds[name] += time.thread_time() - start

        return wrapper

    def timed_stream(self, name: str, function):
        """An async generator's own CPU: counted while it runs, not while its consumer handles an event."""
        split = self

        async def wrapper(*args, **kwargs):
            start = time.thread_time()
            try:
                async for event in function(*args, **kwargs):
                    split.seconds[name] += time.thread_time() - start
                    yield event
                    start = time.thread_time()
            finally:
                split.seconds[name] += time.thread_time() - start

        return wrapper

    def install(self) -> None:
        import httpx
        import openai
        import openai.resources.chat.completions.completions as completions
        from strands.event_loop import event_loop, streaming
        from strands.telemetry import tracer
        from strands.types import json_dict

        from strands_robots.judges import wire
        from strands_robots.tools import episode_judge

        run = episode_judge.JudgeToolConfig.run
        split = self

        def run_timed(config, tool, episode, body):
            return split.timed(f"tool {tool}", run)(config, tool, episode, body)

        episode_judge.JudgeToolConfig.run = run_timed
        wire.WireModel.stream = self.timed_stream("model requests", wire.WireModel.stream)
        completions.async_maybe_transform = self.timed_async(
            "  OpenAI SDK request transform", completions.async_maybe_transform
        )
        httpx.AsyncClient.__init__ = self.timed("  httpx client construction", httpx.AsyncClient.__init__)
        openai.AsyncOpenAI.__init__ = self.timed("  AsyncOpenAI construction", openai.AsyncOpenAI.__init__)
        tracer.serialize = self.timed("strands telemetry serialising messages", tracer.serialize)
        # strands' modules get a copy module of their own whose deepcopy is timed (copy's own recursion is not)
        timed_copy = types.SimpleNamespace(**vars(copy))
        timed_copy.deepcopy = self.timed("strands deep copies (copy.deepcopy)", copy.deepcopy)
        for module in (event_loop, streaming, json_dict):
            module.copy = timed_copy

    def print(self, episodes: int, process_cpu: float) -> None:
        print(f"CPU per episode of this process: {process_cpu / episodes * 1000:.1f} ms, of which (thread CPU):")
        tools = sum(v for k, v in self.seconds.items() if k.startswith("tool "))
        named = tools + sum(v for k, v in self.seconds.items() if not k.startswith((" ", "tool ")))
        for name, seconds in sorted(self.seconds.items(), key=lambda kv: (kv[0].startswith(" "), -kv[1])):
            print(f"  {name:42s} {seconds / episodes * 1000:6.1f} ms")
        print(f"  {'the judge tools together':42s} {tools / episodes * 1000:6.1f} ms")
        print(
            f"  {'the rest (agent loop, threads, event loops)':42s} {(process_cpu - named) / episodes * 1000:6.1f} ms"
        )


def judge_once(root: str, url: str, episodes: list[int], workers: int, frames: int) -> dict:
    """One measured ``run_judge`` in this process: its CPU seconds, failures, cost and tool seconds."""
    cpu = time.process_time()
    report = run_judge(
        root,
        model="openai:fake-vlm",
        base_url=f"{url}/v1",
        episodes=episodes,
        workers=workers,
        frames=frames,
        relabel=True,
    )
    return {
        "cpu": time.process_time() - cpu,
        "failed": len(report.failed),
        "cost": report.cost(),
        "tool_seconds": dict(report.tool_seconds),
    }


def merged(parts: list[dict]) -> dict:
    """The :func:`judge_once` outcomes of several processes as one."""
    tools: collections.Counter[str] = collections.Counter()
    for part in parts:
        tools.update(part["tool_seconds"])
    cost = parts[0]["cost"]
    for part in parts[1:]:
        cost = cost + part["cost"]
    return {
        "cpu": sum(p["cpu"] for p in parts),
        "failed": sum(p["failed"] for p in parts),
        "cost": cost,
        "tool_seconds": dict(tools),
    }


def warm_up(root: str, url: str) -> None:
    """A child process's imports, dataset metadata and first client (not measured)."""
    os.environ.pop("OPENAI_API_KEY", None)
    run_judge(root, model="openai:fake-vlm", base_url=f"{url}/v1", episodes=[0], relabel=True)


def ready(_: int) -> int:
    """This child's process id, once its initializer (the warm-up) has run."""
    time.sleep(0.2)
    return os.getpid()


def episodes_for(workers: int, rounds: int, minimum: int) -> int:
    """Enough episodes for ``rounds`` full rounds of ``workers`` conversations."""
    return max(minimum, workers * rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--delay", type=float, default=0.2, help="seconds the server waits before each answer")
    parser.add_argument("--rounds", type=int, default=4, help="episodes per worker")
    parser.add_argument("--episodes", type=int, default=8, help="at least this many episodes per run")
    parser.add_argument("--frames", type=int, default=4, help="frames (images) sampled per episode")
    parser.add_argument("--cprofile", metavar="FILE", help="profile the run with the most workers into FILE")
    parser.add_argument("--cpu-split", action="store_true", help="print where the CPU time per episode goes")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="split each run's episodes over this many processes, each with workers / processes threads",
    )
    args = parser.parse_args()
    if args.processes > 1 and (args.cpu_split or args.cprofile):
        parser.error("--cpu-split and --cprofile measure this process only: not with --processes")
    if any(w >= args.processes and w % args.processes for w in args.workers):
        parser.error("each --workers value of at least --processes must be a multiple of it")
    os.environ.pop("OPENAI_API_KEY", None)

    total = max(episodes_for(w, args.rounds, args.episodes) for w in args.workers)
    with tempfile.TemporaryDirectory() as tmp:
        root = make_v3_dataset(Path(tmp) / "cams", [60] * total, video=True, video_size=(128, 96))
        record_deterministic_verdicts(root, [{"episode": e, "success": e % 5 != 0} for e in range(total)])
        rows = []
        with fake_server(args.delay) as (url, server_pid):
            # warm-up (imports, the dataset's metadata, the first client): not measured
            run_judge(root, model="openai:fake-vlm", base_url=f"{url}/v1", episodes=[0], relabel=True)
            split = CpuSplit() if args.cpu_split else None
            if split is not None:
                split.install()
            pool = None
            if args.processes > 1:
                pool = multiprocessing.get_context("forkserver").Pool(
                    args.processes, initializer=warm_up, initargs=(str(root), url)
                )
                started: set[int] = set()
                while len(started) < args.processes:  # every child has warmed up before the clock starts
                    started.update(pool.map(ready, range(args.processes), chunksize=1))
            try:
                for workers in args.workers:
                    count = episodes_for(workers, args.rounds, args.episodes)
                    before = server_totals(url)["requests"]
                    server_cpu = process_cpu(server_pid)
                    load = os.getloadavg()[0]
                    profile = cProfile.Profile() if args.cprofile and workers == max(args.workers) else None
                    if profile is not None:
                        profile.enable()
                    start = time.perf_counter()
                    if pool is None or workers < args.processes:
                        outcome = judge_once(str(root), url, list(range(count)), workers, args.frames)
                    else:
                        shares = [list(range(i, count, args.processes)) for i in range(args.processes)]
                        threads = max(1, workers // args.processes)
                        parts = pool.starmap(
                            judge_once, [(str(root), url, share, threads, args.frames) for share in shares]
                        )
                        outcome = merged(parts)
                    seconds, cpu = time.perf_counter() - start, outcome["cpu"]
                    if profile is not None:
                        profile.disable()
                        profile.dump_stats(args.cprofile)
                    requests = server_totals(url)["requests"] - before
                    server_after = process_cpu(server_pid)
                    server_cpu = (
                        None if server_cpu is None or server_after is None else (server_after - server_cpu) / count
                    )
                    cost = outcome["cost"]
                    rows.append(
                        (workers, count, seconds, count / seconds, cpu / count, server_cpu, load, os.getloadavg()[0])
                    )
                    print(
                        f"workers {workers:>2}: {count} episodes in {seconds:.2f} s = {count / seconds:.2f} episodes/s, "
                        f"{outcome['failed']} failed; server saw {requests} requests, cost says {cost.requests} "
                        f"({cost.images} images, {cost.request_bytes:,} request bytes); inside the tools per episode: "
                        + ", ".join(
                            f"{name} {t / count * 1000:.0f} ms" for name, t in sorted(outcome["tool_seconds"].items())
                        ),
                        flush=True,
                    )
                    if split is not None:
                        split.print(count, cpu)
                        split.seconds.clear()
            finally:
                if pool is not None:
                    pool.terminate()
                    pool.join()
    base = rows[0][3] / rows[0][0]  # the first row's rate per worker
    print()
    print(
        f"server delay {args.delay * 1000:.0f} ms, {args.frames} frames per episode, ideal 1-worker rate "
        f"{1 / (4 * args.delay):.2f} episodes/s"
        + (f"; runs of {args.processes}+ workers in {args.processes} processes" if args.processes > 1 else "")
    )
    print(
        "| workers | episodes | seconds | episodes/s | speed-up | share of N x | CPU s per episode (the judge) "
        "| CPU s per episode (the server) "
        "| load before / after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for workers, count, seconds, rate, cpu, server_cpu, load0, load1 in rows:
        speedup = rate / base
        print(
            f"| {workers} | {count} | {seconds:.2f} | {rate:.2f} | {speedup:.2f}x | {speedup / workers:.2f} | "
            f"{cpu:.3f} | {'n/a' if server_cpu is None else f'{server_cpu:.3f}'} | {load0:.1f} / {load1:.1f} |"
        )


if __name__ == "__main__":
    main()

"""Model judges in parallel: episodes per second against a loopback model server (docs/judge.md).

Starts the fake model server (``tests/fake_vlm.py``) in its own process on 127.0.0.1,
answering every request after a fixed delay (default 200 ms), writes a synthetic dataset (one camera, H.264) with
verdicts, and runs ``run_judge(model="openai:fake-vlm", base_url=..., workers=N)`` at each
``--workers`` value (the real strands ``OpenAIModel`` over real HTTP; images on). Each
episode is one conversation of 4 requests (verdict, frames with images, label, final
text), so one worker cannot beat ``1 / (4 x delay)`` episodes per second.

Prints per worker count: episodes, seconds, episodes/s, the speed-up over one worker and
its share of the ideal N x, the load average before and after, and the server's request
count (``GET /_log``; it must equal the run's cost summary).

    .venv/bin/python benchmarks/judge_wire.py                 # --workers 1 4 16 --delay 0.2
    .venv/bin/python benchmarks/judge_wire.py --episodes 16 --workers 1 4
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
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
    """``python -m tests.fake_vlm`` in a child process; yields its base URL."""
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
        yield url
    finally:
        child.terminate()
        child.wait(timeout=10)


def server_totals(url: str) -> dict[str, int]:
    return json.loads(urllib.request.urlopen(f"{url}/_log", timeout=30).read())


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
    args = parser.parse_args()
    os.environ.pop("OPENAI_API_KEY", None)

    total = max(episodes_for(w, args.rounds, args.episodes) for w in args.workers)
    with tempfile.TemporaryDirectory() as tmp:
        root = make_v3_dataset(Path(tmp) / "cams", [60] * total, video=True, video_size=(128, 96))
        record_deterministic_verdicts(root, [{"episode": e, "success": e % 5 != 0} for e in range(total)])
        rows = []
        with fake_server(args.delay) as url:
            # warm-up (imports, the dataset's metadata, the first client): not measured
            run_judge(root, model="openai:fake-vlm", base_url=f"{url}/v1", episodes=[0], relabel=True)
            for workers in args.workers:
                count = episodes_for(workers, args.rounds, args.episodes)
                before = server_totals(url)["requests"]
                load = os.getloadavg()[0]
                profile = cProfile.Profile() if args.cprofile and workers == max(args.workers) else None
                if profile is not None:
                    profile.enable()
                start, cpu = time.perf_counter(), time.process_time()
                report = run_judge(
                    root,
                    model="openai:fake-vlm",
                    base_url=f"{url}/v1",
                    episodes=range(count),
                    workers=workers,
                    frames=args.frames,
                    relabel=True,
                )
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
                if profile is not None:
                    profile.disable()
                    profile.dump_stats(args.cprofile)
                requests = server_totals(url)["requests"] - before
                cost = report.cost()
                rows.append((workers, count, seconds, count / seconds, cpu / count, load, os.getloadavg()[0]))
                print(
                    f"workers {workers:>2}: {count} episodes in {seconds:.2f} s = {count / seconds:.2f} episodes/s, "
                    f"{len(report.failed)} failed; server saw {requests} requests, cost says {cost.requests} "
                    f"({cost.images} images, {cost.request_bytes:,} request bytes); inside the tools per episode: "
                    + ", ".join(f"{name} {t / count * 1000:.0f} ms" for name, t in sorted(report.tool_seconds.items())),
                    flush=True,
                )
    base = rows[0][3] / rows[0][0]  # the first row's rate per worker
    print()
    print(
        f"server delay {args.delay * 1000:.0f} ms, {args.frames} frames per episode, ideal 1-worker rate "
        f"{1 / (4 * args.delay):.2f} episodes/s"
    )
    print(
        "| workers | episodes | seconds | episodes/s | speed-up | share of N x | CPU s per episode (this process) "
        "| load before / after |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for workers, count, seconds, rate, cpu, load0, load1 in rows:
        speedup = rate / base
        print(
            f"| {workers} | {count} | {seconds:.2f} | {rate:.2f} | {speedup:.2f}x | {speedup / workers:.2f} | "
            f"{cpu:.3f} | {load0:.1f} / {load1:.1f} |"
        )


if __name__ == "__main__":
    main()

"""``annotate_episode`` in a loop against the fsync floor, in one process (docs/performance.md,
"Side by side", the annotate_loop rows).

    .venv/bin/python benchmarks/annotate_loop.py [--calls 2000] [--block 10] [--episodes 1000] [--profile]

On a 1,000-episode sidecar (``--episodes``) as strands-robots 0.5.3 writes it (~515 KB, so above the 256 KiB
write-through bound: every call appends one fsynced journal line), after one untimed first
call (which parses the file and starts the journal): blocks of ``--block`` calls alternate
(ABBA) with blocks of ``--block`` fsynced appends to another file in the same directory, so
disk and CPU drift hit both alike; prints the medians of the per-call block means, their
ratio, and the CPU of a call with ``fdatasync`` switched off. ``--profile`` adds a cProfile
of 1,000 more calls (with the fsync) sorted by own time. Writes nothing outside a temp
directory.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_upstream import foreign_sidecar  # noqa: E402

import strands_robots.episode_labels as el  # noqa: E402
from strands_robots.storage.side_files import journal_path  # noqa: E402

FLOOR_LINE = b'{"op":"put","key":"%d","record":{"judge":{"quality":"high"}}}\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--block", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--episodes", type=int, default=1000, help="episodes in the sidecar (the calls cycle over them)"
    )
    parser.add_argument(
        "--floor-bytes", type=int, default=0, help="floor line length (0: the short line compare_upstream.py writes)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        foreign_sidecar(root / "episode_labels.json", args.episodes)
        el.annotate_episode(root, args.episodes - 1, quality="high", note="first", model="bench")
        mode = "journal" if journal_path(root / "episode_labels.json").exists() else "write-through"
        fd = os.open(root / "fsync.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        line = FLOOR_LINE if not args.floor_bytes else b"%d" + b"x" * (args.floor_bytes - 8) + b"\n"
        calls: list[float] = []
        floors: list[float] = []
        done = 0
        while done < args.calls:
            k = min(args.block, args.calls - done)
            for part in (0, 1) if len(calls) % 2 == 0 else (1, 0):
                start = time.perf_counter()
                if part == 0:
                    for i in range(done, done + k):
                        el.annotate_episode(root, i % args.episodes, quality="high", note="loop", model="bench")
                    calls.append((time.perf_counter() - start) / k)
                else:
                    for i in range(done, done + k):
                        os.write(fd, line % (i % 100_000))
                        os.fdatasync(fd)
                    floors.append((time.perf_counter() - start) / k)
            done += k
        os.close(fd)
        call, floor = statistics.median(calls), statistics.median(floors)
        real_sync = os.fdatasync
        os.fdatasync = lambda _fd: None  # the CPU alone (nothing is durable in this phase)
        try:
            cpu = []
            for _ in range(10):
                start = time.perf_counter()
                for i in range(100):
                    el.annotate_episode(root, i, quality="high", note="cpu", model="bench")
                cpu.append((time.perf_counter() - start) / 100)
        finally:
            os.fdatasync = real_sync
        journal_line = len(journal_path(root / "episode_labels.json").read_bytes().splitlines()[-1]) + 1
        floor_line = len(line % 0)
        print(f"load average {os.getloadavg()[0]:.1f}; {args.calls} calls in blocks of {args.block}; {mode} mode")
        print(f"journal line {journal_line} bytes, floor line {floor_line} bytes")
        print(f"annotate_episode {call * 1e3:.3f} ms/call, fsync floor {floor * 1e3:.3f} ms: {call / floor:.2f}x")
        print(f"CPU per call without the fsync: {min(cpu) * 1e6:.0f} us (min of 10 x 100)")
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for i in range(1000):
                el.annotate_episode(root, i, quality="high", note="profiled", model="bench")
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        el.flush(root)


if __name__ == "__main__":
    main()

"""Benchmark 4 (docs/performance.md, target 4): reading one episode of a dataset with 100 data files opens exactly one.

    .venv/bin/python benchmarks/read_one_of_many.py [--files 100] [--episodes-per-file 10]
        [--length 50] [--repeats 20]

Builds (once; reused while it matches) a LeRobot v3.0 dataset under ``benchmarks/_work/``
with ``tests/synth.make_v3_dataset(..., episodes_per_file=...)``: 100 data parquet files of
10 episodes x 50 frames. Then, for the first, a middle and the last episode, it runs
``open_dataset(root).read_frames(episode)`` and counts the files opened under ``data/``.

Counting: pyarrow opens parquet files in C++, so Python audit hooks (``sys.addaudithook``
"open" events) and patches of ``open`` never see them. The kernel does: the script
watches every directory under ``data/`` with Linux inotify (``IN_OPEN``, through ctypes),
which reports an open of a file there by any code in the process. inotify merges identical
consecutive events, so it gives the distinct files opened, not the number of open calls;
when ``strace`` is on PATH the same read is repeated in a child process under
``strace -e trace=openat`` for the exact count of open calls. The audit-hook count is
printed beside them to show why it cannot be the measure.

Baseline, in the same run: ``pyarrow.dataset`` over the whole ``data/`` directory filtered
on ``episode_index`` (a reader without the episodes metadata's file index). Prints
figures; exits 1 when an episode read opens anything but exactly its one data file.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.dataset as pads

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests/synth.py lives beside the package
    sys.path.insert(0, str(REPO))

WORK = REPO / "benchmarks" / "_work" / "read_one_of_many"

IN_OPEN = 0x00000020
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


class OpenWatch:
    """Files opened inside some directories, as the kernel reports them (Linux inotify).

    Attributes:
        opens: ``(directory, name)`` of every open of a file, in order (repeats kept).
        dir_opens: Opens of the watched directories themselves (listings).
    """

    def __init__(self, directories: list[Path]) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(IN_NONBLOCK)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._dirs: dict[int, Path] = {}
        for directory in directories:
            wd = self._libc.inotify_add_watch(self._fd, str(directory).encode(), IN_OPEN)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch failed for {directory}")
            self._dirs[wd] = directory
        self.opens: list[tuple[Path, str]] = []
        self.dir_opens = 0

    def drain(self) -> None:
        """Move the queued events into ``opens`` / ``dir_opens``."""
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _, size = EVENT.unpack_from(data, offset)
                name = data[offset + EVENT.size : offset + EVENT.size + size].rstrip(b"\0").decode()
                offset += EVENT.size + size
                if mask & IN_OPEN and (mask & IN_ISDIR or not name):
                    self.dir_opens += 1
                elif mask & IN_OPEN:
                    self.opens.append((self._dirs[wd], name))

    def reset(self) -> None:
        self.drain()
        self.opens.clear()
        self.dir_opens = 0

    def files(self) -> set[Path]:
        """Distinct files opened since the last reset."""
        self.drain()
        return {directory / name for directory, name in self.opens}

    def close(self) -> None:
        os.close(self._fd)


class AuditOpens:
    """Python-level ``open`` audit events under one directory (what pyarrow bypasses)."""

    def __init__(self, under: Path) -> None:
        self.under = str(under)
        self.count = 0
        self.active = False
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.active and event == "open" and args and str(args[0]).startswith(self.under):
            self.count += 1


STRACE_CHILD = """
import sys
from strands_robots.dataset import open_dataset
ds = open_dataset(sys.argv[1])
open(sys.argv[3], "w").close()  # marker: opens before it belong to open_dataset
ds.read_frames(int(sys.argv[2]))
"""


def strace_opens(root: Path, episode: int) -> list[str] | None:
    """Paths under ``data/`` that ``read_frames(episode)`` opens (one per openat call), or None."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        log, marker = Path(tmp) / "strace.log", Path(tmp) / "marker"
        command = [strace, "-f", "-qq", "-e", "trace=openat", "-o", str(log), sys.executable, "-c", STRACE_CHILD]
        done = subprocess.run([*command, str(root), str(episode), str(marker)], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"strace run failed ({done.returncode}): {done.stderr.strip()[-300:]}")
            return None
        lines = log.read_text().splitlines()
    after = next((i for i, line in enumerate(lines) if str(marker) in line), len(lines))
    data = str(root / "data") + "/"
    return [line.split('"')[1] for line in lines[after:] if data in line and "= -1" not in line]


def ensure_dataset(files: int, per_file: int, length: int) -> Path:
    from tests.synth import make_v3_dataset

    root = WORK / "dataset"
    marker = WORK / "bench_params.json"
    params = {"files": files, "episodes_per_file": per_file, "length": length}
    if marker.is_file() and json.loads(marker.read_text()) == params and (root / "meta" / "info.json").is_file():
        print(f"reusing {root}")
        return root
    shutil.rmtree(WORK, ignore_errors=True)
    start = time.perf_counter()
    make_v3_dataset(root, [length] * (files * per_file), episodes_per_file=per_file)
    marker.write_text(json.dumps(params))
    print(f"generated {root} in {time.perf_counter() - start:.1f} s")
    return root


def measured(watch: OpenWatch, audit: AuditOpens, fn: Callable[[], Any]) -> tuple[Any, float, set[Path], int, int, int]:
    """Run ``fn`` once: result, seconds, distinct data files, open events, dir listings, audit opens."""
    watch.reset()
    audit.count, audit.active = 0, True
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    audit.active = False
    files = watch.files()
    return result, seconds, files, len(watch.opens), watch.dir_opens, audit.count


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--episodes-per-file", type=int, default=10)
    parser.add_argument("--length", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    root = ensure_dataset(args.files, args.episodes_per_file, args.length)
    data = root / "data"
    directories = [data, *sorted(p for p in data.rglob("*") if p.is_dir())]
    parquet = sorted(data.rglob("*.parquet"))
    print(f"dataset: {len(parquet)} data files under data/, {args.files * args.episodes_per_file} episodes")

    from strands_robots.dataset import open_dataset

    watch = OpenWatch(directories)
    audit = AuditOpens(data)
    ds, seconds, files, _, _, _ = measured(watch, audit, lambda: open_dataset(root))
    print(
        f"open_dataset: {seconds * 1e3:.1f} ms, data files opened {len(files)} "
        f"(metadata only: meta/info.json, meta/episodes, meta/tasks)"
    )
    total = args.files * args.episodes_per_file
    ok = True
    rows = []
    for episode in (0, total // 2 + 5, total - 1):
        expected = ds.episodes[episode].data_file

        def read(e: int = episode) -> Any:
            return ds.read_frames(e)

        frames, seconds, files, _, listings, audits = measured(watch, audit, read)
        good = files == {expected} and listings == 0 and len(frames["frame_index"]) == args.length
        traced = strace_opens(root, episode)
        if traced is not None:
            good &= {Path(p) for p in traced} == {expected}
        ok &= good
        warm = median_seconds(read, args.repeats)
        calls = "n/a (no strace)" if traced is None else str(len(traced))
        rows.append((episode, len(files), calls, warm))
        print(
            f"read_frames({episode}): data files opened {len(files)} "
            f"({', '.join(str(f.relative_to(root)) for f in sorted(files))}), directory listings {listings}, "
            f"openat calls on data/ (strace) {calls}, Python audit 'open' events {audits}; "
            f"first call {seconds * 1e3:.1f} ms, median of {args.repeats} {warm * 1e3:.2f} ms  "
            f"{'OK' if good else 'NOT EXACTLY ONE FILE'}"
        )

    episode = rows[1][0]

    def baseline() -> Any:
        return pads.dataset(data, format="parquet").to_table(filter=pads.field("episode_index") == episode)

    table, seconds, files, _, listings, _ = measured(watch, audit, baseline)
    warm = median_seconds(baseline, max(3, args.repeats // 4))
    print(
        f"baseline pyarrow.dataset(data/) filtered on episode_index == {episode}: {table.num_rows} rows, "
        f"data files opened {len(files)}, directory listings {listings}; "
        f"first call {seconds * 1e3:.1f} ms, median {warm * 1e3:.2f} ms"
    )
    watch.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| read | distinct data files opened | openat calls (strace) | median ms |")
    print("|---|---:|---:|---:|")
    for episode, n_files, calls, warm_s in rows:
        print(f"| read_frames({episode}) | {n_files} | {calls} | {warm_s * 1e3:.2f} |")
    print(f"| baseline pyarrow.dataset(data/) | {len(files)} | - | {warm * 1e3:.2f} |")
    print("\nRESULT:", "every episode read opened exactly one data file" if ok else "FAILED: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The sidecar lock: one flock per process on a lock file kept open, exclusive between
threads, processes and forked children, re-opened when the lock file is replaced."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time

import pytest

from strands_robots.errors import StorageError
from strands_robots.storage import lock as lock_module
from strands_robots.storage.lock import lock_path, sidecar_lock

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from strands_robots.storage.lock import sidecar_lock\n"
    "with sidecar_lock(Path(sys.argv[1])):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(float(sys.argv[2]))\n"
)


def _holder(sidecar, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(sidecar), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_another_process_holding_the_lock_times_out_with_a_remedy(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    proc = _holder(sidecar, 3)
    try:
        start = time.monotonic()
        with pytest.raises(StorageError, match="STRANDS_LABELS_LOCK_TIMEOUT"), sidecar_lock(sidecar, timeout=0.3):
            pass
        assert 0.25 < time.monotonic() - start < 2.5
    finally:
        proc.wait()
    with sidecar_lock(sidecar, timeout=1):  # free again once the holder exits
        pass


def test_a_replaced_lock_file_is_reopened(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    with sidecar_lock(sidecar):
        pass  # this process now keeps the old lock file open
    os.unlink(lock_path(sidecar))
    proc = _holder(sidecar, 3)  # locks a new file at the same path
    try:
        with pytest.raises(StorageError, match="held the lock"), sidecar_lock(sidecar, timeout=0.3):
            pass
    finally:
        proc.wait()


def _child_tries(sidecar, queue) -> None:
    try:
        with sidecar_lock(sidecar, timeout=0.3):
            queue.put("acquired")
    except StorageError:
        queue.put("timed out")


def test_a_forked_child_does_not_share_the_parents_lock(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    with sidecar_lock(sidecar):
        child = ctx.Process(target=_child_tries, args=(sidecar, queue))
        child.start()
        child.join(10)
    assert queue.get(timeout=5) == "timed out"


def test_threads_exclude_each_other_and_reentry_counts(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    inside, overlaps = [], []

    def work() -> None:
        for _ in range(200):
            with sidecar_lock(sidecar), sidecar_lock(sidecar):  # nested in one thread
                inside.append(1)
                if len(inside) > 1:
                    overlaps.append(1)
                inside.pop()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []
    proc = _holder(sidecar, 0)  # released completely: another process takes it at once
    proc.wait()


def test_idle_lock_files_are_closed_beyond_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(lock_module, "MAX_OPEN_LOCK_FILES", 8)
    for i in range(40):
        with sidecar_lock(tmp_path / f"s{i}.json"):
            pass
    fd_dir = f"/proc/{os.getpid()}/fd"
    targets = []
    for fd in os.listdir(fd_dir):
        with contextlib.suppress(FileNotFoundError):  # the descriptor of the listing itself
            targets.append(os.readlink(os.path.join(fd_dir, fd)))
    open_locks = [t for t in targets if t.startswith(str(tmp_path)) and t.endswith(".lock")]
    assert 1 <= len(open_locks) <= 8

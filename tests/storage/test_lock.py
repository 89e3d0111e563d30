"""The sidecar lock: one flock per process on a lock file kept open, exclusive between
threads, processes and forked children, re-opened when the lock file is replaced; where no
lock file can be made (a read-only directory) reads go ahead and writes say why not."""

from __future__ import annotations

import contextlib
import errno
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

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


def test_reads_work_in_a_read_only_directory_and_writes_say_why_not(tmp_path, monkeypatch):
    import errno

    from strands_robots import episode_labels as el

    el.record_deterministic_verdicts(tmp_path, [{"episode": 0, "success": True}])
    el.annotate_episode(tmp_path, 0, quality="high")

    class ReadOnlyLock:
        timeout = 1.0

        def acquire(self, timeout=None):
            raise OSError(errno.EROFS, "Read-only file system")

        def release(self):
            raise AssertionError("never acquired")

    monkeypatch.setattr(lock_module, "_file_lock", lambda sidecar: ReadOnlyLock())
    assert el.filter_episodes(tmp_path) == [0]
    assert el.read_labels(tmp_path)["episodes"]["0"]["judge"]["quality"] == "high"
    assert el.list_disputes(tmp_path) == []
    with pytest.raises(StorageError, match="--labels-dir"):
        el.annotate_episode(tmp_path, 0, quality="low")


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


def test_one_lock_per_lock_file_however_the_sidecar_is_spelled(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    lock = lock_module._file_lock(sidecar)
    assert lock_module._file_lock(Path(str(sidecar))) is lock
    assert lock_module._file_lock(str(sidecar)) is lock
    assert lock.path == str(tmp_path / ".episode_labels.json.lock")
    start = time.monotonic()
    with sidecar_lock(sidecar), sidecar_lock(str(sidecar), timeout=0.3):  # re-entry, not a second flock
        pass
    assert time.monotonic() - start < 0.3


def test_the_lock_knows_the_inode_it_holds_and_follows_a_replaced_file(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    with sidecar_lock(sidecar):
        pass
    lock = lock_module._file_lock(sidecar)
    first = os.stat(lock_path(sidecar)).st_ino
    assert lock._ino == first
    replacement = tmp_path / "new.lock"
    replacement.write_bytes(b"")
    os.replace(replacement, lock_path(sidecar))
    with sidecar_lock(sidecar):
        assert lock._ino == os.stat(lock_path(sidecar)).st_ino != first
        assert os.fstat(lock._fd).st_ino == lock._ino


def test_a_read_in_a_read_only_directory_goes_ahead_unlocked_and_a_write_is_refused(tmp_path, monkeypatch):
    class ReadOnly:
        timeout = 1.0

        def acquire(self, timeout=None):
            raise OSError(errno.EROFS, "Read-only file system")

        def release(self):
            raise AssertionError("never acquired")

    monkeypatch.setattr(lock_module, "_file_lock", lambda sidecar: ReadOnly())
    sidecar = tmp_path / "episode_labels.json"
    with sidecar_lock(sidecar, reading=True):
        entered = True
    assert entered
    with pytest.raises(StorageError, match="cannot create the lock file .*--labels-dir"), sidecar_lock(sidecar):
        pass

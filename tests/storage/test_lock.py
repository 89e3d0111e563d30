"""The sidecar lock (``flock`` on ``.strands-labels/<name>.lock``): exclusive between threads,
processes and forked children, re-opened when the lock file is replaced, never through a
symbolic link; an earlier version's lock file is taken too while it exists; where no lock
file can be made (a read-only directory) reads go ahead and writes say why not."""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time

import pytest

from strands_robots.errors import SidecarError, StorageError
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


def lock_files_are_read_only(monkeypatch) -> None:
    """Creating a lock file fails as on a read-only mount (``EROFS``); every other file opens."""
    real_open = os.open

    def open_(path, flags, *args, **kwargs):
        if os.fspath(path).endswith(".lock"):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def test_reads_work_in_a_read_only_directory_and_writes_say_why_not(tmp_path, monkeypatch):
    from strands_robots import episode_labels as el

    el.record_deterministic_verdicts(tmp_path, [{"episode": 0, "success": True}])
    el.annotate_episode(tmp_path, 0, quality="high")

    lock_files_are_read_only(monkeypatch)
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


def test_the_lock_file_is_in_the_state_folder_and_reentry_is_no_second_lock(tmp_path):
    sidecar = tmp_path / "episode_labels.json"
    start = time.monotonic()
    with sidecar_lock(sidecar), sidecar_lock(str(sidecar), timeout=0.3):  # re-entry, not a second flock
        assert lock_path(sidecar) == tmp_path / ".strands-labels" / "episode_labels.json.lock"
        assert lock_path(sidecar).is_file()
    assert time.monotonic() - start < 0.3
    assert sorted(p.name for p in tmp_path.iterdir()) == [".strands-labels"]


def test_a_dangling_link_at_the_lock_path_is_refused_and_creates_nothing_outside(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    sidecar = root / "episode_labels.json"
    lock_path(sidecar).parent.mkdir()
    os.symlink(outside / "planted", lock_path(sidecar))
    for reading in (False, True):
        with pytest.raises(SidecarError, match="symbolic link"), sidecar_lock(sidecar, reading=reading):
            pass
    assert not (outside / "planted").exists() and list(outside.iterdir()) == []


def test_a_link_in_place_of_the_state_folder_is_refused(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    os.symlink(outside, root / ".strands-labels")
    with pytest.raises(SidecarError, match="symbolic link"), sidecar_lock(root / "episode_labels.json"):
        pass
    assert list(outside.iterdir()) == []


def test_an_earlier_versions_lock_file_is_taken_too_while_it_exists(tmp_path):
    """A process of an earlier version locks ``.<name>.lock`` beside the sidecar: while that
    file exists, it excludes us (and we it)."""
    sidecar = tmp_path / "episode_labels.json"
    legacy = tmp_path / ".episode_labels.json.lock"
    legacy.write_bytes(b"")
    fd = os.open(legacy, os.O_RDWR)
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)  # what an earlier version's writer holds
    try:
        with pytest.raises(StorageError, match="held the lock"), sidecar_lock(sidecar, timeout=0.3):
            pass
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    with sidecar_lock(sidecar, timeout=1):
        pass
    assert not legacy.exists()  # nothing else was left: the old lock file went with the adoption


def test_a_read_in_a_read_only_directory_goes_ahead_unlocked_and_a_write_is_refused(tmp_path, monkeypatch):
    lock_files_are_read_only(monkeypatch)
    sidecar = tmp_path / "episode_labels.json"
    with sidecar_lock(sidecar, reading=True):
        entered = True
    assert entered
    with pytest.raises(StorageError, match="cannot create the lock file .*--labels-dir"), sidecar_lock(sidecar):
        pass

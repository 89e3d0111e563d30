"""Derived state lives in one hidden folder beside the sidecars; what earlier versions left
beside a sidecar is moved there once, and no acknowledged label in their journal is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from strands_robots import episode_labels as el
from strands_robots.episode_labels.document import open_store
from strands_robots.storage.side_files import (
    STATE_DIR,
    conflicts_path,
    journal_base_path,
    journal_path,
    legacy_files,
    legacy_lock_path,
    rejected_path,
)
from tests.processes import in_new_process

REPO = Path(__file__).resolve().parents[2]


def _journaled(root: Path) -> None:
    """Verdicts for 0..3 in the canonical file and two labels pending in the journal."""
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(4)])
    open_store(root).write_through_bytes = 0
    el.annotate_episode(root, 1, quality="high", note="pending one")
    el.annotate_episode(root, 2, quality="low", note="pending two")
    assert journal_path(root / "episode_labels.json").exists()


def _as_an_earlier_version_left_it(root: Path) -> None:
    """Move the folder's files to the names an earlier version used beside the sidecar."""
    sidecar = root / "episode_labels.json"
    old = legacy_files(sidecar)
    os.rename(journal_path(sidecar), old["journal_path"])
    os.rename(journal_base_path(sidecar), old["journal_base_path"])
    old["conflicts_path"].write_text('{"kind":"record","key":"3","ours":null}\n')
    old["rejected_path"].write_text('{"line":"line 2","reason":"r"}\n')
    old["index_cache_path"].write_bytes(b"cache")
    (root / ".episode_labels.json.abc123.tmp").write_bytes(b"a write that never completed")
    legacy_lock_path(sidecar).write_bytes(b"")
    for path in (root / STATE_DIR).iterdir():
        path.unlink()
    (root / STATE_DIR).rmdir()


def test_an_earlier_versions_files_are_read_and_moved_into_the_folder_once(tmp_path):
    root = tmp_path
    _journaled(root)
    _as_an_earlier_version_left_it(root)

    def this_version_starts() -> tuple[dict, bool]:
        episodes = el.read_labels(root)["episodes"]  # the acknowledged labels of its journal are read
        el.annotate_episode(root, 3, quality="medium")
        return episodes, el.flush(root)

    episodes, flushed = in_new_process(this_version_starts)
    assert episodes["1"]["judge"]["note"] == "pending one" and episodes["2"]["judge"]["note"] == "pending two"
    assert flushed is True
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == [STATE_DIR]
    sidecar = root / "episode_labels.json"
    assert conflicts_path(sidecar).read_text() == '{"kind":"record","key":"3","ours":null}\n'
    assert rejected_path(sidecar).read_text() == '{"line":"line 2","reason":"r"}\n'
    document = json.loads(sidecar.read_text())["episodes"]
    assert [document[k]["judge"]["quality"] for k in ("1", "2", "3")] == ["high", "low", "medium"]


def test_an_earlier_journal_beside_a_journal_of_ours_loses_nothing(tmp_path):
    root = tmp_path
    _journaled(root)
    _as_an_earlier_version_left_it(root)
    # this version's journal appears first (e.g. written through --labels-dir logic by another process)
    sidecar = root / "episode_labels.json"
    old = legacy_files(sidecar)

    def another_process_writes_in_the_new_layout() -> None:
        (root / STATE_DIR).mkdir()
        store = open_store(root)
        for name in ("journal_path", "journal_base_path"):
            os.rename(old[name], root / name)
        store.write_through_bytes = 0
        el.annotate_episode(root, 0, quality="high", note="ours, new layout")
        for name in ("journal_path", "journal_base_path"):
            os.rename(root / name, old[name])

    in_new_process(another_process_writes_in_the_new_layout)
    episodes = in_new_process(lambda: el.read_labels(root)["episodes"])
    assert episodes["0"]["judge"]["note"] == "ours, new layout"
    assert episodes["1"]["judge"]["note"] == "pending one" and episodes["2"]["judge"]["note"] == "pending two"
    assert not legacy_files(sidecar)["journal_path"].exists()


KILLED_MID_WRITE = r"""
import os, signal, sys
from strands_robots import episode_labels as el
from strands_robots.storage import atomic
real, real_rename_with = os.replace, atomic.rename_with
def die_before(src):
    if str(src).endswith(".tmp"):
        os.kill(os.getpid(), signal.SIGKILL)  # after the temp file is written, before the rename
def replace(src, dst):
    die_before(src)
    real(src, dst)
def rename_with(src, dst, flags):
    die_before(src)
    return real_rename_with(src, dst, flags)
atomic.os.replace, atomic.rename_with = replace, rename_with
el.annotate_episode(sys.argv[1], 0, quality="low")
"""


def test_temp_files_of_a_killed_writer_are_removed_at_the_next_write(tmp_path):
    root = tmp_path
    el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(root)], cwd=REPO, timeout=120)
        assert proc.returncode == -signal.SIGKILL
    left = [p for p in (root / STATE_DIR).iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1  # each killed write removed the one before it; the last one is left
    (root / ".episode_labels.json.x1y2.tmp").write_bytes(b"left by an earlier version")
    el.annotate_episode(root, 0, quality="high")
    assert [p for p in (root / STATE_DIR).iterdir() if p.name.endswith(".tmp")] == []
    assert sorted(p.name for p in root.iterdir()) == [STATE_DIR, "episode_labels.json"]
    assert el.read_labels(root)["episodes"]["0"]["judge"]["quality"] == "high"

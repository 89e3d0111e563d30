"""Several processes writing one sidecar lose nothing, a remap running beside them included.

The rules are those of docs/performance.md, "1. Single writes are O(1): the journal" and
"Reliability tests (in CI)".
"""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

from strands_robots.episode_labels import (
    annotate_episode,
    filter_episodes,
    flush,
    read_labels,
    record_deterministic_verdicts,
    remap,
)
from strands_robots.storage.side_files import journal_path

PROCESSES = 8
PER_PROCESS = 250


def _context():
    ctx = mp.get_context("forkserver")  # fork() from a threaded pytest process may deadlock
    ctx.set_forkserver_preload(["strands_robots.episode_labels"])
    return ctx


def _annotate_range(root: str, start: int, count: int) -> None:
    for episode in range(start, start + count):
        annotate_episode(root, episode, quality="high", note=f"by worker starting at {start}", model=f"w{start}")


def _annotate_same(root: str, worker: int) -> None:
    for _ in range(20):
        annotate_episode(root, 0, quality="medium", note=f"worker {worker}", model=f"w{worker}")


def _identity_remap(root: str, rounds: int) -> None:
    for _ in range(rounds):
        remap(root, {str(i): i for i in range(300)})


def test_parallel_writers_on_distinct_episodes_lose_nothing(tmp_path: Path):
    root = tmp_path / "ds"
    root.mkdir()  # no meta/: a labels-only directory (no dataset check)
    total = PROCESSES * PER_PROCESS
    record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(total)])
    ctx = _context()
    workers = [
        ctx.Process(target=_annotate_range, args=(str(root), p * PER_PROCESS, PER_PROCESS)) for p in range(PROCESSES)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
        assert w.exitcode == 0
    merged = read_labels(root)  # canonical file + journal
    assert sum(1 for r in merged["episodes"].values() if "judge" in r) == total
    assert filter_episodes(root) == list(range(total))
    flush(root)
    document = json.loads((root / "episode_labels.json").read_text())  # the canonical file alone
    assert document == merged
    assert not (journal_path(root / "episode_labels.json")).exists()


def test_parallel_writers_on_one_episode_leave_one_complete_record(tmp_path: Path):
    root = tmp_path / "ds"
    root.mkdir()
    record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    ctx = _context()
    workers = [ctx.Process(target=_annotate_same, args=(str(root), p)) for p in range(PROCESSES)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
        assert w.exitcode == 0
    record = read_labels(root)["episodes"]["0"]
    judge = record["judge"]
    assert judge["note"] == f"worker {judge['model'][1:]}"
    assert set(judge) == {
        "quality",
        "failure_mode",
        "note",
        "success_opinion",
        "disputes_verdict",
        "model",
        "labeled_at",
    }
    assert record["deterministic"] == {"success": True, "failure": False}


def test_remap_beside_a_writer_loses_nothing(tmp_path: Path):
    root = tmp_path / "ds"
    root.mkdir()
    record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(300)])
    remapper = _context().Process(target=_identity_remap, args=(str(root), 40))
    remapper.start()
    for episode in range(300):
        annotate_episode(root, episode, quality="medium")
    remapper.join(timeout=120)
    assert remapper.exitcode == 0
    document = read_labels(root)
    assert sum("judge" in r for r in document["episodes"].values()) == 300

"""Group commits of model judges' labels (docs/judge.md, "Parallel conversations")."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
from strands_robots.errors import LabelsError
from strands_robots.judges.commit import GroupCommit
from tests.synth import make_v3_dataset

FIELDS = {"quality": "high", "failure_mode": None, "note": "n", "success_opinion": None, "model": "m"}


@pytest.fixture
def twelve(tmp_path):
    root = make_v3_dataset(tmp_path / "d", [5] * 12)
    record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(12)])
    return root


def test_concurrent_writers_share_commits_and_each_returns_its_durable_record(twelve):
    committer = GroupCommit()
    start = threading.Barrier(12)

    def write(episode):
        start.wait()
        return committer.write(twelve, None, episode, {**FIELDS, "note": f"episode {episode}"})

    with ThreadPoolExecutor(12) as pool:
        records = list(pool.map(write, range(12)))
    assert [r["judge"]["note"] for r in records] == [f"episode {e}" for e in range(12)]
    stored = read_labels(twelve)["episodes"]
    assert all(stored[str(e)]["judge"]["note"] == f"episode {e}" for e in range(12))
    assert 1 <= committer.commits < 12  # writers that arrived during a commit shared the next one


def test_a_refused_label_fails_only_its_writer(twelve):
    committer = GroupCommit()
    start = threading.Barrier(3)

    def write(episode):
        start.wait()
        return committer.write(twelve, None, episode, FIELDS)

    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(write, e) for e in (0, 99, 1)]  # 99 has no verdict
    assert futures[0].result()["judge"]["quality"] == "high" and futures[2].result()["judge"]["quality"] == "high"
    with pytest.raises(LabelsError):
        futures[1].result()
    assert "judge" not in read_labels(twelve)["episodes"].get("99", {})

"""Two judge runs on one dataset share the work (docs/judge.md, "Two runs on one dataset").

An episode whose lease another run holds is skipped and counted; a lease dies with its
holder; an episode another run labelled after this run selected it is not judged again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from strands_robots import episode_labels as el
from strands_robots.judges.runner import run_judge
from strands_robots.storage.lease import EpisodeLeases


def _history(root, episode: int) -> int:
    record = el.read_labels(root)["episodes"][str(episode)]
    return len(record.get("judge_history", [])) + (1 if "judge" in record else 0)


def test_episodes_another_run_holds_are_skipped_and_counted(toy_with_verdicts):
    other = EpisodeLeases(toy_with_verdicts)  # stands in for a second run judging 1 and 2
    assert other.take_all([1, 2]) == ([1, 2], [])
    report = run_judge(toy_with_verdicts, workers=2)
    assert [r.episode for r in report.labelled] == [0]
    assert report.taken_elsewhere == [1, 2]
    assert [_history(toy_with_verdicts, e) for e in (0, 1, 2)] == [1, 0, 0]
    other.give_back_all()
    again = run_judge(toy_with_verdicts)
    assert [r.episode for r in again.labelled] == [1, 2] and again.taken_elsewhere == []
    assert [_history(toy_with_verdicts, e) for e in (0, 1, 2)] == [1, 1, 1]


def test_a_relabel_leaves_alone_what_another_run_labelled_after_it_selected(toy_with_verdicts, monkeypatch):
    """The lease is free again once the other run wrote its label: the label itself says so."""
    from strands_robots.judges import runner

    real = runner.select_episodes

    def select_then_the_other_run_labels(*args, **kwargs):
        selected = real(*args, **kwargs)
        el.annotate_episode(toy_with_verdicts, 1, quality="low", model="other-run", keep_history=True)
        return selected

    run_judge(toy_with_verdicts)
    monkeypatch.setattr(runner, "select_episodes", select_then_the_other_run_labels)
    report = run_judge(toy_with_verdicts, relabel=True)
    assert [r.episode for r in report.labelled] == [0, 2] and report.taken_elsewhere == [1]
    assert el.read_labels(toy_with_verdicts)["episodes"]["1"]["judge"]["model"] == "other-run"


def test_the_lease_of_a_killed_run_expires_with_it(toy_with_verdicts):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import time
                from strands_robots.storage.lease import EpisodeLeases
                leases = EpisodeLeases({str(toy_with_verdicts)!r})
                assert leases.take_all([0, 1, 2]) == ([0, 1, 2], [])
                print("held", flush=True)
                time.sleep(600)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert run_judge(toy_with_verdicts).taken_elsewhere == [0, 1, 2]
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    report = run_judge(toy_with_verdicts)
    assert [r.episode for r in report.labelled] == [0, 1, 2] and report.taken_elsewhere == []


def test_two_cli_runs_at_once_judge_each_episode_once(toy_with_verdicts):
    """Two real processes started together: every episode gets exactly one judge label."""
    el.flush(toy_with_verdicts)
    command = [sys.executable, "-m", "strands_robots.cli.main", "judge", str(toy_with_verdicts)]
    env = {**os.environ, "COLUMNS": "200"}
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)]
    time.sleep(0.05)
    runs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    outputs = [run.communicate(timeout=600) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    assert [_history(toy_with_verdicts, e) for e in (0, 1, 2)] == [1, 1, 1]

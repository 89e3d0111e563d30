"""``run_judge(executor="ray")`` and ``strands-labels judge --ray`` on a real local Ray cluster."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.episode_labels import read_labels
from strands_robots.errors import LabelValidationError
from strands_robots.judges import DatasetProfile, run_judge
from strands_robots.judges import commit as commit_module
from tests.distributed.slow_models import SlowPidJudge

JUDGE_KEYS = ("quality", "failure_mode", "note", "success_opinion", "model", "disputes_verdict")


def judge_blocks(root) -> dict[str, dict]:
    records = read_labels(root)["episodes"]
    return {k: {f: r["judge"][f] for f in JUDGE_KEYS} for k, r in records.items() if "judge" in r}


def test_ray_labels_equal_the_thread_executors(ray_cluster, g1_with_verdicts, copy_dataset):
    twin = copy_dataset(g1_with_verdicts, "twin")
    threads = run_judge(g1_with_verdicts, workers=2)
    seen = []
    on_ray = run_judge(twin, executor="ray", workers=2, batch_size=7, on_result=seen.append)
    assert len(threads.labelled) == len(on_ray.labelled) == 100 and not on_ray.failed
    assert [r.episode for r in on_ray.results] == list(range(100))
    assert sorted(r.episode for r in seen) == list(range(100))  # progress: once per episode
    assert judge_blocks(twin) == judge_blocks(g1_with_verdicts)
    assert on_ray.quality_counts() == threads.quality_counts()
    assert sum(on_ray.quality_counts().values()) == 100
    assert set(on_ray.tool_seconds) == {"read_predicate_verdict", "load_episode", "sample_frames", "write_label"}
    records = read_labels(twin)["episodes"]
    assert all("judge_history" not in r for r in records.values())  # each written once


def test_both_executors_write_through_one_group_commit_writer(ray_cluster, g1_with_verdicts, copy_dataset, monkeypatch):
    """Threads and Ray both write with ``runner.RunWriter``: same labels, same refusals."""
    twin = copy_dataset(g1_with_verdicts, "twin")
    commits: dict[str, list[tuple[int, ...]]] = {}
    real = commit_module.annotate_episodes

    def refuse_three(root, annotations, **kwargs):  # the store refuses episode 3's label
        commits.setdefault(Path(root).name, []).append(tuple(a["episode"] for a in annotations))
        if any(a["episode"] == 3 for a in annotations):
            raise LabelValidationError("episode 3 refused")
        return real(root, annotations, **kwargs)

    monkeypatch.setattr(commit_module, "annotate_episodes", refuse_three)
    threads = run_judge(g1_with_verdicts, workers=2)
    on_ray = run_judge(twin, executor="ray", workers=2, batch_size=10)
    for report in (threads, on_ray):
        assert [r.episode for r in report.failed] == [3] and len(report.labelled) == 99
        assert report.failed[0].error == "label not written: LabelValidationError: episode 3 refused"
        assert report.write_seconds > 0
    assert judge_blocks(twin) == judge_blocks(g1_with_verdicts)
    assert "3" not in judge_blocks(twin) and len(judge_blocks(twin)) == 99
    # on Ray: one commit per returned batch; the refused batch [0, 10) again one episode at a time
    batches = {tuple(range(b, b + 10)) for b in range(0, 100, 10)}
    assert set(commits[twin.name]) == batches | {(e,) for e in range(10)}
    assert len(commits[twin.name]) == 20


def test_ray_run_resumes_and_relabels_with_history(ray_cluster, g1_with_verdicts):
    first = run_judge(g1_with_verdicts, executor="ray", workers=2, limit=30)
    assert [r.episode for r in first.labelled] == list(range(30))
    second = run_judge(g1_with_verdicts, executor="ray", workers=2)
    assert second.already_labelled == 30 and [r.episode for r in second.labelled] == list(range(30, 100))
    assert run_judge(g1_with_verdicts, executor="ray").results == []
    again = run_judge(g1_with_verdicts, executor="ray", episodes=[3, 4], relabel=True)
    assert [r.episode for r in again.labelled] == [3, 4]
    records = read_labels(g1_with_verdicts)["episodes"]
    assert [len(records[k].get("judge_history", [])) for k in ("2", "3", "4")] == [0, 1, 1]


def test_killing_a_worker_mid_run_still_labels_every_episode_once(ray_cluster, g1_with_verdicts, tmp_path):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    profile = DatasetProfile.from_dataset(g1_with_verdicts)
    model = SlowPidJudge({g1_with_verdicts: profile}, pid_dir=str(pid_dir), delay=0.02)
    killed: list[int] = []

    def kill_one(result) -> None:  # noqa: ANN001 - EpisodeResult
        if killed:
            return
        deadline = time.monotonic() + 30
        while len(list(pid_dir.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        victim = sorted(int(p.name) for p in pid_dir.iterdir())[0]
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    report = run_judge(g1_with_verdicts, model=model, executor="ray", workers=2, batch_size=5, on_result=kill_one)
    assert killed, "no worker was killed"
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)  # really gone
    assert len(list(pid_dir.iterdir())) >= 3  # Ray started a replacement worker process
    assert not report.failed and [r.episode for r in report.results] == list(range(100))
    records = read_labels(g1_with_verdicts)["episodes"]
    assert all(records[str(e)]["judge"]["model"] == "heuristic-v1" for e in range(100))
    assert all("judge_history" not in records[str(e)] for e in range(100))  # exactly once


def test_episode_failures_are_collected_and_bad_input_is_typed(ray_cluster, g1_with_verdicts):
    (g1_with_verdicts / "data" / "chunk-000" / "episode_000005.parquet").unlink(missing_ok=True)
    report = run_judge(g1_with_verdicts, executor="ray", workers=2, episodes=[4, 5, 6, 200])
    assert [r.episode for r in report.labelled] == [4, 6]
    assert [r.episode for r in report.failed] == [5, 200]
    assert report.failed[0].error.startswith("the judge wrote no label")
    assert "episode_000005.parquet of episode 5 is missing" in report.failed[0].error
    assert report.failed[1].error == "no deterministic verdict recorded; nothing to judge"
    assert "judge" not in read_labels(g1_with_verdicts)["episodes"]["5"]
    with pytest.raises(LabelValidationError, match="executor"):
        run_judge(g1_with_verdicts, executor="dask")
    with pytest.raises(LabelValidationError, match="batch_size"):
        run_judge(g1_with_verdicts, executor="ray", batch_size=0)


def test_cli_judge_ray(ray_cluster, g1_with_verdicts):
    result = CliRunner().invoke(app, ["judge", "--ray", str(g1_with_verdicts), "--workers", "2", "--limit", "12"])
    assert result.exit_code == 0, result.output
    assert "12 labelled" in result.output
    assert len(judge_blocks(g1_with_verdicts)) == 12


def test_without_ray_installed_the_error_names_the_extra(g1_with_verdicts, monkeypatch):
    import sys

    from strands_robots.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees where the extra is not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'strands-robots-labels\[ray\]'"):
        run_judge(g1_with_verdicts, executor="ray")
    assert "judge" not in read_labels(g1_with_verdicts)["episodes"]["0"]


def test_ray_judges_a_hub_dataset_by_repo_id(ray_cluster, shared_dataset, tmp_path, monkeypatch):
    from strands_robots.dataset.hub import resolve_root
    from strands_robots.episode_labels import record_deterministic_verdicts
    from tests.distributed.conftest import g1_verdicts

    cache = tmp_path / "hf" / "lerobot" / "lerobot" / "g1"
    shutil.copytree(shared_dataset("g1-inspire-v21"), cache)
    for p in [cache, *cache.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    monkeypatch.setenv("HF_LEROBOT_HOME", str(tmp_path / "hf" / "lerobot"))
    monkeypatch.setenv("STRANDS_LABELS_HOME", str(tmp_path / "labels"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the workers get it too: no download attempt anywhere
    root, hub = resolve_root("lerobot/g1")
    record_deterministic_verdicts(root, g1_verdicts(), labels_dir=hub.labels_dir)
    report = run_judge("lerobot/g1", executor="ray", workers=2, limit=20)
    assert [r.episode for r in report.labelled] == list(range(20)) and not report.failed
    assert len(judge_blocks_in(root, hub.labels_dir)) == 20
    assert not (root / "episode_labels.json").exists()


def judge_blocks_in(root, labels_dir) -> dict[str, dict]:
    records = read_labels(root, labels_dir=labels_dir)["episodes"]
    return {k: r["judge"] for k, r in records.items() if "judge" in r}


def test_ray_leaves_the_episodes_another_run_holds(ray_cluster, g1_with_verdicts):
    """The driver takes a batch's leases before sending it; held episodes are another run's
    (docs/judge.md, "Two runs on one dataset")."""
    from strands_robots.storage.lease import EpisodeLeases

    other = EpisodeLeases(g1_with_verdicts)
    assert other.take_all([3, 4, 50])[1] == []
    try:
        report = run_judge(g1_with_verdicts, executor="ray", workers=2)
    finally:
        other.give_back_all()
    assert report.taken_elsewhere == [3, 4, 50]
    labelled = read_labels(g1_with_verdicts)["episodes"]
    assert sorted(int(k) for k, r in labelled.items() if "judge" in r) == [e for e in range(100) if e not in (3, 4, 50)]


def test_a_dead_model_server_stops_a_ray_run_with_one_message(ray_cluster, tmp_path):
    """Each worker's breaker opens after 3 refused requests; the driver sends nothing more and raises."""
    import re

    from strands_robots.episode_labels import record_deterministic_verdicts
    from strands_robots.judges import RetryPolicy
    from strands_robots.judges.retry import ModelServerUnreachableError
    from tests.fake_vlm import FakeVLM
    from tests.synth import make_v3_dataset

    root = make_v3_dataset(tmp_path / "six", [8] * 6)
    record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(6)])
    with FakeVLM() as gone:  # a port nothing listens on once the block ends
        url = gone.openai_url
    fast = RetryPolicy(max_attempts=5, initial_delay=0.05, max_delay=0.1)
    with pytest.raises(ModelServerUnreachableError, match=re.escape(url)) as caught:
        run_judge(root, model="openai:fake-vlm", base_url=url, executor="ray", workers=2, batch_size=1, retry=fast)
    message = str(caught.value)
    assert re.search(r": 3 requests in a row were refused or its host name did not resolve", message), message
    assert message.endswith("the run stopped, labels written so far are kept.")
    assert all("judge" not in r for r in read_labels(root)["episodes"].values())


@pytest.mark.parametrize("executor", ["thread", "ray"])
def test_a_stale_verdict_is_read_as_stale_on_either_executor(ray_cluster, tmp_path, executor):
    """A dataset edited in place after its verdicts were recorded: read_predicate_verdict tells the
    model the verdict is STALE on a Ray worker as on a thread (the worker gets the fingerprint)."""
    from strands_robots.episode_labels import record_deterministic_verdicts
    from tests.fake_vlm import FakeVLM
    from tests.storage.remap_helpers import delete_episodes_files
    from tests.synth import make_v3_dataset

    root = make_v3_dataset(tmp_path / "ds", [8, 9, 10, 11, 12])
    record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(5)])
    delete_episodes_files(root, [1])  # edited in place, not remapped: episodes 1-3 now hold old 2-4
    with FakeVLM() as server:
        report = run_judge(
            root, model="openai:fake-vlm", base_url=server.openai_url, executor=executor, episodes=[0, 2], workers=1
        )
        answers = [m for entry in server.log for m in entry.body.get("messages", []) if m.get("role") == "tool"]
    verdicts = [str(m.get("content")) for m in answers if "deterministic verdict" in str(m.get("content"))]
    assert any("Episode 2 deterministic verdict is STALE" in text for text in verdicts), verdicts
    assert not any("Episode 0 deterministic verdict is STALE" in text for text in verdicts), verdicts
    assert [r.episode for r in report.labelled] == [0] and [r.episode for r in report.failed] == [2]

"""Each episode's signals computed once: the profile pass's evidence serves ``sample_frames``.

The payload with a filled :class:`EvidenceCache` must be the payload without one (same
rows, same signals), a changed data file must not be answered from the cache, and the
offline judge's labels must not depend on the cache. The offline runner writes its
labels in group commits (one journal line per batch).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from strands_robots.dataset.cache import cached_dataset
from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
from strands_robots.errors import LabelValidationError
from strands_robots.judges import DatasetProfile, run_judge
from strands_robots.judges import commit as commit_module
from strands_robots.judges import runner as runner_module
from strands_robots.tools.episode_judge import make_judge_tools
from strands_robots.tools.evidence import EvidenceCache, episode_evidence
from tests.judges.test_heuristic import BROKEN, JITTERY, LENGTH, NAMES, REGRASP, N, replace_states, trajectory
from tests.synth import make_v3_dataset

KEEP = ("quality", "failure_mode", "note", "success_opinion", "model", "disputes_verdict")


@pytest.fixture
def faulty_dataset(tmp_path):
    """The offline judge tests' dataset: 12 episodes in 3 files, rows shuffled, 3 planted faults."""
    root = make_v3_dataset(
        tmp_path / "faulty", [LENGTH] * N, state_dim=4, state_names=NAMES, episodes_per_file=5, shuffle_rows=True
    )
    replace_states(root, trajectory)
    verdicts = [{"episode": e, "success": e != BROKEN, "steps": LENGTH} for e in range(N)]
    record_deterministic_verdicts(root, verdicts, benchmark="synthetic")
    return root


def _payloads(tools, root, episodes, n_frames=(1, 4, 7), images=False):
    return {
        (e, n): tools.sample_frames(root=str(root), episode=e, n_frames=n, include_images=images)
        for e in episodes
        for n in n_frames
    }


def _cached_tools(root):
    cache = EvidenceCache()
    DatasetProfile.from_dataset(root, evidence=cache)
    tools = make_judge_tools(roots=[root])
    tools.config.evidence = cache
    return tools, cache


def test_sample_frames_answers_from_the_profile_pass_with_the_same_payload(faulty_dataset):
    tools, cache = _cached_tools(faulty_dataset)
    assert len(cache) == N and cache.row_bytes > 0
    episodes = [0, JITTERY, REGRASP, BROKEN, N - 1]
    cached = _payloads(tools, faulty_dataset, episodes)
    assert cache.hits == len(cached) and cache.misses == 0
    fresh = _payloads(make_judge_tools(roots=[faulty_dataset]), faulty_dataset, episodes)
    assert cached == fresh
    assert json.dumps(list(cached.values())) == json.dumps(list(fresh.values()))  # the bytes a model would see
    payload = cached[(BROKEN, 4)]["content"][1]["json"]
    assert payload["signals"]["nan_frames"] == 2 and payload["frame_indices"] == [0, 30, 59, 89]
    # the cached signals are shared with the profile, never changed by a call
    assert "frame_stats" not in cache.get(cached_dataset(faulty_dataset), 0, _data_file(faulty_dataset, 0)).signals


def test_a_changed_data_file_is_read_again(faulty_dataset):
    tools, cache = _cached_tools(faulty_dataset)
    before = tools.sample_frames(root=str(faulty_dataset), episode=0, n_frames=3)
    replace_states(faulty_dataset, lambda e: np.full((LENGTH, 4), float(e), dtype=np.float32))
    after = tools.sample_frames(root=str(faulty_dataset), episode=0, n_frames=3)
    fresh = make_judge_tools(roots=[faulty_dataset]).sample_frames(root=str(faulty_dataset), episode=0, n_frames=3)
    assert after == fresh and after != before
    assert after["content"][1]["json"]["samples"][0]["state"] == [0.0, 0.0, 0.0, 0.0]
    assert cache.hits == 1 and cache.misses == 1


def test_over_the_row_budget_only_signals_are_kept_and_rows_are_read_again(faulty_dataset):
    cache = EvidenceCache(max_row_bytes=0)
    DatasetProfile.from_dataset(faulty_dataset, evidence=cache)
    assert len(cache) == N and cache.row_bytes == 0
    tools = make_judge_tools(roots=[faulty_dataset])
    tools.config.evidence = cache
    episodes = [0, JITTERY, BROKEN]
    fresh = _payloads(make_judge_tools(roots=[faulty_dataset]), faulty_dataset, episodes)
    assert _payloads(tools, faulty_dataset, episodes) == fresh and cache.hits == len(fresh)


def test_the_payload_is_the_same_with_video_cameras(copy_dataset, shared_dataset):
    root = copy_dataset(shared_dataset("lerobot-written-v30-video"))
    tools, cache = _cached_tools(root)
    cached = _payloads(tools, root, [0, 3], n_frames=(2,), images=True)
    fresh = _payloads(make_judge_tools(roots=[root]), root, [0, 3], n_frames=(2,), images=True)
    assert cache.hits == 2
    assert cached == fresh
    assert cached[(0, 2)]["content"][1]["json"]["signals"]["frame_stats"] is not None


def test_episode_evidence_falls_back_to_frame_times(faulty_dataset):
    ds = cached_dataset(faulty_dataset)
    rows = ds.read_frames(0, ["observation.state"])
    evidence = episode_evidence(ds, LENGTH, rows)
    assert evidence.timestamps is not None and evidence.timestamps[-1] == pytest.approx((LENGTH - 1) / 30)
    assert evidence.signals["frames"] == LENGTH and evidence.signals["duration_s"] == pytest.approx(3.0)


def test_offline_labels_are_the_same_without_the_cache(faulty_dataset, copy_dataset, monkeypatch):
    other = copy_dataset(faulty_dataset, "faulty_copy")
    run_judge(faulty_dataset)
    with_cache = read_labels(faulty_dataset)["episodes"]
    monkeypatch.setattr(EvidenceCache, "get", lambda self, *a: None)  # every sample_frames reads and computes
    run_judge(other)
    without = read_labels(other)["episodes"]
    assert sorted(map(int, with_cache)) == sorted(map(int, without)) == list(range(N))
    for key, record in with_cache.items():
        assert {k: record["judge"][k] for k in KEEP} == {k: without[key]["judge"][k] for k in KEEP}
    assert with_cache[str(JITTERY)]["judge"]["failure_mode"] == "jerky_motion"


def test_offline_labels_are_written_in_one_group_commit_per_batch(faulty_dataset, monkeypatch):
    monkeypatch.setattr(runner_module, "WRITE_BATCH", 5)
    commits = []
    real = commit_module.annotate_episodes

    def spy(root, annotations, **kwargs):
        commits.append([a["episode"] for a in annotations])
        return real(root, annotations, **kwargs)

    monkeypatch.setattr(commit_module, "annotate_episodes", spy)
    seen = []
    report = run_judge(faulty_dataset, on_result=seen.append)
    assert len(report.labelled) == N and sorted(r.episode for r in seen) == list(range(N))
    assert report.signals_reused == N and report.write_seconds > 0
    assert commits == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]  # one locked commit (one fsync) per batch
    records = read_labels(faulty_dataset)["episodes"]
    assert all(records[str(e)]["judge"]["model"] == "heuristic-v1" for e in range(N))


def test_a_batch_the_store_refuses_is_written_one_by_one(faulty_dataset, monkeypatch):
    real = commit_module.annotate_episodes

    def refuse_three(root, annotations, **kwargs):
        if any(a["episode"] == 3 for a in annotations):
            raise LabelValidationError("episode 3 refused")
        return real(root, annotations, **kwargs)

    monkeypatch.setattr(commit_module, "annotate_episodes", refuse_three)
    report = run_judge(faulty_dataset)
    assert [r.episode for r in report.failed] == [3]
    assert report.failed[0].error == "label not written: LabelValidationError: episode 3 refused"
    records = read_labels(faulty_dataset)["episodes"]
    assert [e for e in range(N) if "judge" in records[str(e)]] == [e for e in range(N) if e != 3]


def test_relabel_through_batches_keeps_history(faulty_dataset):
    run_judge(faulty_dataset)
    first = read_labels(faulty_dataset)["episodes"]
    run_judge(faulty_dataset, relabel=True)
    records = read_labels(faulty_dataset)["episodes"]
    for e in range(N):
        record = records[str(e)]
        assert record["judge_history"] == [first[str(e)]["judge"]]
        assert {k: record["judge"][k] for k in KEEP} == {k: first[str(e)]["judge"][k] for k in KEEP}


def _data_file(root, episode):
    return cached_dataset(root).episodes[episode].data_file

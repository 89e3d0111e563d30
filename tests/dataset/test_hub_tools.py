"""The judge tools' ``root`` may be a repo id with a local copy; a model never makes the process download one."""

from __future__ import annotations

import json

from strands_robots.dataset.hub import hub_labels_dir
from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
from strands_robots.tools.episode_judge import load_episode, make_judge_tools, read_predicate_verdict, write_label


def listing(root):
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*")) if p.is_file()}


def test_tools_take_a_repo_id_and_keep_its_labels_out_of_the_cache(hub_cache, monkeypatch):
    monkeypatch.delenv("STRANDS_LABELS_ROOTS", raising=False)
    cache = hub_cache / "lerobot" / "so101"
    record_deterministic_verdicts("lerobot/so101", [{"episode": 1, "success": True}])
    before = listing(cache)
    loaded = load_episode("lerobot/so101", 1)
    assert loaded["status"] == "success", loaded
    info = next(b["json"] for b in loaded["content"] if "json" in b)
    assert info["has_verdict"] is True and info["has_judge_label"] is False
    verdict = read_predicate_verdict("lerobot/so101", 1)
    assert verdict["status"] == "success" and "success=True" in verdict["content"][0]["text"]
    written = write_label("lerobot/so101", 1, "high", None, "clean", True, "judge-m")
    assert written["status"] == "success", written
    labels = hub_labels_dir("lerobot/so101")
    assert read_labels(cache, labels_dir=labels)["episodes"]["1"]["judge"]["quality"] == "high"
    assert listing(cache) == before  # the download cache is not written


def test_a_repo_id_not_here_is_refused_without_a_download(hub_cache, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE")  # online: still no download for a model-chosen root
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: a request would fail loudly
    result = load_episode("lerobot/pusht", 0)
    assert result["status"] == "error"
    assert "not an existing directory" in json.dumps(result)
    assert not (hub_cache / "lerobot" / "pusht").exists()


def test_an_allow_list_applies_to_the_copy(hub_cache, tmp_path):
    tools = make_judge_tools(roots=[tmp_path / "elsewhere"])
    result = tools.load_episode("lerobot/so101", 0)
    assert result["status"] == "error" and "outside the allowed roots" in json.dumps(result)

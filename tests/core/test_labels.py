"""The ``Labels`` handle (``strands_robots.labels``, docs/api.md): one object per dataset that
resolves its ROOT once and carries the three stores, the selection, the stale check and the remap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from strands_robots.errors import LabelArgumentError, LabelsNotFoundError, LabelValidationError, RootNotFoundError
from strands_robots.labels import Labels, open_labels

VERDICTS = [{"episode": 0, "success": True}, {"episode": 1, "success": True}, {"episode": 2, "success": False}]


def test_the_handle_carries_the_three_stores(toy_dataset):
    labels = open_labels(toy_dataset)
    assert isinstance(labels, Labels) and labels.root == toy_dataset and labels.labels_dir is None
    assert labels.repo_id is None and labels.directory == toy_dataset
    labels.episodes.record_verdicts(VERDICTS, benchmark="so101_reach")
    labels.episodes.annotate(0, quality="high", model="judge-vlm")
    labels.episodes.annotate(1, quality="medium", failure_mode="near_miss", success_opinion=False, model="judge-vlm")
    assert labels.filter(min_quality="medium") == [0, 1]
    assert labels.filter(exclude_disputed=True) == [0]
    assert labels.explain(exclude_disputed=True)["dropped"]["disputed"] == [1]
    assert [d["episode"] for d in labels.episodes.disputes()] == [1]
    assert labels.episodes.verdict(2)["success"] is False
    assert labels.episodes.path == toy_dataset / "episode_labels.json"
    assert sorted(labels.episodes.read()["episodes"]) == ["0", "1", "2"]

    labels.outcomes.set(1, outcome="expert_success", evaluation_membership="held_out_eval", labeled_by="me")
    assert labels.outcomes.get(1)["outcome"] == "expert_success" and labels.held_out() == {1}
    assert labels.filter(min_quality="medium") == [0]  # a held-out episode never enters a training selection
    assert list(labels.outcomes.current()) == [1] and len(labels.outcomes.history(1)) == 1

    length = labels.dataset.episodes[0].length
    labels.segments.save(0, [{"start": 0, "end": length, "label": "pick"}], annotator="me")
    assert labels.segments.get(0)["segments"][0]["label"] == "Pick"
    assert labels.stale() == {"episode_labels": {}, "outcomes": {}, "segments": {}}


def test_a_labels_dir_keeps_every_sidecar_outside_the_root(toy_dataset, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    labels = open_labels(str(toy_dataset), labels_dir=elsewhere)
    labels.episodes.record_verdicts(VERDICTS)
    labels.outcomes.set(0, outcome="expert_success")
    assert labels.directory == elsewhere and labels.episodes.path == elsewhere / "episode_labels.json"
    assert sorted(p.name for p in elsewhere.glob("episode_*")) == ["episode_labels.json", "episode_outcomes.jsonl"]
    assert not (toy_dataset / "episode_labels.json").exists()
    assert labels.stale() == {"episode_labels": {}, "outcomes": {}}  # only the sidecars present


def test_remap_runs_over_every_sidecar(toy_dataset):
    labels = open_labels(toy_dataset)
    labels.episodes.record_verdicts([{"episode": 0, "success": True}, {"episode": 1, "success": False}])
    labels.outcomes.set(0, outcome="expert_success")
    # the dataset was not renumbered: the stored fingerprints refuse the swap, nothing changes
    with pytest.raises(LabelValidationError, match="contradicts the labels' fingerprints"):
        labels.remap({0: 1, 1: 0})
    assert labels.episodes.verdict(0)["success"] is True and labels.outcomes.get(0)["outcome"] == "expert_success"


def test_a_repo_id_is_resolved_once_to_its_local_copy_and_labels_dir(toy_dataset, tmp_path, monkeypatch):
    home = tmp_path / "hf" / "lerobot"
    shutil.copytree(toy_dataset, home / "me" / "toy")
    monkeypatch.setenv("HF_LEROBOT_HOME", str(home))
    monkeypatch.setenv("STRANDS_LABELS_HOME", str(tmp_path / "labels"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    labels = open_labels("me/toy@v3.0")
    assert (labels.repo_id, labels.revision) == ("me/toy", "v3.0")
    assert labels.root == (home / "me" / "toy").resolve()
    assert labels.labels_dir == tmp_path / "labels" / "hub" / "me" / "toy" / "v3.0"
    labels.episodes.record_verdicts(VERDICTS)
    stored = json.loads((labels.labels_dir / "episode_labels.json").read_text())
    assert stored["episodes"]["2"]["deterministic"]["success"] is False
    assert not (labels.root / "episode_labels.json").exists()  # the download cache is never written
    assert repr(labels) == f"<Labels me/toy in {labels.labels_dir}>"


def test_nothing_is_read_until_used_and_errors_are_the_stores(tmp_path):
    labels = open_labels(tmp_path / "nowhere")  # no error yet: nothing read
    with pytest.raises(RootNotFoundError):
        labels.episodes.read()
    with pytest.raises(LabelsNotFoundError, match="Record deterministic verdicts first"):
        open_labels(tmp_path).filter()
    with pytest.raises(LabelArgumentError, match="root"):
        open_labels(3)  # type: ignore[arg-type]
    with pytest.raises(LabelArgumentError, match="labels_dir"):
        open_labels(tmp_path, labels_dir=Path)  # type: ignore[arg-type]

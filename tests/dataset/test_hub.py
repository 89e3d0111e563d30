"""Datasets named by Hub repo id: LeRobot's local copy, offline errors, the labels dir keyed by repo and revision.

Every test runs with ``HF_HUB_OFFLINE=1`` on a cache pre-populated from the shared datasets.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.dataset import MissingFileError, open_dataset
from strands_robots.dataset.hub import (
    HubDatasetError,
    hub_labels_dir,
    lerobot_home,
    looks_like_repo_id,
    resolve_root,
    split_revision,
)
from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
from strands_robots.judges import run_judge


def listing(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*")) if p.is_file()}


def test_repo_id_shape_and_revision_syntax():
    assert looks_like_repo_id("lerobot/pusht") and looks_like_repo_id("lerobot/pusht@v2.1")
    assert looks_like_repo_id("user-1/so_101.test")
    assert not looks_like_repo_id("pusht") and not looks_like_repo_id("/data/pusht")
    assert not looks_like_repo_id("a/b/c") and not looks_like_repo_id("../x") and not looks_like_repo_id("./x")
    assert split_revision("lerobot/pusht@v2.1") == ("lerobot/pusht", "v2.1")
    assert split_revision("lerobot/pusht") == ("lerobot/pusht", None)


def test_lerobot_home_follows_lerobots_rule(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_LEROBOT_HOME", str(tmp_path / "x"))
    assert lerobot_home() == tmp_path / "x"
    monkeypatch.delenv("HF_LEROBOT_HOME")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert lerobot_home() == tmp_path / "hf" / "lerobot"
    monkeypatch.delenv("HF_HOME")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert lerobot_home() == tmp_path / "home" / ".cache" / "huggingface" / "lerobot"


def test_repo_id_resolves_to_the_local_copy_and_a_labels_dir_by_revision(hub_cache, tmp_path):
    root, hub = resolve_root("lerobot/g1")
    assert root == (hub_cache / "lerobot" / "g1").resolve() and hub.repo_id == "lerobot/g1"
    assert hub.labels_dir == tmp_path / "labels" / "hub" / "lerobot" / "g1" / "main" and hub.labels_dir.is_dir()
    assert resolve_root("lerobot/g1@v2.1")[1].labels_dir.name == "v2.1"
    assert resolve_root("lerobot/g1", "refs/pr/3")[1].labels_dir.name == "refs%2Fpr%2F3"
    assert hub_labels_dir("lerobot/g1", "v2.1") == tmp_path / "labels" / "hub" / "lerobot" / "g1" / "v2.1"
    local = tmp_path / "lerobot" / "g1"  # an existing path wins over the repo id of the same spelling
    shutil.copytree(hub_cache / "lerobot" / "g1" / "meta", local / "meta")
    assert resolve_root("lerobot/g1") == (local.resolve(), None)
    with pytest.raises(HubDatasetError, match="applies to a Hub repo id"):
        resolve_root("lerobot/g1", "v2.1")


def test_missing_dataset_offline_is_a_typed_error_naming_the_remedy(hub_cache):
    with pytest.raises(HubDatasetError) as caught:
        resolve_root("lerobot/pusht")
    message = str(caught.value)
    assert "HF_HUB_OFFLINE" in message and "hf download lerobot/pusht --repo-type dataset --local-dir" in message
    assert isinstance(caught.value, FileNotFoundError)
    assert not (hub_cache / "lerobot" / "pusht").exists()  # nothing created in the cache
    result = CliRunner().invoke(app, ["info", "lerobot/pusht"])
    assert result.exit_code == 2 and "HF_HUB_OFFLINE" in result.output


def test_a_file_missing_from_a_hub_copy_offline_names_the_remedy(hub_cache):
    root, _ = resolve_root("lerobot/g1")
    (root / "data" / "chunk-000" / "episode_000005.parquet").unlink()
    dataset = open_dataset(root)
    assert len(dataset.read_frames(4, ["observation.state"])["observation.state"]) == dataset.episodes[4].length
    with pytest.raises(HubDatasetError, match=r"data/chunk-000/episode_000005.parquet of lerobot/g1 .*HF_HUB_OFFLINE"):
        dataset.read_frames(5, ["observation.state"])


def test_a_plain_dataset_keeps_the_plain_missing_file_error(copy_dataset, shared_dataset):
    root = copy_dataset(shared_dataset("g1-inspire-v21"))
    (root / "data" / "chunk-000" / "episode_000005.parquet").unlink()
    with pytest.raises(MissingFileError) as caught:
        open_dataset(root).read_frames(5, ["observation.state"])
    assert not isinstance(caught.value, HubDatasetError)


def test_cli_labels_a_hub_dataset_outside_the_cache(hub_cache, tmp_path):
    cache = hub_cache / "lerobot" / "so101"
    before = listing(cache)
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps([{"episode": e, "success": e != 2} for e in range(4)]))
    runner = CliRunner()
    info = runner.invoke(app, ["info", "lerobot/so101"])
    assert info.exit_code == 0, info.output
    labels = tmp_path / "labels" / "hub" / "lerobot" / "so101" / "main"
    assert "hub       lerobot/so101 @ main" in info.output and f"labels    {labels}" in info.output
    as_json = json.loads(runner.invoke(app, ["info", "lerobot/so101", "--json"]).output)
    assert as_json["hub"] == {
        "repo_id": "lerobot/so101",
        "revision": "main",
        "local_copy": str(cache.resolve()),
        "labels_dir": str(labels),
    }
    result = runner.invoke(app, ["verdicts", "lerobot/so101", str(verdicts)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["judge", "lerobot/so101"])
    assert result.exit_code == 0, result.output
    assert "4 labelled" in result.output
    records = read_labels(cache, labels_dir=labels)["episodes"]
    assert sorted(records) == ["0", "1", "2", "3"] and all("judge" in r for r in records.values())
    assert [records[k]["deterministic"]["success"] for k in ("0", "1", "2", "3")] == [True, True, False, True]
    assert listing(cache) == before  # the cache is not written
    key = json.loads((labels / ".strands-labels" / "dataset-key.json").read_text())
    assert key["root"] == str(cache.resolve())  # the labels dir remembers its dataset, the local copy
    shown = runner.invoke(app, ["show", "lerobot/so101"])
    assert shown.exit_code == 0 and "no label" not in shown.output.lower()
    # another revision is another labels dir
    other = runner.invoke(app, ["--revision", "v3.0", "judge", "lerobot/so101"])
    assert "so101/v3.0/episode_labels.json does not exist" in str(other.exception)
    explicit = tmp_path / "mine"
    explicit.mkdir()
    result = runner.invoke(app, ["verdicts", "lerobot/so101", str(verdicts), "--labels-dir", str(explicit)])
    assert result.exit_code == 0 and (explicit / "episode_labels.json").is_file()


def test_run_judge_takes_a_repo_id(hub_cache, tmp_path):
    root, hub = resolve_root("lerobot/g1")
    record_deterministic_verdicts(
        root, [{"episode": e, "success": e % 4 != 0} for e in range(100)], labels_dir=hub.labels_dir
    )
    report = run_judge("lerobot/g1", episodes=range(10), workers=2)
    assert [r.episode for r in report.labelled] == list(range(10)) and report.root == root
    records = read_labels(root, labels_dir=hub.labels_dir)["episodes"]
    assert sum("judge" in r for r in records.values()) == 10
    assert not (root / "episode_labels.json").exists()

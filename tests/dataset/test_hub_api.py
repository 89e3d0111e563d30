"""A Hub repo id reaches the labels through ``open_labels`` (and the 0.5.3 wrappers and the
dataset reader), by the one rule of ``resolve_root``; the other store functions take a path.

Offline, on a LeRobot cache pre-populated from the shared datasets (``hub_cache``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import shutil
from pathlib import Path

import pytest

from strands_robots.dataset import open_dataset
from strands_robots.dataset.hub import HubDatasetError, hub_labels_dir, resolve_root
from strands_robots.episode_labels import (
    annotate_episode,
    filter_episodes,
    labels_path,
    list_disputes,
    measure_agreement,
    read_labels,
    record_deterministic_verdicts,
    stale_episodes,
)
from strands_robots.errors import RootNotFoundError
from strands_robots.labels import open_labels
from strands_robots.report import write_report
from strands_robots.segments import template_choices

PACKAGES = ("strands_robots.dataset", "strands_robots.episode_labels")


def listing(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_reader_and_0_5_3_function_taking_root_accepts_a_repo_id(hub_cache):
    """A repo id is resolved before anything else is read: one not in the cache, offline, is the
    typed error naming the remedy, whatever the function and its other arguments; the handle too."""
    checked = []
    for name in PACKAGES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            fn = getattr(module, attr)
            if not inspect.isfunction(fn) or "root" not in inspect.signature(fn).parameters or attr == "run_judge":
                continue
            required = {
                p.name: None
                for p in inspect.signature(fn).parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "root"
            }
            with pytest.raises(HubDatasetError, match="HF_HUB_OFFLINE"):
                fn(root="nobody/x", **required)
            checked.append(f"{name}.{attr}")
    assert len(checked) > 15 and "strands_robots.episode_labels.filter_episodes" in checked
    with pytest.raises(HubDatasetError, match="HF_HUB_OFFLINE"):
        open_labels("nobody/x").outcomes.current()
    assert not (hub_cache / "nobody").exists()


def test_label_apis_by_repo_id_write_the_labels_dir_and_never_the_cache(hub_cache, tmp_path):
    cache = hub_cache / "lerobot" / "so101"
    before = listing(cache)
    labels = tmp_path / "labels" / "hub" / "lerobot" / "so101" / "main"
    record_deterministic_verdicts("lerobot/so101", [{"episode": e, "success": e != 2} for e in range(4)])
    annotate_episode("lerobot/so101", 1, quality="high", model="m")
    annotate_episode("lerobot/so101", 3, quality="low", failure_mode="other", model="m")
    assert labels_path("lerobot/so101") == labels / "episode_labels.json" and (labels / "episode_labels.json").is_file()
    document = read_labels("lerobot/so101")
    assert document == read_labels(cache, labels_dir=labels)
    assert sorted(document["episodes"]) == ["0", "1", "2", "3"]
    assert filter_episodes("lerobot/so101") == [1]  # 0 has no judge block, 2 failed, 3 is low quality
    assert filter_episodes("lerobot/so101", min_quality="low") == [1, 3]
    assert stale_episodes("lerobot/so101") == {}
    assert list_disputes("lerobot/so101") == []
    agreement = measure_agreement("lerobot/so101", {1: {"quality": "high"}, 3: {"quality": "medium"}})
    assert agreement["episodes_compared"] == 2 and agreement["quality_agreement"] == 0.5
    hub = open_labels("lerobot/so101")  # the other stores take a repo id through the handle
    hub.outcomes.set(2, outcome="failure", labeled_by="me")
    assert hub.outcomes.current()[2]["outcome"] == "failure"
    assert hub.outcomes.path.parent == labels
    episode = open_dataset("lerobot/so101").episodes[0]
    hub.segments.save(0, [{"start": 0, "end": episode.length, "label": "pick"}], annotator="me")
    assert hub.segments.get(0)["segments"][0]["label"] == "Pick"  # labels are normalised
    assert hub.segments.path.parent == labels
    choices = template_choices(hub.root, "pick", labels_dir=hub.labels_dir)
    assert choices[0]["in_pool"] is False  # no saved segmentation of "pick"
    assert listing(cache) == before  # the download cache is never written


def test_a_revision_in_the_repo_id_keys_the_labels_dir(hub_cache, tmp_path):
    record_deterministic_verdicts("lerobot/so101@v3.0", [{"episode": 0, "success": True}])
    assert (hub_labels_dir("lerobot/so101", "v3.0") / "episode_labels.json").is_file()
    assert not (hub_labels_dir("lerobot/so101") / "episode_labels.json").exists()
    assert read_labels("lerobot/so101@v3.0")["episodes"]["0"]["deterministic"]["success"] is True


def test_an_explicit_labels_dir_wins(hub_cache, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    record_deterministic_verdicts("lerobot/so101", [{"episode": 0, "success": True}], labels_dir=mine)
    assert (mine / "episode_labels.json").is_file()
    assert not (hub_labels_dir("lerobot/so101") / "episode_labels.json").exists()


def test_write_report_by_repo_id_writes_beside_the_labels(hub_cache, tmp_path):
    record_deterministic_verdicts("lerobot/so101", [{"episode": e, "success": True} for e in range(4)])
    cache = hub_cache / "lerobot" / "so101"
    before = listing(cache)
    hub = open_labels("lerobot/so101")
    result = write_report(hub.root, labels_dir=hub.labels_dir, episodes=[0])
    assert result.out == hub_labels_dir("lerobot/so101") / "report"
    assert result.files and all(result.out in f.parents and f.stat().st_size > 0 for f in result.files)
    assert listing(cache) == before


def test_the_drop_in_path_rules_hold(hub_cache, tmp_path, copy_dataset, shared_dataset):
    # 1. an existing path always wins, even spelled like a repo id
    local = tmp_path / "lerobot" / "so101"
    shutil.copytree(shared_dataset("so101-record-test-v30"), local)
    record_deterministic_verdicts("lerobot/so101", [{"episode": 0, "success": True}])
    assert (local / "episode_labels.json").is_file()
    assert not (hub_labels_dir("lerobot/so101") / "episode_labels.json").exists()
    # 2. a relative OWNER/NAME whose OWNER is a directory here is a path that does not exist: no Hub
    (tmp_path / "data").mkdir()
    with pytest.raises(RootNotFoundError):
        record_deterministic_verdicts("data/x", [{"episode": 0, "success": True}])
    assert resolve_root("data/x") == ((tmp_path / "data" / "x").resolve(), None)
    # 3. a pathlib.Path is always a path
    with pytest.raises(RootNotFoundError):
        record_deterministic_verdicts(Path("nobody/x"), [{"episode": 0, "success": True}])
    # 4. a str repo id not in the cache, offline: the typed error naming the remedy, nothing created
    with pytest.raises(HubDatasetError, match="HF_HUB_OFFLINE.*hf download nobody/x --repo-type dataset"):
        record_deterministic_verdicts("nobody/x", [{"episode": 0, "success": True}])
    assert not (hub_cache / "nobody").exists() and not (tmp_path / "nobody").exists()


def test_a_local_copy_wins_over_a_same_named_directory_here(hub_cache, tmp_path):
    (tmp_path / "lerobot").mkdir()  # e.g. run from a lerobot checkout: ./lerobot exists, ./lerobot/so101 not
    root, hub = resolve_root("lerobot/so101")
    assert hub is not None and root == (hub_cache / "lerobot" / "so101").resolve()
    assert json.loads((root / "meta" / "info.json").read_text())["total_episodes"] == len(
        open_dataset("lerobot/so101").episodes
    )

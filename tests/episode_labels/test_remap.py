"""``episode_labels.remap`` against the fingerprints: after LeRobot's ``delete_episodes`` the
labels of equal-length episodes go stale, the right mapping carries them across and clears
the staleness, and a mapping the fingerprints contradict is refused with nothing written
(docs/sidecar-format.md, "`fingerprint`"; the mapping rule and the transaction over every
sidecar are tests/core/test_remap.py's)."""

from __future__ import annotations

import shutil

import pytest

from strands_robots import episode_labels as el
from strands_robots.errors import LabelValidationError
from strands_robots.fingerprint import metadata_digest
from tests.episode_labels.helpers import TOY_VERDICTS
from tests.storage.remap_helpers import delete_episodes_meta
from tests.synth import make_v3_dataset


def test_equal_length_episodes_are_stale_after_renumbering(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high")
    fingerprint = el.read_labels(toy_dataset)["episodes"]["1"]["fingerprint"]
    assert set(fingerprint) == {"length", "index_range", "tasks", "content", "meta"}
    assert fingerprint["meta"] == metadata_digest(toy_dataset)  # the metadata it was read from
    assert el.filter_episodes(toy_dataset) == [0, 1]
    delete_episodes_meta(toy_dataset, [0])  # LeRobot's delete_episodes([0]): 1 -> 0, 2 -> 1
    stale = el.stale_episodes(toy_dataset)
    assert sorted(stale) == [0, 1, 2]
    assert "content" in stale[0] and "no longer in the dataset" in stale[2]
    with pytest.warns(el.StaleLabelsWarning):
        assert el.filter_episodes(toy_dataset) == []
    # the right mapping carries the labels across and clears the staleness
    with pytest.raises(LabelValidationError, match="would drop the labels of 1 episode"):
        el.remap(toy_dataset, {"1": 0, "2": 1})  # episode 0 was deleted: that must be said
    assert el.remap(toy_dataset, {"1": 0, "2": 1}, allow_drop=True) == 2
    assert el.stale_episodes(toy_dataset) == {}
    assert el.filter_episodes(toy_dataset) == [0]
    assert el.deterministic_verdict(toy_dataset, 1)["success"] is False


def test_a_mapping_that_contradicts_the_fingerprints_is_refused(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    before = (toy_dataset / "episode_labels.json").read_bytes()
    with pytest.raises(LabelValidationError, match="contradicts the labels' fingerprints"):
        el.remap(toy_dataset, {"0": 1, "1": 0, "2": 2})
    assert (toy_dataset / "episode_labels.json").read_bytes() == before


def test_fingerprints_a_remap_moves_without_the_metadata_are_checked_again(tmp_path, monkeypatch):
    root = make_v3_dataset(tmp_path / "ds", [5, 7, 3, 9])
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(4)])
    el.flush(root)
    # the sidecar remapped where there is no meta/ (a labels-only copy: nothing to check the
    # mapping against), then put back beside the unchanged dataset
    backup = tmp_path / "backup"
    backup.mkdir()
    shutil.copyfile(root / "episode_labels.json", backup / "episode_labels.json")
    assert el.remap(backup, {0: 1, 1: 0, 2: 2, 3: 3}) == 4
    el.flush(backup)
    shutil.copyfile(backup / "episode_labels.json", root / "episode_labels.json")
    fingerprints = {k: r["fingerprint"] for k, r in el.read_labels(root)["episodes"].items()}
    assert "meta" not in fingerprints["0"] and "meta" not in fingerprints["1"]  # moved: no longer read for this key
    assert fingerprints["2"]["meta"] == fingerprints["3"]["meta"] == metadata_digest(root)
    expected = {0: "length was 7 when labelled, now 5", 1: "length was 5 when labelled, now 7"}
    assert el.stale_episodes(root) == expected

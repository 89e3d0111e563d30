"""Outcome labels and segmentations carry the dataset fingerprint and report stale records
after a renumbering edit, as episode labels do; a remap clears it."""

from __future__ import annotations

import pytest

from strands_robots.outcomes import get_outcome, set_outcome, stale_outcomes
from strands_robots.remap import mapping_after_delete, remap_dataset
from strands_robots.segments import get_segmentation, save_segmentation, stale_segmentations
from tests.storage.remap_helpers import delete_episodes_meta
from tests.synth import make_v3_dataset

LENGTHS = [60, 90, 120]


@pytest.fixture
def root(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", LENGTHS)
    for episode in (1, 2):
        set_outcome(root, episode, outcome="expert_success")
        save_segmentation(
            root,
            episode,
            [{"start": 0, "end": LENGTHS[episode], "label": "pick up the cube from the table"}],
            annotator="a",
        )
    return root


def test_records_store_the_fingerprint(root):
    from strands_robots.outcomes.store import OutcomeStore, outcomes_path

    stored = OutcomeStore.open(outcomes_path(root)).refresh().current(2)
    assert stored["fingerprint"]["length"] == 120 and stored["fingerprint"]["index_range"] == [150, 270]
    assert "fingerprint" not in get_outcome(root, 2)  # the public label keeps its fields
    assert get_segmentation(root, 1)["fingerprint"]["length"] == 90
    assert stale_outcomes(root) == {} and stale_segmentations(root) == {}


def test_a_renumbering_edit_makes_them_stale_and_a_remap_clears_it(root):
    delete_episodes_meta(root, [0])  # 1 -> 0 (90 frames), 2 -> 1 (120 frames)
    for stale in (stale_outcomes(root), stale_segmentations(root)):
        assert sorted(stale) == [1, 2]
        assert "length was 90" in stale[1] and "now 120" in stale[1]
        assert "no longer in the dataset" in stale[2]
    remap_dataset(root, mapping_after_delete(3, [0]))
    assert stale_outcomes(root) == {}
    assert stale_segmentations(root) == {}
    assert get_segmentation(root, 0)["fingerprint"]["index_range"] == [0, 90]  # refreshed by the remap

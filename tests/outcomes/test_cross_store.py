"""Regression tests from the spec audit: cross-store remap is all-or-nothing, an unset
evaluation_membership is not "none", a null hand is refused."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.errors import LabelValidationError
from strands_robots.outcomes import OutcomeValidationError, current_outcomes, set_outcome
from strands_robots.segments import get_segmentation, save_segmentation
from tests.synth import make_v3_dataset


@pytest.fixture
def mixed(tmp_path):
    """Episode 0 has 60 frames, episodes 1-3 have 90."""
    return make_v3_dataset(tmp_path / "ds", [60, 90, 90, 90])


def test_cli_remap_checks_every_store_before_writing_any(mixed):
    set_outcome(mixed, 3, outcome="expert_success")
    save_segmentation(mixed, 3, [{"start": 0, "end": 90, "label": "pick up the cube from the table"}], annotator="a")
    (mixed / "mapping.json").write_text('{"3": 0}')  # episode 0 has 60 frames: segments refuse it
    result = CliRunner().invoke(app, ["remap", str(mixed), str(mixed / "mapping.json")])
    assert result.exit_code != 0
    assert sorted(current_outcomes(mixed)) == [3]  # outcomes were not moved either
    assert get_segmentation(mixed, 3)["length"] == 90


def test_unset_membership_is_not_none(mixed):
    el.record_deterministic_verdicts(mixed, [{"episode": i, "success": True} for i in range(4)])
    for episode in range(4):
        el.annotate_episode(mixed, episode, quality="high")
    set_outcome(mixed, 1, outcome="expert_success", evaluation_membership="train")
    set_outcome(mixed, 2, outcome="expert_success")  # unset
    set_outcome(mixed, 3, outcome="expert_success", evaluation_membership="none")
    assert el.filter_episodes(mixed, evaluation_membership="none") == [3]
    assert el.filter_episodes(mixed, evaluation_membership="") == [2]
    assert el.filter_episodes(mixed, evaluation_membership=["train", ""]) == [1, 2]
    with pytest.raises(LabelValidationError, match=r"Did you mean: 'nnone' -> 'none'\?"):
        el.filter_episodes(mixed, evaluation_membership="nnone")


def test_a_null_hand_is_refused_not_stored_empty(mixed):
    with pytest.raises(OutcomeValidationError) as info:
        set_outcome(mixed, 1, outcome="expert_success", hand_actions={"left": None})
    assert "hand_actions.left" in str(info.value)
    assert set_outcome(mixed, 1, outcome="expert_success", hand_actions={"right": []})["hand_actions"] == {
        "left": [],
        "right": [],
    }

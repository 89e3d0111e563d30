"""The outcome store's remap: an appended ``remap`` line moves whole histories, an identity
remap appends nothing (the rules every store's remap shares are tests/storage/test_store_contract.py's)."""

from __future__ import annotations

import pytest

from strands_robots.outcomes import (
    OutcomeNotFoundError,
    current_outcomes,
    get_outcome,
    outcome_history,
    outcomes_path,
    remap,
    set_outcome,
)
from tests.processes import in_new_process


def test_remap_moves_history_and_drops_deleted_episodes(dataset):
    set_outcome(dataset, 3, outcome="failure")
    set_outcome(dataset, 3, outcome="mistake_and_recovery")
    set_outcome(dataset, 4, outcome="aborted")  # deleted by the edit
    set_outcome(dataset, 5, outcome="expert_success")
    before = outcomes_path(dataset).read_bytes()
    # delete_episodes removed episode 4: 5 -> 4 and 3 stays
    assert remap(dataset, {"3": 3, "5": 4, "6": 5}, allow_drop=True) == 2
    assert outcomes_path(dataset).read_bytes().startswith(before)  # appended, nothing rewritten
    assert get_outcome(dataset, 4)["outcome"] == "expert_success"
    assert get_outcome(dataset, 4)["episode_index"] == 4
    assert [h["outcome"] for h in outcome_history(dataset, 3)] == ["mistake_and_recovery", "failure"]
    with pytest.raises(OutcomeNotFoundError):
        get_outcome(dataset, 5)

    def a_fresh_process() -> tuple[dict[int, str], int]:  # replays the remap line
        current = {e: label["outcome"] for e, label in current_outcomes(dataset).items()}
        return current, set_outcome(dataset, 4, outcome="slow_success")["version"]

    assert in_new_process(a_fresh_process) == ({3: "mistake_and_recovery", 4: "expert_success"}, 2)


def test_identity_remap_writes_nothing(dataset):
    set_outcome(dataset, 3, outcome="failure")
    before = outcomes_path(dataset).read_bytes()
    assert remap(dataset, {3: 3, 4: 4}) == 1
    assert outcomes_path(dataset).read_bytes() == before
    assert remap(dataset, {}, labels_dir=dataset / "empty") == 0

"""Held-out splits by leakage group (docs/outcomes.md, "Held-out splits"), the recovery track and
verdicts ("Recovery track and verdicts")."""

from __future__ import annotations

import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.outcomes import (
    SplitImpossibleError,
    current_outcomes,
    get_outcome,
    outcome_history,
    outcomes_path,
    recovery_track,
    set_outcome,
    split_by_groups,
    verdicts_from_outcomes,
)
from strands_robots.outcomes.store import OutcomeStore

GROUPS = {
    3: {"location": "loc_8f2a", "operator": "op_5c1e"},
    4: {"location": "loc_8f2a"},
    5: {"location": "loc_b", "operator": "op_7"},
    6: {"operator": "op_7"},  # joined with 5 through the operator
    7: {"object": "obj_set_31"},
    8: {"object": "obj_set_31", "mechanism": "dishwasher_pull_rack_v2"},
    9: {"location": "loc_c"},
    10: {"location": "loc_d"},
    11: {"mechanism": "m1"},
    12: {"mechanism": "m1", "environment_family": "kitchen_galley"},
}
COMPONENTS = [{3, 4}, {5, 6}, {7, 8}, {9}, {10}, {11, 12}]


@pytest.fixture
def grouped(dataset):
    for episode, groups in GROUPS.items():
        set_outcome(dataset, episode, outcome="expert_success", quality=4, leakage_groups=groups)
    return dataset


def leaked(root, keys=("location", "object", "mechanism", "operator", "environment_family")):
    """(key, value) pairs present in both train and held_out_eval."""
    sides: dict[str, set] = {"train": set(), "held_out_eval": set()}
    for label in current_outcomes(root).values():
        side = label["evaluation_membership"]
        if side in sides:
            sides[side] |= {(k, v) for k, v in label["leakage_groups"].items() if k in keys}
    return sides["train"] & sides["held_out_eval"]


@pytest.mark.parametrize("count", [1, 3, 5, 9])
def test_exact_count_without_leakage(grouped, count):
    report = split_by_groups(grouped, held_out=count, seed=0)
    assert report["achieved"] == count == len(report["held_out_eval"])
    assert report["counts"] == {"train": 10 - count, "held_out_eval": count}
    assert leaked(grouped) == set()
    held = set(report["held_out_eval"])
    assert all(c <= held or not (c & held) for c in COMPONENTS)  # groups are never cut
    current = current_outcomes(grouped)
    assert {e for e, label in current.items() if label["evaluation_membership"] == "held_out_eval"} == held
    assert report["components"] == 6 and report["largest_component"] == 2


def test_fraction_gives_the_nearest_achievable_count_and_reports_it(grouped):
    report = split_by_groups(grouped, held_out=0.3, seed=1)
    assert report["requested"] == 3 and report["requested_fraction"] == 0.3
    assert report["achieved"] == 3 and leaked(grouped) == set()


def test_split_keeps_every_other_field_and_writes_a_version(grouped):
    report = split_by_groups(grouped, held_out=2, seed=0, labeled_by="splitter")
    assert report["written"] == 10
    label = get_outcome(grouped, 3)
    assert label["version"] == 2 and label["quality"] == 4 and label["leakage_groups"] == GROUPS[3]
    assert label["labeled_by"] == "splitter"
    again = split_by_groups(grouped, held_out=2, seed=0)
    assert again["written"] == 0 and again["held_out_eval"] == report["held_out_eval"]


def test_a_split_version_keeps_the_fingerprint_of_the_recording_it_describes(grouped):
    split_by_groups(grouped, held_out=2, seed=0)
    first, second = OutcomeStore.open(outcomes_path(grouped)).refresh().versions[3]
    assert second["version"] == 2 and second["fingerprint"] == first["fingerprint"]
    assert second["fingerprint"]["length"] == 90  # so stale_outcomes still checks it


def test_same_seed_same_split_other_seeds_differ(grouped):
    splits = [tuple(split_by_groups(grouped, held_out=4, seed=s, dry_run=True)["held_out_eval"]) for s in range(6)]
    assert splits[0] == tuple(split_by_groups(grouped, held_out=4, seed=0, dry_run=True)["held_out_eval"])
    assert len(set(splits)) > 1


def test_dry_run_writes_nothing(grouped):
    report = split_by_groups(grouped, held_out=3, dry_run=True)
    assert report["written"] == 0 and len(report["held_out_eval"]) == 3
    assert all(label["version"] == 1 for label in current_outcomes(grouped).values())


def test_chosen_group_keys_only(grouped):
    # by mechanism only, 7 and 8 are no longer joined through their object; 3..6, 9, 10 lack it
    with pytest.raises(SplitImpossibleError, match="never by random episode"):
        split_by_groups(grouped, held_out=2, group_keys=("mechanism",))
    report = split_by_groups(grouped, held_out=2, group_keys=("location", "operator", "object", "mechanism"))
    assert leaked(grouped, ("location", "operator", "object", "mechanism")) == set()
    assert report["group_keys"] == ["location", "operator", "object", "mechanism"]


def test_none_membership_is_left_out(grouped):
    set_outcome(grouped, 9, outcome="expert_success", evaluation_membership="none", leakage_groups=GROUPS[9])
    report = split_by_groups(grouped, held_out=2)
    assert report["excluded_none"] == [9] and 9 not in report["train"] + report["held_out_eval"]
    assert get_outcome(grouped, 9)["evaluation_membership"] == "none"


def test_impossible_exact_count_fails_loudly(dataset):
    for episode in range(3, 13):  # two groups of 5 episodes
        set_outcome(dataset, episode, outcome="failure", leakage_groups={"location": "a" if episode < 8 else "b"})
    with pytest.raises(SplitImpossibleError) as info:
        split_by_groups(dataset, held_out=3)
    assert "exactly 3 of 10" in str(info.value) and "nearest possible counts are 5 (" in str(info.value)
    assert all(len(outcome_history(dataset, e)) == 1 for e in range(3, 13))
    with pytest.raises(SplitImpossibleError, match="can hold out 5 of 10"):
        split_by_groups(dataset, held_out=0.1)  # 50 % is the nearest: never silently
    assert split_by_groups(dataset, held_out=0.3, tolerance=0.25)["achieved"] == 5  # the nearest possible count


def test_one_group_joining_everything_fails(grouped):
    for episode in GROUPS:
        set_outcome(
            grouped,
            episode,
            outcome="expert_success",
            leakage_groups={**GROUPS[episode], "environment_family": "kitchen_galley"},
        )
    with pytest.raises(SplitImpossibleError, match="one group"):
        split_by_groups(grouped, held_out=0.2)
    assert split_by_groups(grouped, held_out=0.2, group_keys=("location", "object", "mechanism", "operator"))


@pytest.mark.parametrize("held_out", [0, 10, 11, -1, 0.0, 1.0, 1.5, True, "2"])
def test_nothing_or_everything_is_refused(grouped, held_out):
    with pytest.raises(LabelValidationError):
        split_by_groups(grouped, held_out=held_out)


@pytest.mark.parametrize(
    ("held_out", "shown"),
    [
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (0.0, "0.0"),
        (1.0, "1.0"),
        (-0.2, "-0.2"),
        (True, "True"),
        ("0.2", "'0.2'"),
        (None, "None"),
        (0, "0"),
        (10**400, "a huge integer"),
    ],
)
def test_bad_held_out_is_refused_naming_both_forms_and_nothing_is_written(grouped, held_out, shown):
    before = {e: len(outcome_history(grouped, e)) for e in GROUPS}
    with pytest.raises(LabelValidationError) as caught:
        split_by_groups(grouped, held_out=held_out)
    assert str(caught.value) == (
        f"held_out={shown} must be an episode count (an int, at least 1) or a fraction strictly between 0 and 1 "
        "(a float); pass e.g. held_out=12 or held_out=0.2."
    )
    assert {e: len(outcome_history(grouped, e)) for e in GROUPS} == before


def test_numpy_counts_and_shares_are_taken_as_their_value(grouped):
    np = pytest.importorskip("numpy")
    by_int = split_by_groups(grouped, held_out=2, seed=0, dry_run=True)
    assert split_by_groups(grouped, held_out=np.int64(2), seed=0, dry_run=True) == by_int
    by_share = split_by_groups(grouped, held_out=0.25, seed=3, dry_run=True)
    assert split_by_groups(grouped, held_out=np.float32(0.25), seed=3, dry_run=True) == by_share
    assert by_share["requested_fraction"] == 0.25


@pytest.mark.parametrize("tolerance", [float("nan"), -0.01, 1.5, True, "0.05", None])
def test_bad_tolerance_is_refused_before_anything_is_read(grouped, tolerance):
    with pytest.raises(
        LabelValidationError, match=r"^tolerance must be a finite number from 0 to 1, got .*; pass how far"
    ):
        split_by_groups(grouped, held_out=0.2, tolerance=tolerance)
    assert all(len(outcome_history(grouped, e)) == 1 for e in GROUPS)


def test_bad_group_keys(grouped):
    for keys in ((), ("room",), ("location", "location")):
        with pytest.raises(LabelValidationError):
            split_by_groups(grouped, held_out=2, group_keys=keys)


# -- recovery track and verdicts ------------------------------------------------------------------------

TRACK = {
    3: "mistake_and_recovery",
    4: "intervention",
    5: "unsafe",
    6: "expert_success",
    7: "failure",
    8: "partial_success",
    9: "aborted",
    10: "novel_strategy",
}


@pytest.fixture
def outcomes(dataset):
    for episode, outcome in TRACK.items():
        set_outcome(dataset, episode, outcome=outcome, progress=0.5 if outcome == "partial_success" else None)
    return dataset


def test_recovery_track_is_mistake_and_recovery_or_intervention_not_unsafe(outcomes):
    assert recovery_track(outcomes) == [3, 4]
    set_outcome(outcomes, 4, outcome="unsafe")
    assert recovery_track(outcomes) == [3]


def test_verdicts_from_outcomes_mapping(outcomes):
    verdicts = {v["episode"]: v for v in verdicts_from_outcomes(outcomes)}
    assert sorted(verdicts) == sorted(TRACK)
    success = {e for e, v in verdicts.items() if v["success"]}
    failure = {e for e, v in verdicts.items() if v["failure"]}
    assert success == {3, 6, 10}  # mistake_and_recovery completes the task
    assert failure == {5, 7, 9}  # unsafe, failure, aborted
    assert verdicts[6] == {
        "episode": 6,
        "success": True,
        "failure": False,
        "steps": 90,
        "cumulative_reward": 1.0,
        "seed": None,
    }
    assert verdicts[8]["cumulative_reward"] == 0.5 and verdicts[8]["failure"] is False
    assert verdicts[4]["success"] is False and verdicts[4]["failure"] is False


def test_record_verdicts_from_outcomes_writes_the_deterministic_block(outcomes):
    from strands_robots.episode_labels import deterministic_verdict, read_labels
    from strands_robots.outcomes import record_verdicts_from_outcomes

    record_verdicts_from_outcomes(outcomes)
    assert read_labels(outcomes)["benchmark"] == "outcomes"
    assert deterministic_verdict(outcomes, 3)["success"] is True
    assert deterministic_verdict(outcomes, 7)["failure"] is True
    assert deterministic_verdict(outcomes, 8)["cumulative_reward"] == 0.5
    assert deterministic_verdict(outcomes, 6)["steps"] == 90


def test_training_config_asks_for_judged_good_train_episodes(grouped):
    """filter_episodes(..., outcomes=, evaluation_membership=) reads current_outcomes.

    See docs/outcomes.md, "Reading and filtering".
    """
    from strands_robots.episode_labels import annotate_episode, filter_episodes
    from strands_robots.outcomes import record_verdicts_from_outcomes

    set_outcome(grouped, 12, outcome="failure", leakage_groups=GROUPS[12])
    report = split_by_groups(grouped, held_out=4, seed=0)
    record_verdicts_from_outcomes(grouped)
    for episode in GROUPS:
        annotate_episode(grouped, episode, quality="high", model="judge-vlm")
    kept = filter_episodes(grouped, outcomes=["expert_success", "slow_success"], evaluation_membership="train")
    assert kept == [e for e in report["train"] if e != 12]

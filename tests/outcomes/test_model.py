"""Every rule of docs/outcomes.md, "The label", with values from the example labels of the outcomes
format (``DOC_LABEL`` and ``DOC_WRITE`` in ``conftest.py``); ``set_outcome`` applies the same
rules (a null hand is refused, never stored empty)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.outcomes import set_outcome
from strands_robots.outcomes.model import (
    OUTCOMES,
    OutcomeValidationError,
    validate_label,
)


def violations(fields, **kw) -> dict[str, str]:
    """path -> message of every violation (fails when the label is valid)."""
    with pytest.raises(OutcomeValidationError) as info:
        validate_label(fields, **kw)
    return {v.path: v.message for v in info.value.violations}


# -- outcome, progress, quality, speed ------------------------------------------------------------


def test_document_example_is_valid_and_normalised(doc_label):
    label = validate_label(doc_label, duration=20.0)
    assert label["outcome"] == "mistake_and_recovery"
    assert label["subtasks"] == doc_label["subtasks"]
    assert label["hand_actions"] == doc_label["hand_actions"]
    assert label["leakage_groups"]["mechanism"] == "dishwasher_pull_rack_v2"


def test_outcome_is_required_and_from_the_list():
    assert len(OUTCOMES) == 10
    for value in OUTCOMES:
        assert validate_label({"outcome": value})["outcome"] == value
    assert "outcome" in violations({})
    assert "outcome" in violations({"outcome": "success"})
    assert "outcome" in violations({"outcome": ""})


@pytest.mark.parametrize("value", [0, 0.4, 1.0, None])
def test_progress_from_0_to_1_or_null(value):
    assert validate_label({"outcome": "failure", "progress": value})["progress"] == value


@pytest.mark.parametrize("value", [1.2, -0.1, math.nan, math.inf, "0.4", True])
def test_progress_out_of_range_is_rejected(value):
    assert "progress" in violations({"outcome": "failure", "progress": value})


def test_quality_and_speed_are_integers_1_to_5_or_null():
    label = validate_label({"outcome": "mistake_and_recovery", "quality": 4, "speed": 3})
    assert (label["quality"], label["speed"]) == (4, 3)
    assert validate_label({"outcome": "failure", "quality": np.int64(5), "speed": None})["quality"] == 5
    for bad in (0, 6, 3.5, True, "4"):
        found = violations({"outcome": "failure", "quality": bad, "speed": bad})
        assert {"quality", "speed"} <= set(found)


# -- subtasks -------------------------------------------------------------------------------------


def test_subtask_label_is_1_to_500_characters():
    ok = {"label": "x" * 500, "start_ts": 0.0, "end_ts": 6.2, "outcome": None}
    assert validate_label({"outcome": "failure", "subtasks": [ok]})["subtasks"][0]["label"] == "x" * 500
    found = violations(
        {
            "outcome": "failure",
            "subtasks": [
                {"label": "", "start_ts": 0.0, "end_ts": 6.2},
                {"label": "x" * 501, "start_ts": 6.2, "end_ts": 9.1},
                {"start_ts": 9.1, "end_ts": 10.4},
            ],
        }
    )
    assert {"subtasks[0].label", "subtasks[1].label", "subtasks[2].label"} <= set(found)


@pytest.mark.parametrize("bad", [-0.1, math.inf, math.nan, "0.0", None, True])
def test_subtask_timestamps_finite_and_non_negative(bad):
    found = violations(
        {"outcome": "failure", "subtasks": [{"label": "Pull out the lower rack", "start_ts": bad, "end_ts": 6.2}]}
    )
    assert "subtasks[0].start_ts" in found


def test_subtask_end_must_be_at_least_start():
    found = violations(
        {"outcome": "failure", "subtasks": [{"label": "Pull out the lower rack", "start_ts": 6.2, "end_ts": 0.0}]}
    )
    assert "before start_ts" in found["subtasks[0].end_ts"]
    zero = validate_label(
        {"outcome": "failure", "subtasks": [{"label": "touch", "start_ts": 6.2, "end_ts": 6.2, "outcome": None}]}
    )
    assert zero["subtasks"][0]["end_ts"] == 6.2


def test_subtask_outcome_from_the_list_or_null(doc_label):
    doc_label["subtasks"][1]["outcome"] = None
    assert validate_label(doc_label)["subtasks"][1]["outcome"] is None
    doc_label["subtasks"][2]["outcome"] = "recovered"
    assert "subtasks[2].outcome" in violations(doc_label)


def test_subtask_unknown_key_is_rejected(doc_label):
    doc_label["subtasks"][0]["note"] = "x"
    assert "subtasks[0].note" in violations(doc_label)


def test_at_most_256_subtasks():
    items = [{"label": f"step {i}", "start_ts": float(i), "end_ts": float(i + 1), "outcome": None} for i in range(257)]
    assert len(validate_label({"outcome": "failure", "subtasks": items[:256]})["subtasks"]) == 256
    assert "256" in violations({"outcome": "failure", "subtasks": items})["subtasks"]


def test_subtasks_sorted_by_start(doc_label):
    doc_label["subtasks"] = [doc_label["subtasks"][2], doc_label["subtasks"][1]]  # 6.2 then 0.0
    found = violations(doc_label)
    assert "sorted by start_ts" in found["subtasks[1].start_ts"]


def test_nested_and_touching_subtasks_are_accepted(doc_label):
    # the document's phase [0, 19.8] encloses [0, 6.2] and [6.2, 19.8], which touch at 6.2
    assert len(validate_label(doc_label)["subtasks"]) == 3


def test_partial_overlap_is_rejected():
    found = violations(
        {
            "outcome": "mistake_and_recovery",
            "subtasks": [
                {"label": "Pull out the lower rack", "start_ts": 0.0, "end_ts": 9.1},
                {"label": "Place the wet plate in a free slot", "start_ts": 6.2, "end_ts": 19.8},
            ],
        }
    )
    assert "partially overlaps subtasks[0]" in found["subtasks[1]"]


def test_equal_starts_list_the_enclosing_one_first(doc_label):
    doc_label["subtasks"][0], doc_label["subtasks"][1] = doc_label["subtasks"][1], doc_label["subtasks"][0]
    found = violations(doc_label)
    assert "enclosing one first" in found["subtasks[1]"]


def test_nesting_after_a_closed_phase_is_checked_against_the_right_parent():
    subtasks = [
        {"label": "phase A", "start_ts": 0.0, "end_ts": 10.0},
        {"label": "step A1", "start_ts": 0.0, "end_ts": 4.0},
        {"label": "step A2", "start_ts": 4.0, "end_ts": 10.0},
        {"label": "phase B", "start_ts": 10.0, "end_ts": 19.8},
        {"label": "step B1", "start_ts": 12.0, "end_ts": 19.8},
    ]
    assert len(validate_label({"outcome": "slow_success", "subtasks": subtasks})["subtasks"]) == 5
    subtasks[4]["end_ts"] = 20.5  # leaks out of phase B
    assert (
        "partially overlaps subtasks[3]" in violations({"outcome": "slow_success", "subtasks": subtasks})["subtasks[4]"]
    )


# -- hand actions ---------------------------------------------------------------------------------


def test_only_left_and_right_and_an_omitted_hand_is_an_empty_list(doc_label):
    del doc_label["hand_actions"]["left"]
    label = validate_label(doc_label)
    assert label["hand_actions"]["left"] == []
    assert len(label["hand_actions"]["right"]) == 4
    assert validate_label({"outcome": "failure"})["hand_actions"] == {"left": [], "right": []}
    doc_label["hand_actions"]["both"] = []
    assert "hand_actions.both" in violations(doc_label)


def test_a_null_hand_is_refused_not_stored_empty(dataset):
    with pytest.raises(OutcomeValidationError) as info:
        set_outcome(dataset, 1, outcome="expert_success", hand_actions={"left": None})
    assert "hand_actions.left" in str(info.value)
    assert set_outcome(dataset, 1, outcome="expert_success", hand_actions={"right": []})["hand_actions"] == {
        "left": [],
        "right": [],
    }


def test_hand_action_fields(doc_label):
    right = doc_label["hand_actions"]["right"]
    right[0]["action"] = ""
    right[1]["object"] = "x" * 256
    right[2]["verb"] = "x" * 65
    right[3]["contact"] = "true"
    found = violations(doc_label)
    assert {
        "hand_actions.right[0].action",
        "hand_actions.right[1].object",
        "hand_actions.right[2].verb",
        "hand_actions.right[3].contact",
    } <= set(found)


@pytest.mark.parametrize("bad", ["true", 1, 0, "false"])
def test_contact_accepts_json_booleans_only(doc_label, bad):
    doc_label["hand_actions"]["left"][0]["contact"] = bad
    assert "hand_actions.left[0].contact" in violations(doc_label)


def test_contact_true_false_null(doc_label):
    doc_label["hand_actions"]["left"][0]["contact"] = None
    label = validate_label(doc_label)
    assert [a["contact"] for a in label["hand_actions"]["left"]] == [None, True]
    assert [a["contact"] for a in label["hand_actions"]["right"]] == [True, False, True, True]


def test_empty_object_or_verb_stored_as_null_and_every_item_has_six_fields():
    label = validate_label(
        {
            "outcome": "mistake_and_recovery",
            "hand_actions": {
                "right": [
                    {"start_ts": 9.1, "end_ts": 10.4, "action": "the plate slips out of the grasp", "verb": ""},
                    {"start_ts": 10.4, "end_ts": 14.7, "action": "regrasping the plate by its rim", "object": ""},
                ]
            },
        }
    )
    for item in label["hand_actions"]["right"]:
        assert set(item) == {"start_ts", "end_ts", "action", "object", "verb", "contact"}
        assert item["object"] is None and item["verb"] is None and item["contact"] is None


def test_one_hand_sorted_and_not_overlapping_touching_allowed(doc_label):
    assert validate_label(doc_label)["hand_actions"]["right"][1]["start_ts"] == 9.1  # touches 9.1
    doc_label["hand_actions"]["right"][1]["start_ts"] = 9.0  # overlaps [6.2, 9.1]
    assert "before the end 9.1" in violations(doc_label)["hand_actions.right[1].start_ts"]


@pytest.mark.parametrize("bad", [-0.1, math.inf, math.nan, "6.2", None])
def test_hand_action_timestamps_finite_non_negative_and_ordered(doc_label, bad):
    doc_label["hand_actions"]["left"][0]["start_ts"] = bad
    doc_label["hand_actions"]["right"][0]["end_ts"] = 6.0  # before its start 6.2
    found = violations(doc_label)
    assert "hand_actions.left[0].start_ts" in found
    assert "before start_ts" in found["hand_actions.right[0].end_ts"]


def test_hands_may_overlap_each_other(doc_label):
    # left holds the rack over [6.2, 19.8] while right carries, slips, regrasps and places
    label = validate_label(doc_label)
    assert label["hand_actions"]["left"][1]["end_ts"] == 19.8


def test_at_most_3600_actions_per_hand():
    items = [{"start_ts": float(i), "end_ts": float(i + 1), "action": "hold"} for i in range(3601)]
    ok = validate_label({"outcome": "expert_success", "hand_actions": {"left": items[:3600], "right": items[:3600]}})
    assert len(ok["hand_actions"]["left"]) == 3600
    found = violations({"outcome": "expert_success", "hand_actions": {"left": items}})
    assert "3600" in found["hand_actions.left"]


# -- duration -------------------------------------------------------------------------------------


def test_end_ts_at_most_duration_plus_one_second(doc_write):
    # the document's write example ends at 21.5 s: allowed for a 22.0 s episode and at 20.5 s
    assert validate_label(doc_write, duration=22.0)["subtasks"][0]["end_ts"] == 21.5
    assert validate_label(doc_write, duration=20.5)["subtasks"][0]["end_ts"] == 21.5
    found = violations(doc_write, duration=20.0)
    assert "past the episode's duration 20 s + 1 s" in found["subtasks[0].end_ts"]
    assert validate_label(doc_write, duration=None)  # unknown duration: no check


def test_hand_action_end_ts_is_checked_against_the_duration(doc_label):
    found = violations(doc_label, duration=18.7)  # 19.8 > 18.7 + 1
    assert {
        "subtasks[0].end_ts",
        "subtasks[2].end_ts",
        "hand_actions.left[1].end_ts",
        "hand_actions.right[3].end_ts",
    } <= set(found)
    assert validate_label(doc_label, duration=18.8)


# -- tags, autonomy, model version, membership ------------------------------------------------------


def test_free_text_tags_at_most_128():
    label = validate_label({"outcome": "failure", "mistake_type": "slip_during_place", "failure_stage": "place"})
    assert (label["mistake_type"], label["recovery_type"], label["failure_stage"]) == ("slip_during_place", "", "place")
    found = violations(
        {"outcome": "failure", "mistake_type": "x" * 129, "recovery_type": "x" * 129, "failure_stage": 3}
    )
    assert {"mistake_type", "recovery_type", "failure_stage"} <= set(found)
    assert validate_label({"outcome": "failure", "recovery_type": "x" * 128})["recovery_type"] == "x" * 128


def test_autonomy_level_values_or_empty():
    for value in ("human_demonstration", "teleoperation", "autonomous", "shared_autonomy", "intervention", ""):
        assert validate_label({"outcome": "failure", "autonomy_level": value})["autonomy_level"] == value
    assert validate_label({"outcome": "failure"})["autonomy_level"] == ""
    assert "autonomy_level" in violations({"outcome": "failure", "autonomy_level": "remote"})


def test_model_version_at_most_255():
    assert validate_label({"outcome": "failure", "model_version": "your-policy@2026-09-20"})["model_version"] == (
        "your-policy@2026-09-20"
    )
    assert "model_version" in violations({"outcome": "failure", "model_version": "v" * 256})


def test_evaluation_membership_values_or_empty():
    for value in ("train", "held_out_eval", "none", ""):
        assert validate_label({"outcome": "failure", "evaluation_membership": value})["evaluation_membership"] == value
    assert "evaluation_membership" in violations({"outcome": "failure", "evaluation_membership": "test"})


# -- leakage groups -------------------------------------------------------------------------------


def test_leakage_groups_keys_and_ids(doc_label):
    assert validate_label(doc_label)["leakage_groups"] == doc_label["leakage_groups"]
    doc_label["leakage_groups"]["room"] = "kitchen_1"
    doc_label["leakage_groups"]["operator"] = "o" * 256
    found = violations(doc_label)
    assert "unknown key" in found["leakage_groups.room"]
    assert "leakage_groups.operator" in found
    assert validate_label({"outcome": "failure", "leakage_groups": {"location": "l" * 255}})


# -- source, metadata, confidence -----------------------------------------------------------------


def test_source_default_human_and_values():
    assert validate_label({"outcome": "failure"})["source"] == "human"
    for value in ("human", "model", "imported"):
        assert validate_label({"outcome": "failure", "source": value})["source"] == value
    assert "source" in violations({"outcome": "failure", "source": "robot"})


def test_source_metadata_of_the_document(doc_write):
    label = validate_label(doc_write)
    assert label["source_metadata"] == {"importer": "your-eval-harness", "run_id": "r42", "task": "load_dishwasher"}
    ok = validate_label({"outcome": "failure", "source_metadata": {"attempt": 3, "score": 0.5, "dry_run": False}})
    assert ok["source_metadata"] == {"attempt": 3, "score": 0.5, "dry_run": False}


def test_source_metadata_rules():
    meta = {
        "log_path": "x" * 513,
        "nested": {"a": 1},
        "list": [1],
        "missing": None,
        "nan": math.nan,
        "k" * 65: "v",
        "": "v",
    }
    found = violations({"outcome": "failure", "source_metadata": meta})
    assert {
        "source_metadata.log_path",
        "source_metadata.nested",
        "source_metadata.list",
        "source_metadata.missing",
        "source_metadata.nan",
        f"source_metadata.{'k' * 65}",
        "source_metadata.",
    } <= set(found)
    too_many = {f"key{i}": i for i in range(21)}
    assert "at most 20" in violations({"outcome": "failure", "source_metadata": too_many})["source_metadata"]
    assert validate_label({"outcome": "failure", "source_metadata": dict(list(too_many.items())[:20])})


def test_confidence_only_with_source_model():
    assert validate_label({"outcome": "failure", "source": "model", "confidence": 0.87})["confidence"] == 0.87
    assert "only allowed when source is" in violations({"outcome": "failure", "confidence": 0.87})["confidence"]
    assert "confidence" in violations({"outcome": "failure", "source": "imported", "confidence": 0.5})
    assert "confidence" in violations({"outcome": "failure", "source": "model", "confidence": 1.5})
    assert validate_label({"outcome": "failure", "source": "human", "confidence": None})["confidence"] is None


# -- the one error ----------------------------------------------------------------------------------


def test_one_error_lists_every_violation_with_its_path(doc_label):
    doc_label["quality"] = 6
    doc_label["subtasks"][2]["end_ts"] = 5.0
    doc_label["hand_actions"]["left"][0]["contact"] = 1
    doc_label["leakage_groups"]["room"] = "r1"
    doc_label["confidence"] = 0.9
    with pytest.raises(OutcomeValidationError) as info:
        validate_label(copy.deepcopy(doc_label))
    err = info.value
    assert isinstance(err, LabelValidationError) and isinstance(err, ValueError)
    assert set(err.paths) >= {
        "quality",
        "subtasks[2].end_ts",
        "hand_actions.left[0].contact",
        "leakage_groups.room",
        "confidence",
    }
    text = str(err)
    assert "nothing was stored" in text
    for path in err.paths:
        assert f"- {path}:" in text


def test_read_only_and_unknown_fields_are_rejected():
    found = violations({"outcome": "failure", "version": 3, "uid": "u", "colour": "red"})
    assert "read-only" in found["version"] and "read-only" in found["uid"]
    assert "unknown field" in found["colour"]

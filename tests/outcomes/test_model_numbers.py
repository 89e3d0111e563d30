"""Outcome rules checked with values the schema does not show: huge integers and the
model version of a human demonstration (docs/outcomes.md, "Numbers" and "Human
demonstrations have no model version")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.outcomes import OutcomeNotFoundError, get_outcome, set_outcome
from strands_robots.outcomes.model import OutcomeValidationError, validate_label

HUGE = 10**400
GIANT = 7 * 10**5000  # past the 4300-digit int -> str limit: its repr() raises ValueError


def paths(fields) -> list[str]:
    with pytest.raises(OutcomeValidationError) as info:
        validate_label(fields, duration=12.5)
    return info.value.paths


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"progress": HUGE}, ["progress"]),
        ({"progress": -HUGE}, ["progress"]),
        ({"source": "model", "confidence": HUGE}, ["confidence"]),
        ({"subtasks": [{"label": "wipe the tray", "start_ts": 0, "end_ts": HUGE}]}, ["subtasks[0].end_ts"]),
        ({"subtasks": [{"label": "wipe the tray", "start_ts": GIANT, "end_ts": 3}]}, ["subtasks[0].start_ts"]),
        (
            {"hand_actions": {"right": [{"start_ts": HUGE, "end_ts": HUGE + 1, "action": "hold the lid"}]}},
            ["hand_actions.right[0].start_ts", "hand_actions.right[0].end_ts"],
        ),
        (
            {"source": "imported", "source_metadata": {"run": HUGE, "seed": GIANT}},
            ["source_metadata.run", "source_metadata.seed"],
        ),
    ],
)
def test_huge_integers_are_violations_not_overflow(fields, expected):
    assert paths({"outcome": "aborted", **fields}) == expected


def test_huge_integer_message_names_its_size():
    with pytest.raises(OutcomeValidationError) as info:
        validate_label({"outcome": "aborted", "source_metadata": {"seed": GIANT}})
    assert "more than 5000 digits (too large for a float)" in str(info.value)


def test_large_but_float_sized_integers_still_pass():
    label = validate_label(
        {"outcome": "slow_success", "source": "imported", "source_metadata": {"rows": 2**62, "epoch": 10**300}}
    )
    assert label["source_metadata"] == {"rows": 2**62, "epoch": 10**300}


def test_cli_reports_huge_integers_without_a_traceback(dataset, tmp_path):
    subtasks = tmp_path / "subtasks.json"
    subtasks.write_text('[{"label": "open the drawer", "start_ts": 0, "end_ts": 1' + "0" * 400 + "}]")
    proc = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "outcome", "set", str(dataset), "4",
         "--outcome", "failure", "--subtasks-file", str(subtasks),
         "--source", "imported", "--source-metadata", json.dumps({"shard": HUGE})],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "OverflowError" not in proc.stderr
    assert "subtasks[0].end_ts" in proc.stderr and "source_metadata.shard" in proc.stderr
    with pytest.raises(OutcomeNotFoundError):
        get_outcome(dataset, 4)


def test_model_version_on_a_human_demonstration_is_refused(dataset):
    fields = {"outcome": "slow_success", "autonomy_level": "human_demonstration", "model_version": "act-pusht@3"}
    with pytest.raises(OutcomeValidationError) as info:
        set_outcome(dataset, 5, **fields)
    assert info.value.paths == ["model_version"]
    assert "human demonstration" in str(info.value)
    with pytest.raises(OutcomeNotFoundError):
        get_outcome(dataset, 5)
    # the same version under a policy's autonomy level, or a demonstration without one, is stored
    assert set_outcome(dataset, 5, **{**fields, "autonomy_level": "shared_autonomy"})["model_version"] == "act-pusht@3"
    assert set_outcome(dataset, 6, outcome="slow_success", autonomy_level="human_demonstration")["model_version"] == ""


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-0.1, "must be 0 or greater (seconds from the episode start), got -0.1"),
        (float("nan"), "must be a finite number of seconds, got nan"),
        (float("inf"), "must be a finite number of seconds, got inf"),
        (True, "must be a finite number of seconds, got True"),
        ("0.5", "must be a finite number of seconds, got '0.5'"),
    ],
)
def test_timestamps_follow_the_seconds_limits_of_every_entry_point(value, message):
    from strands_robots.segments.convert import check_seconds

    with pytest.raises(OutcomeValidationError) as info:
        validate_label({"outcome": "aborted", "subtasks": [{"label": "wipe the tray", "start_ts": value, "end_ts": 3}]})
    assert info.value.violations[0].path == "subtasks[0].start_ts" and message in str(info.value)
    with pytest.raises(LabelValidationError):  # the same value is refused as a seconds argument
        check_seconds(value, "smooth_s")


@pytest.mark.parametrize("value", [-0.01, 1.01, float("nan"), True, "0.5"])
def test_progress_and_confidence_follow_the_unit_fraction_limits(value):
    with pytest.raises(OutcomeValidationError) as info:
        validate_label({"outcome": "aborted", "source": "model", "progress": value, "confidence": value})
    assert info.value.paths == ["progress", "confidence"]
    assert validate_label({"outcome": "aborted", "progress": 0, "source": "model", "confidence": 1})["progress"] == 0.0

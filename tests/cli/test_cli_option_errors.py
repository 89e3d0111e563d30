"""Option values and usage lines as a new user sees them (README.md, "Command line"): plain words, the
remedy, never the argument parser's internals. Run through the real console script."""

from __future__ import annotations

import getpass
import json
import subprocess
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.outcomes import set_outcome
from tests.cli.test_cli_user_facing import cli as run_cli


def cli(*args: object) -> subprocess.CompletedProcess:
    return run_cli(*args, columns=200)


def review(root, episode):
    return el.read_labels(root)["episodes"][str(episode)].get("review")


@pytest.fixture
def judged(toy_dataset):
    el.record_deterministic_verdicts(
        toy_dataset,
        [{"episode": 0, "success": True}, {"episode": 1, "success": True}, {"episode": 2, "success": False}],
    )
    el.annotate_episode(toy_dataset, 0, quality="high")
    el.annotate_episode(toy_dataset, 1, quality="low", success_opinion=False)
    el.annotate_episode(toy_dataset, 2, quality="high")
    el.flush(toy_dataset)
    return toy_dataset


def test_resolve_defaults_the_reviewer_to_the_login_name_as_the_page_does(judged):
    done = cli("resolve", judged, 1, "--decision", "uphold_verdict")
    assert done.returncode == 0, done.stderr
    assert f"episode 1: uphold_verdict by {getpass.getuser()}" in done.stdout
    assert review(judged, 1)["reviewer"] == getpass.getuser()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--decision", "uphold_verdict", "--quality", "High"), "Did you mean: 'High' -> 'high'?"),
        (("--decision", "Uphold_Verdict"), "Did you mean: 'Uphold_Verdict' -> 'uphold_verdict'?"),
    ],
)
def test_a_value_in_the_wrong_case_gets_did_you_mean(judged, args, expected):
    done = cli("resolve", judged, 1, *args)
    assert done.returncode == 2
    assert expected in done.stderr
    assert "Value error" not in done.stderr and "{ROOT}" not in done.stderr and "{EPISODE}" not in done.stderr
    assert "resolve [OPTIONS] ROOT EPISODE" in done.stderr
    assert review(judged, 1) is None  # nothing stored


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("judge", "{root}", "--workers", "x"),
            "Invalid value for '--workers': not a whole number: type one as digits",
        ),
        (("report", "{root}", "--max-episodes", "1.5"), "Invalid value for '--max-episodes': not a whole number"),
        (("segments", "validate", "{root}", "--threshold", "-3"), "--threshold must be a finite number greater than 0"),
        (("segments", "prefill", "{root}", "0", "--threshold", "0"), "e.g. --threshold 0.05 (m/s)"),
        (
            ("report", "{root}", "--max-episodes", "-3"),
            "Invalid value for '--max-episodes': it must be greater than or equal to 0",
        ),
    ],
)
def test_a_number_option_refusal_has_no_pydantic_wording(judged, args, expected):
    done = cli(*(str(judged) if a == "{root}" else a for a in args))
    assert done.returncode == 2
    assert expected in done.stderr
    assert "Input should be" not in done.stderr and "unable to parse" not in done.stderr
    assert "_threshold" not in done.stderr  # the option's name, not the Python argument's


def test_no_usage_line_shows_braces():
    for command in (("resolve",), ("filter",), ("segments", "show"), ("ssc", "build"), ("outcome", "set")):
        done = cli(*command, "--help")
        assert done.returncode == 0, done.stderr
        usage = done.stdout.splitlines()[0]
        assert "{" not in usage and "}" not in usage, usage


def test_filter_by_membership_names_its_drop_reason_after_membership(judged):
    set_outcome(judged, 0, outcome="expert_success", evaluation_membership="train")
    set_outcome(judged, 1, outcome="expert_success", evaluation_membership="none")
    done = cli("filter", judged, "--membership", "train", "--no-require-success", "--min-quality", "low")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [0]
    assert "1 membership not selected" in done.stderr and "outcome not selected" not in done.stderr
    assert "1 no outcome label" in done.stderr
    by_outcome = cli("filter", judged, "--outcome", "failure", "--no-require-success", "--min-quality", "low")
    assert "2 outcome not selected" in by_outcome.stderr


# --- agreement: the human-labels file (docs/judge.md, "Agreement with human labels") -----------------


def test_agreement_refusals_name_the_file_and_the_line(judged, tmp_path):
    human = tmp_path / "human.json"
    human.write_text('{\n  "0": {"quality": "high"},\n  "1": {"quality": "High"}\n}\n')
    done = cli("agreement", judged, human)
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert f"{human} line 3, episode 1: quality 'High' is not one of low, medium, high." in message
    assert "Did you mean: 'High' -> 'high'?" in message
    assert "human_labels[" not in message
    human.write_text('{"0": {"quality": "high"},\n"1": {"failure_mode": "slipped"}}')
    assert "line 2, episode 1: failure_mode 'slipped' is not null or one of" in " ".join(
        cli("agreement", judged, human).stderr.split()
    )


def test_a_grade_only_review_is_compared_on_quality_only(judged):
    # episode 1: judge low + failure_mode None; the human grades medium with no failure mode
    el.review_episode(judged, 1, decision="grade_only", reviewer="ana", quality="medium")
    el.review_episode(judged, 0, decision="grade_only", reviewer="ana", quality="high", failure_mode="near_miss")
    el.flush(judged)
    result = el.measure_agreement(judged)
    assert result["episodes_compared"] == 2
    assert result["quality_agreement"] == 0.5
    assert sum(sum(row.values()) for row in result["failure_mode_confusion"].values()) == 1  # episode 0 only
    assert result["failure_mode_agreement"] == 0.0
    assert [(d["episode"], d["field"]) for d in result["disagreements"]] == [(0, "failure_mode"), (1, "quality")]


# --- a value in the wrong case, on every command that takes a word from a fixed list -----------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("outcome", "set", "{root}", "0", "--outcome", "Failure"), "'Failure' -> 'failure'"),
        (("outcome", "set", "{root}", "0", "--outcome", "failure", "--autonomy-level", "Teleoperation"),
         "'Teleoperation' -> 'teleoperation'"),
        (("outcome", "set", "{root}", "0", "--outcome", "failure", "--evaluation-membership", "Train"),
         "'Train' -> 'train'"),
        (("outcome", "set", "{root}", "0", "--outcome", "failure", "--source", "Human"), "'Human' -> 'human'"),
        (("outcome", "set", "{root}", "0", "--outcome", "failure", "--leakage-group", "Object=kitchen"),
         "'Object' -> 'object'"),
        (("outcome", "list", "{root}", "--outcome", "Failure"), "'Failure' -> 'failure'"),
        (("outcome", "list", "{root}", "--source", "Human"), "'Human' -> 'human'"),
        (("ssc", "events", "{root}", "--mode", "Position"), "'Position' -> 'position'"),
        (("ssc", "events", "{root}", "--polarity", "Open-High"), "'Open-High' -> 'open-high'"),
        (("segments", "templates", "--cohort", "Generic"), "'Generic' -> 'generic'"),
        (("segments", "validate", "{root}", "--cohort", "Generic"), "'Generic' -> 'generic'"),
        (("segments", "export", "{root}", "--format", "Subtasks"), "'Subtasks' -> 'subtasks'"),
        (("segments", "import-lerobot", "{root}", "--style", "Subtask"), "'Subtask' -> 'subtask'"),
        (("segments", "export-lerobot", "{root}", "--out", "{root}-x", "--sarm", "Dense"), "'Dense' -> 'dense'"),
        (("outcome", "split", "{root}", "--group-key", "Object"), "'Object' -> 'object'"),
    ],
)  # fmt: skip
def test_every_fixed_list_names_the_near_miss(judged, args, expected):
    before = sorted(p.name for p in judged.iterdir())
    done = cli(*(a.replace("{root}", str(judged)) for a in args))
    assert done.returncode != 0
    assert f"Did you mean: {expected}?" in " ".join(done.stderr.split())
    assert not Path(f"{judged}-x").exists()
    assert sorted(p.name for p in judged.iterdir()) == before  # nothing stored


def test_filter_lists_the_unset_membership_as_a_word(judged):
    set_outcome(judged, 0, outcome="expert_success", evaluation_membership="train")
    done = cli("filter", judged, "--membership", "Train")
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "is not one of train, held_out_eval, none or \"\" (not set). Did you mean: 'Train' -> 'train'?" in message


def test_an_outcome_import_line_names_the_key_it_meant(judged, tmp_path):
    """A line written with 'episode' (the label store's key) instead of 'episode_index': the
    refusal names the key meant and says the index is missing (not 'got None')."""
    lines = tmp_path / "outcomes.jsonl"
    lines.write_text('{"episode_index": 0, "outcome": "failure"}\n{"episode": 1, "outcome": "failure"}\n')
    done = cli("outcome", "import", judged, lines)
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "line 2: episode: unknown key; allowed keys are episode_index," in message
    assert "Did you mean: 'episode' -> 'episode_index'?" in message
    assert "line 2: episode_index: is missing" in message and "got None" not in message
    assert not (judged / "episode_outcomes.jsonl").exists()  # nothing stored

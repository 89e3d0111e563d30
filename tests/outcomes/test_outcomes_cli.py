"""``strands-labels outcome set|get|history|list|export|import|split|recovery|verdicts``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.errors import LabelValidationError
from strands_robots.outcomes import OutcomeValidationError, get_outcome, outcome_history, set_outcome

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["outcome", *map(str, args)])


def test_set_with_the_documents_flags(dataset, tmp_path, doc_write):
    subtasks = tmp_path / "subtasks.json"
    subtasks.write_text(json.dumps(doc_write["subtasks"]))
    result = invoke(
        "set", dataset, 1,
        "--outcome", "failure",
        "--progress", "0.4",
        "--subtasks-file", subtasks,
        "--mistake-type", "slip_during_place",
        "--failure-stage", "place",
        "--autonomy-level", "autonomous",
        "--model-version", "your-policy@2026-09-20",
        "--evaluation-membership", "held_out_eval",
        "--source", "imported",
        "--source-metadata", '{"importer": "your-eval-harness", "run_id": "r42", "task": "load_dishwasher"}',
        "--leakage-group", "location=loc_8f2a",
        "--leakage-group", "operator=op_5c1e",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "episode 1: failure (version 1)" in result.output
    label = get_outcome(dataset, 1)
    for key, value in doc_write.items():
        assert label[key] == value, key
    assert label["leakage_groups"] == {"location": "loc_8f2a", "operator": "op_5c1e"}


def test_set_from_a_file_of_a_previous_get(dataset, tmp_path, doc_label):
    set_outcome(dataset, 0, **doc_label)
    got = invoke("get", dataset, 0)
    assert got.exit_code == 0 and json.loads(got.output)["version"] == 1
    path = tmp_path / "label.json"
    path.write_text(got.output)  # read-only fields (uid, version, ...) are ignored
    result = invoke("set", dataset, 0, "--file", path, "--quality", "5", "--json")
    assert result.exit_code == 0, result.output
    stored = json.loads(result.output)
    assert stored["version"] == 2 and stored["quality"] == 5 and stored["subtasks"] == doc_label["subtasks"]
    history = json.loads(invoke("history", dataset, 0).output)
    assert [h["version"] for h in history] == [2, 1]


def test_set_refusal_lists_every_rule_and_stores_nothing(dataset):
    result = invoke("set", dataset, 3, "--outcome", "success", "--quality", "6", "--confidence", "0.5")
    assert isinstance(result.exception, OutcomeValidationError)
    assert set(result.exception.paths) == {"outcome", "quality", "confidence"}
    assert not (dataset / "episode_outcomes.jsonl").exists()


def test_errors_exit_2_with_the_message(dataset):
    proc = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "outcome", "set", str(dataset), "3", "--outcome", "success",
         "--leakage-group", "room=r1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "outcome:" in proc.stderr and "leakage_groups.room" in proc.stderr


def test_list_with_comma_separated_filters(dataset, doc_write):
    set_outcome(dataset, 1, **doc_write)
    set_outcome(dataset, 3, outcome="aborted", evaluation_membership="held_out_eval")
    set_outcome(dataset, 4, outcome="aborted", evaluation_membership="train")
    result = invoke(
        "list", dataset, "--outcome", "failure,aborted", "--evaluation-membership", "held_out_eval", "--json"
    )
    assert result.exit_code == 0, result.output
    assert [label["episode_index"] for label in json.loads(result.output)] == [1, 3]
    table = invoke("list", dataset, "--model-version", "your-policy@2026-09-20")
    assert "2 episode(s)" not in table.output and "1 episode(s)" in table.output


def test_export_import_split_recovery_verdicts(dataset, tmp_path):
    for episode in range(3, 13):
        set_outcome(dataset, episode, outcome="mistake_and_recovery" if episode == 5 else "expert_success",
                    leakage_groups={"location": f"loc_{episode // 2}"})  # fmt: skip
    exported = invoke("export", dataset)
    assert exported.exit_code == 0, exported.output
    path = dataset / "meta" / "avala_sequence_outcomes.jsonl"
    assert len(path.read_text().splitlines()) == 12
    imported = invoke("import", dataset, path, "--labels-dir", tmp_path / "other")
    assert imported.exit_code == 0, imported.output
    assert "12 lines: 10 written, 0 unchanged, 2 unlabelled" in imported.output
    split = invoke("split", dataset, "--held-out", "4", "--group-key", "location", "--json")
    assert split.exit_code == 0, split.output
    report = json.loads(split.output)
    assert report["counts"] == {"train": 6, "held_out_eval": 4}
    held = {e // 2 for e in report["held_out_eval"]}
    assert held.isdisjoint({e // 2 for e in report["train"]})
    assert len(outcome_history(dataset, 3)) == 2
    assert json.loads(invoke("recovery", dataset).output) == [5]
    verdicts = json.loads(invoke("verdicts", dataset).output)
    assert [v["episode"] for v in verdicts] == list(range(3, 13)) and all(v["success"] for v in verdicts)


# -- outcome split: --held-out and --tolerance checked at the command line ------------------------------


@pytest.fixture
def grouped_cli(dataset):
    """Episodes 3..12 labelled, each in its own location (so every count 1..9 is reachable)."""
    for episode in range(3, 13):
        set_outcome(dataset, episode, outcome="expert_success", quality=4, leakage_groups={"location": f"l{episode}"})
    return dataset


def _stored(root):
    return (root / "episode_outcomes.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("0", "'0'"),
        ("-1", "'-1'"),
        ("1.5", "'1.5'"),
        ("1.0", "'1.0'"),
        ("0.0", "'0.0'"),
        ("12.0", "'12.0'"),  # a count is typed as digits
        ("nan", "'nan'"),
        ("inf", "'inf'"),
        ("abc", "'abc'"),
        ("", "''"),
        ("9" * 30, "'" + "9" * 30 + "'"),  # past int64
        ("9" * 5000, "'" + "9" * 16 + " ... " + "9" * 16 + "'"),  # past Python's digit limit for int()
    ],
)
def test_bad_held_out_names_the_option_and_the_remedy_and_stores_nothing(grouped_cli, typed, shown):
    before = _stored(grouped_cli)
    result = invoke("split", grouped_cli, "--held-out", typed)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (
        f"Error: Invalid value for '--held-out': {shown} is neither an episode count (a whole number, at least 1) "
        "nor a fraction strictly between 0 and 1; pass e.g. --held-out 12 or --held-out 0.2."
    ) in " ".join(result.output.split())
    assert "held_out=" not in result.output
    assert _stored(grouped_cli) == before


@pytest.mark.parametrize(("typed", "requested", "fraction"), [("3", 3, None), (" 3 ", 3, None), ("0.3", 3, 0.3)])
def test_held_out_count_or_fraction_as_typed(grouped_cli, typed, requested, fraction):
    result = invoke("split", grouped_cli, "--held-out", typed, "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["requested"], report["requested_fraction"], report["achieved"]) == (requested, fraction, 3)


def test_the_default_held_out_is_a_fifth(grouped_cli):
    report = json.loads(invoke("split", grouped_cli, "--dry-run", "--json").output)
    assert (report["requested"], report["requested_fraction"], report["achieved"]) == (2, 0.2, 2)


def test_holding_out_every_candidate_is_refused_without_the_library_spelling(grouped_cli):
    before = _stored(grouped_cli)
    result = invoke("split", grouped_cli, "--held-out", "10")
    assert isinstance(result.exception, LabelValidationError)
    assert str(result.exception) == (
        "a held-out count of 10 would leave no train episode among the 10 candidate episodes; "
        "ask for at most 9 episodes, or a fraction."
    )
    assert _stored(grouped_cli) == before


@pytest.mark.parametrize("typed", ["1.5", "-0.01", "nan", "x"])
def test_bad_tolerance_names_the_option_and_stores_nothing(grouped_cli, typed):
    before = _stored(grouped_cli)
    result = invoke("split", grouped_cli, "--tolerance", typed)
    assert result.exit_code == 2
    assert (
        f"Error: Invalid value for '--tolerance': '{typed}' is not a fraction from 0 to 1; pass how far the "
        "achieved share may miss a requested fraction, e.g. --tolerance 0.05."
    ) in " ".join(result.output.split())
    assert _stored(grouped_cli) == before


def test_held_out_refusal_in_a_real_process_exits_2_on_stderr(grouped_cli):
    proc = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "outcome", "split", str(grouped_cli), "--held-out", "1.5"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Invalid value for '--held-out': '1.5' is neither an episode count" in " ".join(proc.stderr.split())

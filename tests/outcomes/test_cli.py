"""``strands-labels outcome set|get|history|list|export|import|split|recovery|verdicts``."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from strands_robots.cli.main import app
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

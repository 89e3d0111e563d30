"""``strands-labels segments validate|show|import|export|pool|templates|prefill``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError
from strands_robots.segments import get_segmentation, save_segmentation

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["segments", *map(str, args)], env={"COLUMNS": "200"})


def test_validate_reads_task_and_base_velocity_from_the_dataset(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="a")
    result = run("validate", dataset, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"0": []}  # every rule ran (task and base velocity found)
    moved = [dict(s) for s in valid_ep0]
    moved[0]["label"], moved[1]["label"] = "navigate to the counter", "open the left cabinet door"
    save_segmentation(dataset, 0, moved, annotator="a")
    result = run("validate", dataset, "0")
    assert result.exit_code == 1
    assert "navigate_base_motion" in result.output and "1 errors" in result.output
    skipped = json.loads(run("validate", dataset, "--json", "--no-base-velocity").output)
    assert [f["kind"] for f in skipped["0"]] == ["navigate_base_motion"]
    assert skipped["0"][0]["severity"] == "skipped"
    # nothing saved for episode 3: a LabelsError (strands-labels prints it and exits 2)
    assert isinstance(run("validate", dataset, "3").exception, LabelValidationError)


def test_show_summary_episode_and_history(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="ana", reference=True)
    save_segmentation(dataset, 0, valid_ep0, annotator="ben")
    summary = run("show", dataset)
    assert summary.exit_code == 0 and "ben" in summary.output
    one = run("show", dataset, "0")
    assert "pick up the mug from the counter" in one.output and "3.00-4.20" in one.output
    history = json.loads(run("show", dataset, "0", "--history", "--json").output)
    assert [v["annotator"] for v in history] == ["ben", "ana"]
    assert isinstance(run("show", dataset, "1").exception, EpisodeNotFoundError)


def test_import_report_and_exit_codes(dataset, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {
                "1": [
                    {"start_ts": 0, "end_ts": 2.0, "label": "open the drawer fully"},
                    {"start_ts": 2.0, "end_ts": 4.0, "label": "pick up the mug from the drawer"},
                ]
            }
        )
    )
    result = run("import", dataset, good, "--annotator", "imp")
    assert result.exit_code == 0, result.output
    assert "'open the drawer fully' -> 'open the drawer'" in result.output
    assert "1 imported" in result.output
    assert get_segmentation(dataset, 1)["annotator"] == "imp"
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"0": [{"start": 0, "end": 30, "label": "Pick"}, {"start": 40, "end": 60, "label": "Place"}]})
    )
    result = run("import", dataset, bad, "--annotator", "imp", "--json")
    assert result.exit_code == 1
    assert json.loads(result.output)["counts"]["failed"] == 1
    refused = run("import", dataset, bad, "--annotator", "imp", "--head", "nope")
    assert isinstance(refused.exception, LabelValidationError) and "head='nope'" in str(refused.exception)


def test_export_pool_templates_prefill(dataset, valid_ep0, tmp_path):
    save_segmentation(dataset, 0, valid_ep0, annotator="a", reference=True)
    out = tmp_path / "out.jsonl"
    assert run("export", dataset, "--out", out).exit_code == 0
    assert json.loads(out.read_text())["segments"][0]["end_ts"] == 1.0
    subtasks = run("export", dataset, "--format", "subtasks")
    assert json.loads(subtasks.output)["subtasks"][1]["label"] == "navigate to the counter"
    pool = json.loads(run("pool", dataset, "--episode", "1", "--json").output)
    assert pool["task"].startswith("pick the mug") and pool["pool"][0]["template_id"] == "N1"
    assert [r["episode_index"] for r in pool["references"]] == [0]
    assert json.loads(run("pool", dataset, "--episode", "0", "--json").output)["references"] == []
    templates = json.loads(run("templates", "--cohort", "allex", "--json").output)
    assert [t["surface"] for t in templates][-1] == "TASK_COMPLETE" and len(templates) == 5
    prefill = json.loads(run("prefill", dataset, "0").output)
    assert [(s["start"], s["end"]) for s in prefill if s["template_id"] == "N1"] == [(10, 30)]


def test_the_console_script_exits_2_on_bad_input(dataset):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).with_name("strands-labels")
    result = subprocess.run(
        [str(script), "segments", "show", str(dataset), "1"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "no segmentation saved for episode 1" in result.stderr

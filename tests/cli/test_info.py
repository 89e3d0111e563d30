"""``strands-labels info ROOT`` and ``format_summary`` (docs/dataset.md, "Command line")."""

from __future__ import annotations

import json
import subprocess
import sys

import typer
from typer.testing import CliRunner

from strands_robots.cli import info as info_cli
from strands_robots.dataset import open_dataset
from tests.synth import make_v3_dataset


def _app() -> typer.Typer:
    app = typer.Typer()
    info_cli.register(app)

    @app.command("noop")  # a second command keeps typer in multi-command mode, as in main.py
    def _noop() -> None: ...

    return app


def test_format_summary_on_toy(toy_dataset):
    text = info_cli.format_summary(open_dataset(toy_dataset))
    assert "version   v3.0  robot Unitree_G1_Inspire" in text
    assert "fps       30" in text
    assert "episodes  3  (episode_index 0..2)" in text
    assert "frames    270" in text
    assert "[0] Pick up the yellow bottle on the table." in text
    assert "observation.images.cam_high  video 480x640x3 av1  video present (1 file)" in text
    assert "observation.state: 26 names" in text and "25:kRightHandThumbRotation" in text
    assert text.endswith("problems  none")


def test_info_lists_missing_videos_and_problems(shared_dataset):
    result = CliRunner().invoke(_app(), ["info", str(shared_dataset("so101-record-test-v30"))])
    assert result.exit_code == 0, result.output
    assert "observation.images.top  video 480x640x3 av1  video MISSING (1 file)" in result.output
    assert "problems  2" in result.output and "[missing_video]" in result.output
    assert "5:gripper.pos" in result.output


def test_info_json(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [4, 5], episode_indices=[3, 9], video=True)
    result = CliRunner().invoke(_app(), ["info", str(root), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["episodes"] == 2 and doc["frames"] == 9 and doc["episode_index"] == "3..9 (not contiguous)"
    assert doc["cameras"]["observation.images.front"]["video_files_present"] == 1
    assert doc["problems"] == []


def test_info_entry_point_errors_exit_2(tmp_path):
    ok = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "info", str(make_v3_dataset(tmp_path / "ds", [3]))],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert "episodes  1  (episode_index 0..0)" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "info", str(tmp_path / "nowhere")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert "not a LeRobot dataset" in bad.stderr

"""The CLI entry point: the warning about the other strands-robots distribution, and the
uniform handling of typed errors (message, exit 2)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from strands_robots.cli import main


def test_warns_when_the_other_distribution_is_installed(monkeypatch, capsys):
    real = importlib.metadata.version

    def fake_version(name: str) -> str:
        return "0.5.3" if name == "strands-robots" else real(name)

    monkeypatch.setattr(importlib.metadata, "version", fake_version)
    monkeypatch.setattr(sys, "argv", ["strands-labels", "--help"])
    with pytest.raises(SystemExit):
        main.run()
    err = " ".join(capsys.readouterr().err.split())  # rich wraps lines
    assert "strands-robots" in err and "0.5.3" in err and "cannot share one environment" in err


def test_no_warning_without_the_other_distribution(capsys, monkeypatch):
    assert main.conflicting_distribution_installed() is None
    monkeypatch.setattr(sys, "argv", ["strands-labels", "--help"])
    with pytest.raises(SystemExit):
        main.run()
    assert "warning" not in capsys.readouterr().err


def test_typed_errors_print_the_message_and_exit_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "filter", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "Record deterministic verdicts first" in done.stderr
    assert "Traceback" not in done.stderr

"""scripts/find_python.sh, which the Makefile uses to build .venv: a too-old $PYTHON is an
error said once (never replaced by another interpreter), ``--ok`` checks an interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "find_python.sh"


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_a_good_python_is_printed():
    done = run(PYTHON=sys.executable)
    assert done.returncode == 0 and done.stdout.strip() == sys.executable and done.stderr == ""


def test_a_too_old_python_is_refused_once(tmp_path):
    old = tmp_path / "python3.11"
    old.write_text('#!/bin/sh\nif [ "$1" = -c ]; then case "$2" in *print*) echo 3.11;; *) exit 1;; esac; fi\n')
    old.chmod(0o755)
    done = run(PYTHON=str(old))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("error:") == 1
    assert f"PYTHON={old} is Python 3.11" in done.stderr and "make PYTHON=/path/to/python3.12" in done.stderr


def test_ok_checks_one_interpreter(tmp_path):
    assert run("--ok", sys.executable).returncode == 0
    assert run("--ok", str(tmp_path / "missing")).returncode == 1


@pytest.mark.skipif(sys.platform != "linux", reason="uses an empty PATH")
def test_nothing_found_says_what_to_install(tmp_path):
    done = subprocess.run(
        ["/bin/bash", str(SCRIPT)],
        capture_output=True,
        text=True,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "pyenv")},
        timeout=60,
    )
    assert done.returncode == 1 and done.stderr.count("error:") == 1
    assert "pyenv install 3.12" in done.stderr

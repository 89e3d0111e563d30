"""Importing the label API and the ``strands-labels`` CLI stays light: no dataset reader
library (pyarrow, PyAV, Pillow), no agents SDK, no numpy and no rich until an operation needs
them (each costs tens of MB or milliseconds per process; every CLI command pays its start-up)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pyarrow", "av", "PIL", "strands", "numpy", "rich")


def _loaded_after(code: str, cwd) -> dict[str, bool]:
    script = f"import sys, json\n{code}\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_loads_no_heavy_module(tmp_path):
    code = "import strands_robots, strands_robots.episode_labels, strands_robots.cli.main"
    assert _loaded_after(code, tmp_path) == dict.fromkeys(HEAVY, False)

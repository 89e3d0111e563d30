"""Run code under lerobot 0.6.1 itself, in its own environment.

lerobot needs torch and a dozen other packages this project does not, so it lives in a
separate venv: ``make test`` creates ``.venv-lerobot`` with ``lerobot[dataset]==0.6.1``
(set ``STRANDS_LABELS_LEROBOT_PYTHON`` to use another interpreter). Each call runs a
script in a subprocess of that interpreter, in isolated mode from a directory outside
this repository, offline (``HF_HUB_OFFLINE``), and returns what the script handed to
``emit`` (JSON). Use the ``lerobot`` fixture (``tests/conftest.py``): it skips the test,
with the reason in the summary, when the environment is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LEROBOT_PYTHON = Path(os.environ.get("STRANDS_LABELS_LEROBOT_PYTHON", REPO / ".venv-lerobot" / "bin" / "python"))
LEROBOT_VERSION = "0.6.1"

PRELUDE = """\
import json, sys
from pathlib import Path
ARGS = json.loads(sys.argv[1])
_OUT = sys.argv[2]
def emit(value):
    with open(_OUT, "w") as f:
        json.dump(value, f)
"""


class LerobotError(AssertionError):
    """The script failed under lerobot: its exit code and stderr are in the message."""


def lerobot_missing() -> str | None:
    """Why the lerobot environment cannot be used, or None when it can."""
    if not LEROBOT_PYTHON.exists():
        return (
            f"no lerobot {LEROBOT_VERSION} environment at {LEROBOT_PYTHON} (make test creates .venv-lerobot; "
            "or set STRANDS_LABELS_LEROBOT_PYTHON)"
        )
    return None


def run_lerobot(code: str, *, timeout: float = 600, **args: Any) -> Any:
    """Run ``code`` under lerobot and return the value it passed to ``emit`` (None if none).

    Args:
        code: Python source (dedented here). ``ARGS`` holds ``args`` (JSON round-tripped:
            pass paths as ``str``), ``emit(value)`` hands a JSON value back, ``Path`` and
            ``json`` are imported.
        timeout: Seconds before the subprocess is killed.
        **args: JSON-ready values for the script.

    Raises:
        LerobotError: the script exited non-zero (stderr in the message).
    """
    with tempfile.TemporaryDirectory(prefix="lerobot-run-") as tmp:
        out = Path(tmp) / "out.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "HF_", "STRANDS_"))}
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HOME=str(Path(tmp) / "hf"))
        env["AWS_EC2_METADATA_DISABLED"] = "true"
        done = subprocess.run(
            [str(LEROBOT_PYTHON), "-I", "-c", PRELUDE + textwrap.dedent(code), json.dumps(args), str(out)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise LerobotError(f"lerobot script exited {done.returncode}:\n{done.stderr[-6000:]}")
        return json.loads(out.read_text()) if out.exists() else None

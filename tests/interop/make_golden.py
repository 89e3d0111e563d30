"""Write the interop golden files with the OTHER implementation (strands-robots 0.5.3).

Run in a throwaway virtual environment that has ``strands-robots==0.5.3`` installed and
NOT this project (the two packages share the name ``strands_robots``)::

    python3.12 -m venv /tmp/venv-sr053 && /tmp/venv-sr053/bin/pip install strands-robots==0.5.3
    cd /tmp && /tmp/venv-sr053/bin/python /path/to/tests/interop/make_golden.py /path/to/tests/interop/golden

It writes ``<name>.json`` (the sidecar as 0.5.3 wrote it) and ``<name>.expected.json``
(what 0.5.3's own filter_episodes / measure_agreement answered on it). With
``--check FILE`` it instead reads a sidecar written by this project with 0.5.3 and
prints 0.5.3's answers, to check the other direction.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from strands_robots import episode_labels as other  # the 0.5.3 implementation

FILTERS = [
    {"require_success": True, "min_quality": "medium", "exclude_disputed": False},
    {"require_success": True, "min_quality": "medium", "exclude_disputed": True},
    {"require_success": False, "min_quality": "low", "exclude_disputed": False},
    {"require_success": False, "min_quality": "high", "exclude_disputed": True},
]
HOLDOUT = {
    0: {"quality": "high", "failure_mode": None},
    1: {"quality": "low", "failure_mode": "near_miss"},
    3: {"quality": "medium", "failure_mode": "jerky_motion"},
}


def answers(root: Path) -> dict:
    return {
        "filters": [{"args": f, "episodes": other.filter_episodes(root, **f)} for f in FILTERS],
        "agreement": other.measure_agreement(root, HOLDOUT),
    }


def main(out: Path) -> None:
    root = Path(tempfile.mkdtemp())
    verdicts = [
        {"episode": 0, "success": True, "failure": False, "steps": 90, "cumulative_reward": 1.0, "seed": 0},
        {"episode": 1, "success": True, "failure": False, "steps": 90, "cumulative_reward": 1.0, "seed": 1},
        {"episode": 2, "success": False, "failure": True, "steps": 61, "cumulative_reward": 0.0, "seed": 2},
        {"episode": 3, "success": False, "failure": True, "steps": 90, "cumulative_reward": 0.25, "seed": 3},
        {"episode": 10, "success": True, "steps": 45},
    ]
    other.record_deterministic_verdicts(root, verdicts, benchmark="so101_reach")
    other.annotate_episode(root, 0, quality="high", note="clean approach", model="judge-vlm")
    other.annotate_episode(
        root, 1, quality="medium", failure_mode="near_miss", success_opinion=False, model="judge-vlm"
    )
    other.annotate_episode(root, 2, quality="high", note="clean failure — gripper opened early ✓", model="judge-vlm")
    other.annotate_episode(root, 3, quality="low", failure_mode="jerky_motion", success_opinion=True, model="judge-vlm")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(other.labels_path(root), out / "sr053_basic.json")
    (out / "sr053_basic.expected.json").write_text(json.dumps(answers(root), indent=2, sort_keys=True) + "\n")
    print("wrote", out / "sr053_basic.json")


def check(sidecar: Path) -> None:
    root = Path(tempfile.mkdtemp())
    shutil.copy(sidecar, root / "episode_labels.json")
    print(json.dumps({"read_ok": bool(other.read_labels(root)), **answers(root)}, indent=2, sort_keys=True))


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(Path(sys.argv[2]))
    else:
        main(Path(sys.argv[1]))

"""The snippet at the top of seed 003 runs unchanged (docs/examples/label_and_judge.py)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_seed_snippet_prints_filter_results_and_path():
    script = REPO / "docs" / "examples" / "label_and_judge.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[0, 1]", "[0]", "/tmp/toy_dataset/episode_labels.json"]

"""The full example of the docs runs unchanged (docs/examples/label_and_judge.py), in a temp dir."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_seed_snippet_prints_filter_results_and_path():
    script = REPO / "docs" / "examples" / "label_and_judge.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second, path = done.stdout.splitlines()
    assert (first, second) == ("[0, 1]", "[0]")
    path = Path(path)
    assert path.name == "episode_labels.json" and path.parent.name == "toy_dataset"
    assert path.is_file() and path.parent.parent != Path("/tmp")  # a fresh temp dir, not a fixed path
    import shutil

    shutil.rmtree(path.parent.parent)

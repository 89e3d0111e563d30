"""The main job (`make demo`): label the bundled toy dataset end to end with the CLI.

1. `strands-labels info` prints the dataset summary.
2. The toy dataset is copied to a temp dir (the example stays untouched).
3. `strands-labels verdicts` records `examples/toy_dataset_verdicts.json`, which stands
   in for a benchmark run's per-episode verdicts.
4. `strands-labels judge` grades every episode with the offline judge (no model service).
5. `strands-labels show`, then `strands-labels filter` in both formats (a JSON list and a
   `lerobot-train` argument).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = str(Path(sys.executable).with_name("strands-labels"))


def step(title: str, *args: str) -> None:
    print(f"\n$ strands-labels {' '.join(args)}   # {title}", flush=True)
    subprocess.run([CLI, *args], check=True)


def main() -> None:
    toy = HERE / "toy_dataset"
    with tempfile.TemporaryDirectory(prefix="strands-labels-demo-") as tmp:
        root = Path(tmp) / "toy_dataset"
        shutil.copytree(toy, root)
        step("the dataset", "info", str(root))
        step(
            "stage one: the benchmark's verdicts",
            "verdicts",
            str(root),
            str(HERE / "toy_dataset_verdicts.json"),
            "--benchmark",
            "toy_pick_bottle",
        )
        step("stage two: the offline judge grades each episode", "judge", str(root))
        step("what is recorded", "show", str(root))
        step("episodes worth training on", "filter", str(root))
        step("the same, as a lerobot-train argument", "filter", str(root), "--format", "lerobot")
        print(f"\nsidecar written beside the copy's meta/: {root / 'episode_labels.json'}")


if __name__ == "__main__":
    main()

"""Time writing, reading and filtering an outcome sidecar of 10,000 episodes (docs/outcomes.md).

Each row runs in a fresh process (imports, lazy ones included, are paid by the call):

- ``validate``: ``validate_label`` of 10,000 full labels (3 subtasks, 6 hand actions, every group);
- ``import``: ``import_outcomes`` of a 10,000-line export into an empty store (every line
  validated, one append);
- ``read``: ``current_outcomes`` of the written store (parses the whole file);
- ``filter``: ``list_outcomes(outcome=..., evaluation_membership=...)`` of the store.

    .venv/bin/python benchmarks/outcomes_sidecar.py [--episodes 10000] [--repeat 3]

Writes only under a temporary directory; prints each row's median wall and CPU seconds (the
CPU time is what a loaded machine inflates less).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

LABEL = {
    "outcome": "mistake_and_recovery",
    "progress": 0.75,
    "quality": 4,
    "speed": 3,
    "subtasks": [
        {"label": "load the plate", "start_ts": 0.0, "end_ts": 3.0, "outcome": "mistake_and_recovery"},
        {"label": "pull out the rack", "start_ts": 0.0, "end_ts": 1.2, "outcome": "expert_success"},
        {"label": "place the plate", "start_ts": 1.2, "end_ts": 3.0, "outcome": None},
    ],
    "hand_actions": {
        "left": [
            {
                "start_ts": 0.0,
                "end_ts": 1.2,
                "action": "pull the rack",
                "object": "rack",
                "verb": "pull",
                "contact": True,
            },
            {
                "start_ts": 1.2,
                "end_ts": 3.0,
                "action": "hold the rack",
                "object": "rack",
                "verb": "hold",
                "contact": True,
            },
        ],
        "right": [
            {"start_ts": 1.2, "end_ts": 1.9, "action": "carry the plate", "object": "plate", "verb": "carry"},
            {"start_ts": 1.9, "end_ts": 2.1, "action": "the plate slips", "object": "plate", "contact": False},
            {"start_ts": 2.1, "end_ts": 2.5, "action": "regrasp the plate", "object": "plate", "verb": "grasp"},
            {"start_ts": 2.5, "end_ts": 3.0, "action": "place the plate", "object": "plate", "verb": "place"},
        ],
    },
    "mistake_type": "slip_during_place",
    "recovery_type": "regrasp",
    "autonomy_level": "autonomous",
    "model_version": "act@3",
    "leakage_groups": {
        "location": "loc_1",
        "object": "obj_2",
        "mechanism": "rack",
        "operator": "op",
        "environment_family": "k",
    },
    "source": "model",
    "source_metadata": {"run": "r42", "attempt": 3},
    "confidence": 0.9,
}

ROWS = {
    "validate": """
from strands_robots.outcomes.model import validate_label
for i in range(N):
    validate_label({**LABEL, "evaluation_membership": MEMBERSHIP[i % 3]}, duration=3.3)
""",
    "import": "from strands_robots.outcomes import import_outcomes\nimport_outcomes(ROOT, EXPORT, labeled_by='bench')",
    "read": "from strands_robots.outcomes import current_outcomes\nassert len(current_outcomes(ROOT)) == N",
    "filter": """
from strands_robots.outcomes import list_outcomes
list_outcomes(ROOT, outcome=["mistake_and_recovery", "failure"], evaluation_membership="held_out_eval")
""",
}

PRELUDE = """
import json, sys, time
LABEL = json.loads(sys.argv[1]); N = int(sys.argv[2]); ROOT = sys.argv[3]; EXPORT = sys.argv[4]
MEMBERSHIP = ("train", "held_out_eval", "none")
start, cpu = time.perf_counter(), time.process_time()
"""


def run(row: str, n: int, root: Path, export: Path) -> tuple[float, float]:
    code = PRELUDE + ROWS[row] + "\nprint(time.perf_counter() - start, time.process_time() - cpu)\n"
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(LABEL), str(n), str(root), str(export)],
        check=True,
        capture_output=True,
        text=True,
    )
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from open_million import write_dataset

    from strands_robots.outcomes.export import export_line

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "dataset"
        write_dataset(root, args.episodes, files=1)  # episodes of 100..600 frames at 30 fps (>= 3.3 s)
        export = Path(tmp) / "export.jsonl"
        membership = ("train", "held_out_eval", "none")
        record = {**LABEL, "version": 1}
        with export.open("w") as out:
            for e in range(args.episodes):
                line = export_line(e, f"uid-{e}", {**record, "evaluation_membership": membership[e % 3]})
                out.write(json.dumps(line) + "\n")
        results: dict[str, list[tuple[float, float]]] = {row: [] for row in ROWS}
        for _ in range(args.repeat):
            for row in ROWS:
                if row == "import":
                    (root / "episode_outcomes.jsonl").unlink(missing_ok=True)
                results[row].append(run(row, args.episodes, root, export))
        for row, times in results.items():
            wall = statistics.median(t for t, _ in times)
            cpu = statistics.median(c for _, c in times)
            print(f"{row:10s} wall {wall:7.3f} s  cpu {cpu:7.3f} s  (median of {len(times)})")


if __name__ == "__main__":
    main()

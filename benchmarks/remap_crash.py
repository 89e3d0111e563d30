"""SIGKILL at random points of `remap NEW --from OLD`, a writer acknowledging a label between the
kill and the re-run: labels lost, re-runs that fail (wedged), wrong carries (docs/editing.md).

Each trial: a synthetic dataset of 6 labelled episodes (verdicts, grades, outcomes, segments),
its copy after LeRobot's ``delete_episodes([2])`` (data and metadata renumbered) without
sidecars; ``remap_dataset(new, source=old, allow_drop=True)`` runs in a subprocess killed
after a random delay within the measured duration of a whole remap; then a writer annotates
episode 0 of the new root (acknowledged when the call returns); then the same remap runs
again, in-process, and must finish. Checked: every kept recording's label sits on its new
episode, the acknowledged label is there, and a further run says "already applied".

    .venv/bin/python benchmarks/remap_crash.py --trials 100
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from strands_robots import episode_labels as el  # noqa: E402
from strands_robots.errors import LabelsError  # noqa: E402
from strands_robots.remap import remap_dataset  # noqa: E402
from tests.edits.test_carry import _edited  # noqa: E402

CHILD = "import sys; from strands_robots.remap import remap_dataset; remap_dataset(sys.argv[1], source=sys.argv[2], allow_drop=True)"
IMPORT = "import strands_robots.remap, strands_robots.episode_labels, strands_robots.outcomes, strands_robots.segments"
EPISODES = 6
DELETED = 2


def _child(new: Path, old: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(new), str(old)], env=env, stderr=subprocess.PIPE)


def trial(work: Path, delay: float) -> dict[str, object]:
    old, new = _edited(work, [DELETED], EPISODES)
    child = _child(new, old)
    time.sleep(delay)
    killed = child.poll() is None
    if killed:
        child.send_signal(signal.SIGKILL)
    child.wait()
    wrote = (new / ".strands-labels").exists() or (new / "episode_labels.json").exists()
    acknowledged = False
    try:
        el.annotate_episode(new, 0, quality="low", note="acknowledged")
        acknowledged = True
    except LabelsError:
        pass
    try:
        remap_dataset(new, source=old, allow_drop=True)
    except LabelsError as exc:
        return {"killed": killed, "wrote": wrote, "wedged": True, "error": str(exc)[:300]}
    notes = {int(k): r["judge"]["note"] for k, r in el.read_labels(new)["episodes"].items()}
    survivors = [e for e in range(EPISODES) if e != DELETED]
    want = {new_index: f"episode {o}" for new_index, o in enumerate(survivors)}
    if acknowledged:
        want[0] = "acknowledged"
    wrong = sorted(e for e in want if notes.get(e) != want[e])
    again = remap_dataset(new, source=old, allow_drop=True).already_applied is not None
    return {
        "killed": killed,
        "wrote": wrote,
        "wedged": False,
        "acknowledged": acknowledged,
        "lost_ack": acknowledged and notes.get(0) != "acknowledged",
        "wrong": wrong,
        "again": again,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        imports, wholes = [], []
        for i in range(3):  # the fastest of three: the machine is shared
            probe = _edited(Path(tmp) / f"probe{i}", [DELETED], EPISODES)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", IMPORT], check=True)
            imports.append(time.perf_counter() - start)
            start = time.perf_counter()
            _child(probe[1], probe[0]).wait()
            wholes.append(time.perf_counter() - start)
        imported, whole = min(imports), min(wholes)
        # kills spread over the remap itself (after the child's imports), and a little beyond
        results = [trial(Path(tmp) / f"t{i}", rng.uniform(imported * 0.9, whole * 1.05)) for i in range(args.trials)]
    killed = sum(1 for r in results if r["killed"])
    during = sum(1 for r in results if r["killed"] and r["wrote"])
    wedged = [r for r in results if r["wedged"]]
    print(
        f"trials {len(results)}; killed before the end {killed}, {during} of them after the remap wrote; "
        f"one remap {whole:.2f} s in a child, "
        f"{imported:.2f} s of it imports"
    )
    print(f"wedged (re-run failed) {len(wedged)}")
    for r in wedged[:5]:
        print(f"  {r['error']}")
    ok = [r for r in results if not r["wedged"]]
    print(f"acknowledged labels {sum(1 for r in ok if r['acknowledged'])}; lost {sum(1 for r in ok if r['lost_ack'])}")
    print(f"trials with a label on a wrong episode {sum(1 for r in ok if r['wrong'])}")
    print(f"same remap again reported 'already applied' {sum(1 for r in ok if r['again'])}/{len(ok)}")


if __name__ == "__main__":
    main()

"""SIGKILL a writer at random moments: the sidecar and journal stay readable and every
write that returned before the kill is present afterwards (docs/performance.md, "Reliability
tests (in CI)")."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strands_robots.episode_labels import flush, read_labels, record_deterministic_verdicts

TRIALS = 50
REPO = Path(__file__).resolve().parents[2]

WRITER = r"""
import sys
from strands_robots.episode_labels import annotate_episode
root, n, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("ready", flush=True)
i = start
while True:
    episode = i % n
    annotate_episode(root, episode, quality="high", note=f"write {i}", model="crash")
    print(f"ok {episode} {i}", flush=True)
    i += 1
"""


@pytest.mark.parametrize("episodes", [200, 2000], ids=["write-through", "journal"])
def test_sigkill_never_loses_a_returned_write(tmp_path, episodes):
    root = tmp_path / "ds"
    root.mkdir()
    record_deterministic_verdicts(root, [{"episode": i, "success": i % 2 == 0} for i in range(episodes)])
    flush(root)
    rng = random.Random(episodes)
    acknowledged: dict[int, int] = {}
    counter = 0
    for _trial in range(TRIALS // 2):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(episodes), str(counter)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(child.pid, signal.SIGKILL)
        out, _ = child.communicate(timeout=30)
        for line in out.splitlines():
            if line.startswith("ok "):
                _, episode, write = line.split()
                acknowledged[int(episode)] = max(acknowledged.get(int(episode), -1), int(write))
                counter = max(counter, int(write) + 1)
        document = read_labels(root)  # never unreadable
        for episode, write in acknowledged.items():
            judge = document["episodes"][str(episode)]["judge"]
            assert int(judge["note"].split()[1]) >= write, f"write {write} to episode {episode} was lost"
        counter += 1  # a write that was in flight may or may not have landed: never reuse its number
    assert acknowledged, "the writer never got a write through"
    flush(root)
    final = read_labels(root)
    assert all(str(e) in final["episodes"] for e in acknowledged)

"""Models the Ray tests send to workers (importable there: the fixture puts the repo on their path)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from strands_robots.judges.heuristic import HeuristicJudgeModel


class SlowPidJudge(HeuristicJudgeModel):
    """The offline judge, ``delay`` seconds slower per model call, leaving its pid in ``pid_dir``.

    Each worker process that builds or unpickles one writes ``pid_dir/<pid>`` so a test
    can find the real worker processes and kill one mid-run.
    """

    def __init__(self, profiles: Any, *, pid_dir: str, delay: float) -> None:
        super().__init__(profiles)
        self.pid_dir = pid_dir
        self.delay = delay

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        Path(self.pid_dir, str(os.getpid())).touch()

    def next_events(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        time.sleep(self.delay)
        return super().next_events(messages)

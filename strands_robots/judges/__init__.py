"""Judges that label episodes through the judge tools (docs/judge.md).

- :class:`~strands_robots.judges.heuristic.HeuristicJudgeModel`: the offline judge, a
  strands ``Model`` that plans tool calls and grades from signals (``heuristic-v1``).
- :func:`~strands_robots.judges.runner.run_judge`: label a dataset (workers, retries,
  resumable), used by ``strands-labels judge``.
"""

from strands_robots.judges.heuristic import HeuristicJudgeModel, judge_prompt
from strands_robots.judges.offline_rules import JUDGE_MODEL, grade_episode
from strands_robots.judges.profile import DatasetProfile
from strands_robots.judges.runner import JudgeReport, RetryPolicy, run_judge

__all__ = [
    "JUDGE_MODEL",
    "DatasetProfile",
    "HeuristicJudgeModel",
    "JudgeReport",
    "RetryPolicy",
    "grade_episode",
    "judge_prompt",
    "run_judge",
]

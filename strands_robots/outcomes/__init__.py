"""Outcome labels: one versioned outcome label per episode, beside a LeRobot dataset (docs/outcomes.md)."""

from strands_robots.outcomes.export import export_outcomes, import_outcomes
from strands_robots.outcomes.labels import (
    OutcomeNotFoundError,
    check_readable,
    current_outcomes,
    get_outcome,
    list_outcomes,
    outcome_history,
    set_outcome,
    stale_outcomes,
)
from strands_robots.outcomes.model import OUTCOMES, OutcomeValidationError, Violation
from strands_robots.outcomes.remap import remap
from strands_robots.outcomes.splits import SplitImpossibleError, split_by_groups
from strands_robots.outcomes.store import outcomes_path
from strands_robots.outcomes.verdicts import record_verdicts_from_outcomes, recovery_track, verdicts_from_outcomes

__all__ = [
    "OUTCOMES",
    "OutcomeNotFoundError",
    "OutcomeValidationError",
    "SplitImpossibleError",
    "Violation",
    "check_readable",
    "current_outcomes",
    "export_outcomes",
    "get_outcome",
    "import_outcomes",
    "list_outcomes",
    "outcome_history",
    "outcomes_path",
    "record_verdicts_from_outcomes",
    "recovery_track",
    "remap",
    "stale_outcomes",
    "set_outcome",
    "split_by_groups",
    "verdicts_from_outcomes",
]

"""The outcome label's vocabulary, its one error and :func:`validate_label`.

The rules themselves are the pydantic models of :mod:`strands_robots.outcomes.schema`
(docs/outcomes.md, "The label"), imported on the first write so that reading labels never
imports pydantic.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from strands_robots.errors import LabelValidationError, quoted

#: Outcome values ("Ergebniswerte").
OUTCOMES: tuple[str, ...] = (
    "expert_success",
    "slow_success",
    "partial_success",
    "mistake_and_recovery",
    "intervention",
    "unsafe",
    "aborted",
    "failure",
    "novel_strategy",
    "inefficient_strategy",
)
#: ``autonomy_level`` values ("Autonomiegrad"); ``""`` means not set.
AUTONOMY_LEVELS: tuple[str, ...] = (
    "human_demonstration",
    "teleoperation",
    "autonomous",
    "shared_autonomy",
    "intervention",
)
#: ``evaluation_membership`` values (docs/outcomes.md, "The label"); ``""`` means not set.
EVALUATION_MEMBERSHIPS: tuple[str, ...] = ("train", "held_out_eval", "none")
#: ``leakage_groups`` keys (docs/outcomes.md, "The label"); any other key is rejected.
LEAKAGE_GROUP_KEYS: tuple[str, ...] = ("location", "object", "mechanism", "operator", "environment_family")
#: ``source`` values; default ``human``.
SOURCES: tuple[str, ...] = ("human", "model", "imported")
HANDS: tuple[str, ...] = ("left", "right")

#: Slack past the episode's duration for an ``end_ts`` ("Dauer der Sequenz": labels written
#: once per second may end up to one second late).
DURATION_SLACK_S = 1.0

#: Fields a write may set, in the document's order.
WRITABLE_FIELDS: tuple[str, ...] = (
    "outcome",
    "progress",
    "quality",
    "speed",
    "subtasks",
    "hand_actions",
    "mistake_type",
    "recovery_type",
    "failure_stage",
    "autonomy_level",
    "model_version",
    "evaluation_membership",
    "leakage_groups",
    "source",
    "source_metadata",
    "confidence",
    "labeled_by",
)
#: Fields the store sets on every version; a write may not pass them.
READ_ONLY_FIELDS: tuple[str, ...] = (
    "uid",
    "sequence_uid",
    "episode_index",
    "version",
    "is_current",
    "created_at",
    "updated_at",
)
#: The string fields whose unset value is ``""`` (tags, autonomy, model version, membership).
EMPTY_STRING_FIELDS: tuple[str, ...] = (
    "mistake_type",
    "recovery_type",
    "failure_stage",
    "autonomy_level",
    "model_version",
    "evaluation_membership",
)


@dataclass(frozen=True)
class Violation:
    """One broken rule: the field path (``subtasks[2].end_ts``) and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class OutcomeValidationError(LabelValidationError):
    """An outcome label breaks one or more rules; nothing was stored.

    Attributes:
        violations: Every broken rule, each with its field path.
    """

    def __init__(self, violations: list[Violation], *, context: str = "the outcome label") -> None:
        self.violations = list(violations)
        lines = "\n".join(f"  - {v}" for v in self.violations)
        n = len(self.violations)
        super().__init__(
            f"{context} breaks {n} rule{'s' if n != 1 else ''}; nothing was stored. "
            f"Fix every field listed and write again:\n{lines}"
        )

    @property
    def paths(self) -> list[str]:
        """The field paths of every violation, in order."""
        return [v.path for v in self.violations]


def describe(value: Any) -> str:
    """``value`` quoted for a message; an integer too large for ``repr`` by its size."""
    if isinstance(value, numbers.Integral) and abs(int(value)).bit_length() > 64:
        # repr() of an int past 4300 digits raises ValueError; describe it by its size instead
        digits = int((abs(int(value)).bit_length() - 1) * math.log10(2))  # a lower bound of log10(|value|)
        return f"an integer of more than {digits} digits (too large for a float)"
    return quoted(value, 60)


def validate_label(fields: dict[str, Any], *, duration: float | None = None) -> dict[str, Any]:
    """Validate one write and return the label to store.

    Args:
        fields: The writable fields (see :data:`WRITABLE_FIELDS`); ``outcome`` is required,
            every other field is optional and unset when omitted or None (a write replaces
            the current label completely: docs/outcomes.md, "Writes replace").
        duration: The episode's duration in seconds (``length / fps``) when known; every
            ``end_ts`` must then be at most ``duration + 1`` (docs/outcomes.md, "Duration").

    Returns:
        Every writable field: omitted ones unset (``null``, ``""``, ``[]`` or ``{}``), an
        empty ``object``/``verb`` of a hand action as ``null``, timestamps and
        ``progress``/``confidence`` as floats.

    Raises:
        OutcomeValidationError: one or more rules are broken; lists them all with their
            field paths (``subtasks[2].end_ts``, ``hand_actions.left[0].contact``).
    """
    from strands_robots.outcomes.schema import check_label

    return check_label(fields, duration)


def label_fields(label: dict[str, Any]) -> dict[str, Any]:
    """The writable fields of a stored label except ``labeled_by`` (its content, for comparison)."""
    return {k: label.get(k) for k in WRITABLE_FIELDS if k != "labeled_by"}

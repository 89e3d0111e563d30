"""Findings of :func:`validate_segmentation` (docs/segments.md, "Validation and findings").

Severities: ``error`` (a rule is broken), ``warning`` (a convention is probably not
followed), ``skipped`` (the rule needs an input that was not given: not passed, not checked).
A save is refused while a *blocking* (structural) kind stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

SEVERITIES = ("error", "warning", "skipped")


@dataclass(frozen=True)
class FindingKind:
    """A named rule: what it checks, where the rule comes from, whether it blocks a save."""

    name: str
    rule: str
    source: str
    blocking: bool = False


_KINDS = (
    # -- structure (section 1, 2, 6) ---------------------------------------------------------
    FindingKind("invalid_interval", "a segment is [start, end) in whole frames with start < end", "§1", True),
    FindingKind("out_of_range", "segments lie within frames 0..length", "§1", True),
    FindingKind("gap", "segments cover every frame (no gaps)", "§1, §6", True),
    FindingKind("overlap", "segments do not overlap", "§1, §6", True),
    FindingKind("unparseable_label", "every segment carries exactly one template", "§3", True),
    FindingKind("wrong_cohort", "labels come from the cohort's templates", "§3, §7, §8", True),
    FindingKind(
        "task_complete_placement",
        "TASK_COMPLETE only as one distinct trailing interval after the final subtask",
        "§2",
        True,
    ),
    FindingKind(
        "task_complete_after_failure",
        "TASK_COMPLETE only after the task has succeeded (not on an episode whose outcome or verdict is a failure)",
        "§2",
        True,
    ),
    FindingKind("free_label", "a label another tool wrote that fits no template is kept as free text", "§3"),
    # -- guideline rules (sections 1, 3, 4, 7, 8) ----------------------------------------------
    FindingKind(
        "activation_control",
        "the activation-control table (coffee machine A2, toaster/kettle A3, toaster oven temperature knob always J1)",
        "§4",
    ),
    FindingKind("control_semantics", "off->on is activate, on->off deactivate, a level change adjust", "§1, §4"),
    FindingKind("one_segment_per_door", "one open/close segment per door or drawer", "§1"),
    FindingKind("pour_sequence", "pouring is pick up the container -> dump -> place the container", "§1"),
    FindingKind("hold_running_water", "hold only for an object kept grasped under running water", "§1, §3 H1"),
    FindingKind("count_task_pairs", "count-based tasks: one pick + place pair per instance", "§1"),
    FindingKind("count_task_group_noun", "count-based tasks: group nouns are forbidden", "§1"),
    FindingKind("stir_utensil", "a stir follows the pick of its utensil (still in hand)", "§3 T1"),
    FindingKind("bundled_actions", "never bundle two actions in one label", "§3 slot conventions"),
    FindingKind("navigate_base_motion", "navigate only where the base moves", "§1"),
    FindingKind(
        "agibot_alternation", "Idle before the first Pick and after the last Place; Pick and Place alternate", "§7"
    ),
    FindingKind("allex_rules", "Allex start/end rules (pending transcription)", "§8"),
    FindingKind("pick_without_source", "give the source of a pick whenever it is identifiable", "§3 P1"),
    FindingKind("trailing_wait", "the idle tail after the last subtask is TASK_COMPLETE, not wait", "§3 X1"),
    FindingKind("repeated_navigate", "shuffling in front of the same fixture folds into the next segment", "§1, §3 N1"),
    FindingKind("group_noun_role", "a group noun only where the role admits group_noun", "§3 roles"),
    FindingKind(
        "open_close_target", "open/close only hinged or sliding fixture parts (loose lids are pick/place)", "§3 O1"
    ),
    FindingKind("slide_target", "slide only racks and trays (drawers are open/close)", "§3 S1"),
)

#: Kind name -> definition.
FINDING_KINDS: MappingProxyType[str, FindingKind] = MappingProxyType({k.name: k for k in _KINDS})

#: Kinds that make a save refuse.
BLOCKING_KINDS = frozenset(k.name for k in _KINDS if k.blocking)


@dataclass(frozen=True)
class Finding:
    """One finding.

    Attributes:
        kind: A key of :data:`FINDING_KINDS`.
        start: First frame concerned (inclusive).
        end: End frame (exclusive): the range is ``[start, end)`` in frames.
        message: What is wrong and what to do.
        severity: ``error``, ``warning`` or ``skipped``.
        segments: Indices (in start order) of the segments concerned.
    """

    kind: str
    start: int
    end: int
    message: str
    severity: str = "error"
    segments: tuple[int, ...] = ()

    @property
    def blocking(self) -> bool:
        """True when a save must be refused while this finding stands."""
        return self.kind in BLOCKING_KINDS and self.severity == "error"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (an annotation page shows ``start``/``end`` on the timeline)."""
        kind = FINDING_KINDS[self.kind]
        return {
            "kind": self.kind,
            "severity": self.severity,
            "start": self.start,
            "end": self.end,
            "message": self.message,
            "segments": list(self.segments),
            "blocking": self.blocking,
            "rule": kind.rule,
            "source": f"docs/segments.md, Validation and findings ({kind.source})",
        }

    def __str__(self) -> str:
        return f"{self.severity} {self.kind} [{self.start}, {self.end}): {self.message}"

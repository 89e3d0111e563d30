"""The outcome label schema and its validation.

Every rule is stated in docs/outcomes.md, "The label" (fields, values, subtasks, hand
actions, duration, numbers, human demonstrations, writes replace).

:func:`validate_label` checks a whole write at once and raises ONE
:class:`OutcomeValidationError` listing every violated rule with its field path
(``subtasks[2].end_ts``, ``hand_actions.left[0].contact``); it returns the normalised label
that is stored: every writable field present, omitted optional fields unset (``null``,
``""``, ``[]`` or ``{}``), empty ``object``/``verb`` of a hand action stored as ``null``,
timestamps and ``progress``/``confidence`` as floats.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from strands_robots.arguments import ANY_NUMBER, NAME_CHARS, SECONDS, UNIT_FRACTION, Limits, number_argument
from strands_robots.errors import LabelValidationError, did_you_mean, quoted

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

MAX_SUBTASKS = 256
MAX_HAND_ACTIONS = 3600
MAX_TEXT = 500  # subtask label, hand action
MAX_OBJECT = 255
MAX_VERB = 64
MAX_TAG = 128  # mistake_type, recovery_type, failure_stage
MAX_MODEL_VERSION = 255
MAX_GROUP_ID = 255
MAX_METADATA_KEYS = 20
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512
MAX_LABELED_BY = NAME_CHARS
#: Slack past the episode's duration for an ``end_ts`` ("Dauer der Sequenz": labels written
#: once per second may end up to one second late).
DURATION_SLACK_S = 1.0

TAG_FIELDS: tuple[str, ...] = ("mistake_type", "recovery_type", "failure_stage")
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
    *TAG_FIELDS,
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


# -- small checks -------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    """A real number that a float (and so JSON) can hold: ``10**400`` and ``nan`` are not."""
    if not _is_number(value):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int too large for a float
        return False


class _Outside(Exception):
    """A number outside its limits (collected as a violation, never raised to the caller)."""


def _outside(_value: Any) -> _Outside:
    return _Outside()


def _within(value: Any, limits: Limits) -> float | None:
    """``value`` as a float when it is a finite number within ``limits`` (the limits every
    entry point applies to that kind of number, :mod:`strands_robots.arguments`), else None."""
    try:
        return number_argument(value, _outside, limits)
    except _Outside:
        return None


def _describe(value: Any) -> str:
    if _is_integer(value) and abs(int(value)).bit_length() > 64:
        # repr() of an int past 4300 digits raises ValueError; describe it by its size instead
        digits = int((abs(int(value)).bit_length() - 1) * math.log10(2))  # a lower bound of log10(|value|)
        return f"an integer of more than {digits} digits (too large for a float)"
    return quoted(value, 60)


class _Checker:
    """Collects violations while normalising one label."""

    def __init__(self) -> None:
        self.violations: list[Violation] = []

    def fail(self, path: str, message: str) -> None:
        self.violations.append(Violation(path, message))

    def choice(self, path: str, value: Any, allowed: tuple[str, ...], *, empty_ok: bool) -> str:
        if value is None and empty_ok:
            return ""
        if isinstance(value, str) and (value in allowed or (empty_ok and value == "")):
            return value
        extra = ' or "" (not set)' if empty_ok else ""
        self.fail(path, f"{_describe(value)} is not one of {', '.join(allowed)}{extra}.{did_you_mean(value, allowed)}")
        return ""

    def text(self, path: str, value: Any, *, min_len: int, max_len: int, nullable: bool) -> str | None:
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            self.fail(path, f"must be a string, got {type(value).__name__} {_describe(value)}")
            return None
        if len(value) < min_len:
            self.fail(path, f'must have at least {min_len} character{"s" if min_len != 1 else ""}, got ""')
        elif len(value) > max_len:
            self.fail(path, f"has {len(value)} characters; at most {max_len} are allowed")
        return value

    def timestamp(self, path: str, value: Any) -> float | None:
        seconds = _within(value, SECONDS)
        if seconds is None:
            if _within(value, ANY_NUMBER) is None:
                self.fail(path, f"must be a finite number of seconds, got {_describe(value)}")
            else:
                self.fail(path, f"must be 0 or greater (seconds from the episode start), got {value}")
        return seconds

    def fraction(self, path: str, value: Any) -> float | None:
        if value is None:
            return None
        fraction = _within(value, UNIT_FRACTION)
        if fraction is None:
            self.fail(path, f"must be a number from 0 to 1 or null, got {_describe(value)}")
        return fraction

    def score(self, path: str, value: Any) -> int | None:
        if value is None:
            return None
        if not _is_integer(value) or not 1 <= value <= 5:
            self.fail(path, f"must be an integer from 1 to 5 or null, got {_describe(value)}")
            return None
        return int(value)

    def keys(self, path: str, item: dict[str, Any], allowed: tuple[str, ...]) -> None:
        for key in item:
            if key not in allowed:
                where = f"{path}.{key}" if isinstance(key, str) else path
                hint = did_you_mean(key, allowed)
                self.fail(where, f"unknown key {_describe(key)}; allowed keys are {', '.join(allowed)}.{hint}")


# -- the parts of a label -----------------------------------------------------------------------

_SUBTASK_KEYS = ("label", "start_ts", "end_ts", "outcome")
_HAND_ACTION_KEYS = ("start_ts", "end_ts", "action", "object", "verb", "contact")


def _span(c: _Checker, path: str, item: dict[str, Any]) -> tuple[float | None, float | None]:
    start = c.timestamp(f"{path}.start_ts", item.get("start_ts")) if "start_ts" in item else None
    end = c.timestamp(f"{path}.end_ts", item.get("end_ts")) if "end_ts" in item else None
    for key in ("start_ts", "end_ts"):
        if key not in item:
            c.fail(f"{path}.{key}", "is required")
    if start is not None and end is not None and end < start:
        c.fail(f"{path}.end_ts", f"{end} is before start_ts {start}; end_ts must be at least start_ts")
        end = None
    return start, end


def _check_end(c: _Checker, path: str, end: float | None, duration: float | None) -> None:
    if end is not None and duration is not None and end > duration + DURATION_SLACK_S:
        c.fail(
            path,
            f"{end} s is past the episode's duration {duration:g} s + {DURATION_SLACK_S:g} s "
            f"(at most {duration + DURATION_SLACK_S:g} s)",
        )


def _subtasks(c: _Checker, value: Any, duration: float | None) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        c.fail("subtasks", f"must be a list of {{label, start_ts, end_ts, outcome}}, got {_describe(value)}")
        return []
    if len(value) > MAX_SUBTASKS:
        c.fail("subtasks", f"has {len(value)} subtasks; at most {MAX_SUBTASKS} are allowed")
    out: list[dict[str, Any]] = []
    spans: list[tuple[int, float, float] | None] = []
    for i, item in enumerate(value):
        path = f"subtasks[{i}]"
        if not isinstance(item, dict):
            c.fail(path, f"must be an object {{label, start_ts, end_ts, outcome}}, got {_describe(item)}")
            spans.append(None)
            continue
        c.keys(path, item, _SUBTASK_KEYS)
        label = None
        if "label" not in item:
            c.fail(f"{path}.label", "is required (1 to 500 characters)")
        else:
            label = c.text(f"{path}.label", item["label"], min_len=1, max_len=MAX_TEXT, nullable=False)
        start, end = _span(c, path, item)
        _check_end(c, f"{path}.end_ts", end, duration)
        outcome = item.get("outcome")
        if outcome is not None:
            outcome = c.choice(f"{path}.outcome", outcome, OUTCOMES, empty_ok=False) or None
        out.append({"label": label, "start_ts": start, "end_ts": end, "outcome": outcome})
        spans.append((i, start, end) if start is not None and end is not None else None)
    _check_nesting(c, spans)
    return out


def _check_nesting(c: _Checker, spans: list[tuple[int, float, float] | None]) -> None:
    """Sorted by start; any two disjoint (touching counts) or nested; enclosing first on a tie.

    One pass with a stack of the open enclosing subtasks (a laminar family), O(n).
    """
    stack: list[tuple[int, float, float]] = []
    previous: tuple[int, float, float] | None = None
    for span in spans:
        if span is None:
            continue
        i, start, end = span
        if previous is not None and start < previous[1]:
            c.fail(
                f"subtasks[{i}].start_ts",
                f"{start} is before subtasks[{previous[0]}].start_ts {previous[1]}; list subtasks sorted by start_ts",
            )
            continue
        previous = span
        while stack and stack[-1][2] <= start:  # ended at or before this start: disjoint
            stack.pop()
        if stack and end > stack[-1][2]:
            j, s_j, e_j = stack[-1]
            if s_j == start:
                c.fail(
                    f"subtasks[{i}]",
                    f"[{start}, {end}] starts with subtasks[{j}] [{s_j}, {e_j}] and encloses it; "
                    "when two subtasks start together, list the enclosing one first",
                )
            else:
                c.fail(
                    f"subtasks[{i}]",
                    f"[{start}, {end}] partially overlaps subtasks[{j}] [{s_j}, {e_j}]; two subtasks must be "
                    "disjoint (touching ends count as disjoint) or one must contain the other",
                )
            continue
        stack.append(span)


def _hand_actions(c: _Checker, value: Any, duration: float | None) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {hand: [] for hand in HANDS}
    if value is None:
        return out
    if not isinstance(value, dict):
        c.fail("hand_actions", f'must be an object {{"left": [...], "right": [...]}}, got {_describe(value)}')
        return out
    c.keys("hand_actions", value, HANDS)
    for hand in HANDS:
        if hand not in value:  # a hand may be left out (stored as []), not set to null
            continue
        items = value[hand]
        path = f"hand_actions.{hand}"
        if not isinstance(items, list | tuple):
            c.fail(path, f"must be a list of hand actions, got {_describe(items)}")
            continue
        if len(items) > MAX_HAND_ACTIONS:
            c.fail(path, f"has {len(items)} actions; at most {MAX_HAND_ACTIONS} per hand are allowed")
        previous: tuple[int, float] | None = None
        for i, item in enumerate(items):
            ipath = f"{path}[{i}]"
            if not isinstance(item, dict):
                c.fail(ipath, f"must be an object {{start_ts, end_ts, action, ...}}, got {_describe(item)}")
                continue
            c.keys(ipath, item, _HAND_ACTION_KEYS)
            start, end = _span(c, ipath, item)
            _check_end(c, f"{ipath}.end_ts", end, duration)
            if start is not None and previous is not None and start < previous[1]:
                c.fail(
                    f"{ipath}.start_ts",
                    f"{start} is before the end {previous[1]} of {path}[{previous[0]}]; actions of one hand "
                    "are sorted and may touch but not overlap",
                )
            if end is not None:
                previous = (i, end)
            action = None
            if "action" not in item:
                c.fail(f"{ipath}.action", "is required (1 to 500 characters)")
            else:
                action = c.text(f"{ipath}.action", item["action"], min_len=1, max_len=MAX_TEXT, nullable=False)
            obj = c.text(f"{ipath}.object", item.get("object"), min_len=0, max_len=MAX_OBJECT, nullable=True)
            verb = c.text(f"{ipath}.verb", item.get("verb"), min_len=0, max_len=MAX_VERB, nullable=True)
            contact = item.get("contact")
            if contact is not None and not isinstance(contact, bool):
                c.fail(f"{ipath}.contact", f"must be a JSON boolean true/false or null, got {_describe(contact)}")
                contact = None
            out[hand].append(
                {
                    "start_ts": start,
                    "end_ts": end,
                    "action": action,
                    "object": obj or None,
                    "verb": verb or None,
                    "contact": contact,
                }
            )
    return out


def _leakage_groups(c: _Checker, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        c.fail("leakage_groups", f"must be an object of group ids, got {_describe(value)}")
        return {}
    c.keys("leakage_groups", value, LEAKAGE_GROUP_KEYS)
    out: dict[str, str] = {}
    for key in LEAKAGE_GROUP_KEYS:
        if key in value:
            gid = c.text(f"leakage_groups.{key}", value[key], min_len=1, max_len=MAX_GROUP_ID, nullable=False)
            if gid:
                out[key] = gid
    return out


def _source_metadata(c: _Checker, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        c.fail("source_metadata", f"must be a flat object, got {_describe(value)}")
        return {}
    if len(value) > MAX_METADATA_KEYS:
        c.fail("source_metadata", f"has {len(value)} keys; at most {MAX_METADATA_KEYS} are allowed")
    out: dict[str, Any] = {}
    for key, item in value.items():
        path = f"source_metadata.{key}"
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_METADATA_KEY:
            c.fail(
                path if isinstance(key, str) else "source_metadata",
                f"key {_describe(key)} must have 1 to 64 characters",
            )
            continue
        if isinstance(item, str):
            if len(item) > MAX_METADATA_VALUE:
                c.fail(path, f"has {len(item)} characters; at most {MAX_METADATA_VALUE} are allowed")
            out[key] = item
        elif isinstance(item, bool):
            out[key] = item
        elif _finite(item):
            out[key] = int(item) if _is_integer(item) else float(item)
        else:
            c.fail(
                path,
                f"{_describe(item)} is not allowed; values are a string (<= 512 characters), a finite number or a "
                "boolean (nested objects, lists and null are rejected)",
            )
    return out


# -- the whole label ----------------------------------------------------------------------------


def validate_label(fields: dict[str, Any], *, duration: float | None = None) -> dict[str, Any]:
    """Validate one write and return the label to store.

    Args:
        fields: The writable fields (see :data:`WRITABLE_FIELDS`); ``outcome`` is required,
            every other field is optional and unset when omitted (a write replaces the
            current label completely: docs/outcomes.md, "Writes replace").
        duration: The episode's duration in seconds (``length / fps``) when known; every
            ``end_ts`` must then be at most ``duration + 1`` (docs/outcomes.md, "Duration").

    Returns:
        Every writable field, normalised (see the module docstring).

    Raises:
        OutcomeValidationError: one or more rules are broken; lists them all.
    """
    c = _Checker()
    for key in fields:
        if key in READ_ONLY_FIELDS:
            c.fail(key, "is read-only (set by the store on every version); leave it out")
        elif key not in WRITABLE_FIELDS:
            c.fail(key, f"unknown field; writable fields are {', '.join(WRITABLE_FIELDS)}")
    label: dict[str, Any] = {}
    if fields.get("outcome") is None:
        c.fail("outcome", f"is required: one of {', '.join(OUTCOMES)}")
        label["outcome"] = None
    else:
        label["outcome"] = c.choice("outcome", fields["outcome"], OUTCOMES, empty_ok=False) or None
    label["progress"] = c.fraction("progress", fields.get("progress"))
    label["quality"] = c.score("quality", fields.get("quality"))
    label["speed"] = c.score("speed", fields.get("speed"))
    label["subtasks"] = _subtasks(c, fields.get("subtasks"), duration)
    label["hand_actions"] = _hand_actions(c, fields.get("hand_actions"), duration)
    for tag in TAG_FIELDS:
        label[tag] = c.text(tag, fields.get(tag, ""), min_len=0, max_len=MAX_TAG, nullable=True) or ""
    label["autonomy_level"] = c.choice("autonomy_level", fields.get("autonomy_level"), AUTONOMY_LEVELS, empty_ok=True)
    label["model_version"] = (
        c.text("model_version", fields.get("model_version"), min_len=0, max_len=MAX_MODEL_VERSION, nullable=True) or ""
    )
    if label["model_version"] and label["autonomy_level"] == "human_demonstration":
        c.fail(
            "model_version",
            f"must be empty for a human demonstration (autonomy_level is human_demonstration, model_version is "
            f"{label['model_version']!r}); drop model_version or set the autonomy_level the policy ran under",
        )
    label["evaluation_membership"] = c.choice(
        "evaluation_membership", fields.get("evaluation_membership"), EVALUATION_MEMBERSHIPS, empty_ok=True
    )
    label["leakage_groups"] = _leakage_groups(c, fields.get("leakage_groups"))
    source = fields.get("source")
    label["source"] = "human" if source is None else c.choice("source", source, SOURCES, empty_ok=False)
    label["source_metadata"] = _source_metadata(c, fields.get("source_metadata"))
    confidence = c.fraction("confidence", fields.get("confidence"))
    if confidence is not None and label["source"] not in ("model", ""):
        c.fail(
            "confidence",
            f'is only allowed when source is "model" (source is {label["source"]!r}); '
            'drop confidence or set source="model"',
        )
    label["confidence"] = confidence
    label["labeled_by"] = (
        c.text("labeled_by", fields.get("labeled_by"), min_len=0, max_len=MAX_LABELED_BY, nullable=True) or None
    )
    if c.violations:
        raise OutcomeValidationError(c.violations)
    return label


def label_fields(label: dict[str, Any]) -> dict[str, Any]:
    """The writable fields of a stored label except ``labeled_by`` (its content, for comparison)."""
    return {k: label.get(k) for k in WRITABLE_FIELDS if k != "labeled_by"}

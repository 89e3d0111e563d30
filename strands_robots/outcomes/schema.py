"""The outcome label as pydantic models: every rule of docs/outcomes.md, "The label".

Each field's rule is one validator whose ``ValueError`` carries the message a user sees
(what is wrong, the allowed values); rules between fields (``end_ts`` after ``start_ts``
and within the episode's duration, the model version of a human demonstration, a
confidence only for ``source="model"``) read the fields validated before them, and rules
between items of a list (subtask nesting, one hand's order) run on the validated list, so
every violation keeps its field path. Imported on the first write:
:func:`strands_robots.outcomes.model.validate_label` is the entry point.
"""

from __future__ import annotations

import numbers
import types
from collections.abc import Callable, Sized
from typing import Annotated, Any, ClassVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic import ValidationError as PydanticError
from pydantic_core import InitErrorDetails, PydanticCustomError

from strands_robots.arguments import ANY_NUMBER, NAME_CHARS, SECONDS, UNIT_FRACTION, number_argument, plain_message
from strands_robots.errors import did_you_mean
from strands_robots.outcomes.model import (
    AUTONOMY_LEVELS,
    DURATION_SLACK_S,
    EVALUATION_MEMBERSHIPS,
    LEAKAGE_GROUP_KEYS,
    OUTCOMES,
    READ_ONLY_FIELDS,
    SOURCES,
    WRITABLE_FIELDS,
    OutcomeValidationError,
    Violation,
    describe,
)

MAX_SUBTASKS = 256
MAX_HAND_ACTIONS = 3600
MAX_TEXT = 500  # subtask label, hand action
MAX_TAG = 128  # mistake_type, recovery_type, failure_stage
MAX_METADATA_KEYS = 20
MAX_METADATA_KEY = 64
MAX_METADATA_VALUE = 512


# -- one value ------------------------------------------------------------------------------------


def _choice(allowed: tuple[str, ...], *, empty_ok: bool = False) -> Any:
    def check(value: Any) -> str | None:
        if value is None or (isinstance(value, str) and (value in allowed or (empty_ok and value == ""))):
            return value
        extra = ' or "" (not set)' if empty_ok else ""
        raise ValueError(f"{describe(value)} is not one of {', '.join(allowed)}{extra}.{did_you_mean(value, allowed)}")

    return BeforeValidator(check)


def _text(min_len: int, max_len: int) -> Any:
    """A string of ``min_len`` to ``max_len`` characters (pydantic's check; its words: :func:`_violation`)."""
    return StringConstraints(strict=True, min_length=min_len, max_length=max_len)


def _empty_is_none(value: str | None) -> str | None:
    return value or None


def _seconds(value: Any) -> float:
    def refuse(_: Any) -> ValueError:
        try:
            number_argument(value, ValueError, ANY_NUMBER)
        except ValueError:
            return ValueError(f"must be a finite number of seconds, got {describe(value)}")
        return ValueError(f"must be 0 or greater (seconds from the episode start), got {value}")

    return number_argument(value, refuse, SECONDS)


def _fraction(value: Any) -> float | None:
    def refuse(_: Any) -> ValueError:
        return ValueError(f"must be a number from 0 to 1 or null, got {describe(value)}")

    return None if value is None else number_argument(value, refuse, UNIT_FRACTION)


def _score(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= int(value) <= 5:
        raise ValueError(f"must be an integer from 1 to 5 or null, got {describe(value)}")
    return int(value)


def _contact(value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"must be a JSON boolean true/false or null, got {describe(value)}")
    return value


def _metadata_key(key: Any) -> str:
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_METADATA_KEY:
        raise ValueError(f"key {describe(key)} must have 1 to {MAX_METADATA_KEY} characters")
    return key


def _metadata_value(value: Any) -> str | bool | int | float:
    if isinstance(value, str):
        if len(value) > MAX_METADATA_VALUE:
            raise ValueError(f"has {len(value)} characters; at most {MAX_METADATA_VALUE} are allowed")
        return value
    if isinstance(value, bool):
        return value

    def refuse(_: Any) -> ValueError:
        return ValueError(
            f"{describe(value)} is not allowed; values are a string (<= {MAX_METADATA_VALUE} characters), a finite "
            "number or a boolean (nested objects, lists and null are rejected)"
        )

    number = number_argument(value, refuse)
    return int(value) if isinstance(value, numbers.Integral) else number


def _group_key(key: Any) -> str:
    if key not in LEAKAGE_GROUP_KEYS:
        raise ValueError(unknown_key(key, LEAKAGE_GROUP_KEYS))
    return key


def unknown_key(key: Any, allowed: tuple[str, ...]) -> str:
    """The message of a key an object may not have."""
    return f"unknown key {describe(key)}; allowed keys are {', '.join(allowed)}.{did_you_mean(key, allowed)}"


def _container(
    kind: type | types.UnionType, shape: str, limit: int | None = None, counted: str = ""
) -> Callable[[Any], Any]:
    """A check of a list or object as a whole: its type and at most ``limit`` items."""

    def check(value: Any) -> Any:
        if not isinstance(value, kind):
            raise ValueError(f"must be {shape}, got {describe(value)}")
        count = len(cast(Sized, value))  # a list or dict (``kind``)
        if limit is not None and count > limit:
            raise ValueError(f"has {count} {counted.format(limit=limit)} are allowed")
        return value

    return check


Seconds = Annotated[float, BeforeValidator(_seconds)]
Fraction = Annotated[float | None, BeforeValidator(_fraction)]
Score = Annotated[int | None, BeforeValidator(_score)]
Tag = Annotated[str, _text(0, MAX_TAG)]


def _rule_errors(errors: list[tuple[tuple[int | str, ...], str, Any]]) -> PydanticError:
    """Several violations inside one validated list, each at its own path."""
    details = [
        InitErrorDetails(type=PydanticCustomError("rule", message), loc=loc, input=value)
        for loc, message, value in errors
    ]
    return PydanticError.from_exception_data("rule", details)


def _end_ts(end: float, info: ValidationInfo) -> float:
    """``end_ts`` at least ``start_ts`` and at most the episode's duration + 1 s (when known)."""
    start = info.data.get("start_ts")
    if start is not None and end < start:
        raise ValueError(f"{end} is before start_ts {start}; end_ts must be at least start_ts")
    duration = (info.context or {}).get("duration")
    if duration is not None and end > duration + DURATION_SLACK_S:
        raise ValueError(
            f"{end} s is past the episode's duration {duration:g} s + {DURATION_SLACK_S:g} s "
            f"(at most {duration + DURATION_SLACK_S:g} s)"
        )
    return end


# -- the parts of a label -------------------------------------------------------------------------


class _Part(BaseModel):
    """An object of a label: a dict (else ``must be <shape>``) with only its own keys."""

    model_config = ConfigDict(extra="forbid")
    shape: ClassVar[str]

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"must be {cls.shape}, got {describe(value)}")
        return value


class Subtask(_Part):
    shape = "an object {label, start_ts, end_ts, outcome}"

    label: Annotated[str, _text(1, MAX_TEXT)]
    start_ts: Seconds
    end_ts: Seconds
    outcome: Annotated[str | None, _choice(OUTCOMES)] = None

    _end = field_validator("end_ts")(_end_ts)


class HandAction(_Part):
    shape = "an object {start_ts, end_ts, action, ...}"

    start_ts: Seconds
    end_ts: Seconds
    action: Annotated[str, _text(1, MAX_TEXT)]
    object: Annotated[str | None, _text(0, 255), AfterValidator(_empty_is_none)] = None
    verb: Annotated[str | None, _text(0, 64), AfterValidator(_empty_is_none)] = None
    contact: Annotated[bool | None, BeforeValidator(_contact)] = None

    _end = field_validator("end_ts")(_end_ts)


HandList = Annotated[
    list[HandAction],
    BeforeValidator(
        _container(list | tuple, "a list of hand actions", MAX_HAND_ACTIONS, "actions; at most {limit} per hand")
    ),
]


class HandActions(_Part):
    shape = 'an object {"left": [...], "right": [...]}'

    left: HandList = []
    right: HandList = []

    @field_validator("left", "right")
    @classmethod
    def _one_hand_in_order(cls, actions: list[HandAction], info: ValidationInfo) -> list[HandAction]:
        """Sorted and never overlapping (touching is allowed); the two hands may overlap."""
        errors: list[tuple[tuple[int | str, ...], str, Any]] = []
        for i in range(1, len(actions)):
            start, previous_end = actions[i].start_ts, actions[i - 1].end_ts
            if start < previous_end:
                where = f"hand_actions.{info.field_name}[{i - 1}]"
                why = "actions of one hand are sorted and may touch but not overlap"
                errors.append(((i, "start_ts"), f"{start} is before the end {previous_end} of {where}; {why}", start))
        if errors:
            raise _rule_errors(errors)
        return actions


def _nesting(subtasks: list[Subtask]) -> list[Subtask]:
    """Sorted by start; any two disjoint (touching counts) or nested; enclosing first on a tie.

    One pass with a stack of the open enclosing subtasks (a laminar family), O(n).
    """
    errors: list[tuple[tuple[int | str, ...], str, Any]] = []
    stack: list[tuple[int, float, float]] = []
    previous: tuple[int, float, float] | None = None
    for i, subtask in enumerate(subtasks):
        start, end = subtask.start_ts, subtask.end_ts
        if previous is not None and start < previous[1]:
            where = f"subtasks[{previous[0]}].start_ts {previous[1]}"
            errors.append(((i, "start_ts"), f"{start} is before {where}; list subtasks sorted by start_ts", start))
            continue
        previous = (i, start, end)
        while stack and stack[-1][2] <= start:  # ended at or before this start: disjoint
            stack.pop()
        if stack and end > stack[-1][2]:
            j, s_j, e_j = stack[-1]
            if s_j == start:
                why = "starts with {} and encloses it; when two subtasks start together, list the enclosing one first"
            else:
                why = (
                    "partially overlaps {}; two subtasks must be disjoint (touching ends count as disjoint) "
                    "or one must contain the other"
                )
            errors.append(((i,), f"[{start}, {end}] " + why.format(f"subtasks[{j}] [{s_j}, {e_j}]"), None))
            continue
        stack.append(previous)
    if errors:
        raise _rule_errors(errors)
    return subtasks


class Label(_Part):
    """The writable fields of one outcome label; a field passed as None is unset (its default)."""

    shape = "an object of label fields"

    outcome: Annotated[str, _choice(OUTCOMES)]
    progress: Fraction = None
    quality: Score = None
    speed: Score = None
    subtasks: Annotated[
        list[Subtask],
        BeforeValidator(
            _container(
                list | tuple, "a list of {label, start_ts, end_ts, outcome}", MAX_SUBTASKS, "subtasks; at most {limit}"
            )
        ),
    ] = []
    hand_actions: HandActions = HandActions()
    mistake_type: Tag = ""
    recovery_type: Tag = ""
    failure_stage: Tag = ""
    autonomy_level: Annotated[str, _choice(AUTONOMY_LEVELS, empty_ok=True)] = ""
    model_version: Annotated[str, _text(0, 255)] = ""
    evaluation_membership: Annotated[str, _choice(EVALUATION_MEMBERSHIPS, empty_ok=True)] = ""
    leakage_groups: Annotated[
        dict[Annotated[str, BeforeValidator(_group_key)], Annotated[str, _text(1, 255)]],
        BeforeValidator(_container(dict, "an object of group ids")),
    ] = {}
    source: Annotated[str, _choice(SOURCES)] = "human"
    source_metadata: Annotated[
        dict[
            Annotated[str, BeforeValidator(_metadata_key)],
            Annotated[str | bool | int | float, BeforeValidator(_metadata_value)],
        ],
        BeforeValidator(_container(dict, "a flat object", MAX_METADATA_KEYS, "keys; at most {limit}")),
    ] = {}
    confidence: Fraction = None
    labeled_by: Annotated[str | None, _text(0, NAME_CHARS), AfterValidator(_empty_is_none)] = None

    @model_validator(mode="before")
    @classmethod
    def _none_is_unset(cls, fields: Any) -> Any:
        return {key: value for key, value in fields.items() if value is not None}

    _subtasks = field_validator("subtasks")(_nesting)

    @field_validator("leakage_groups")
    @classmethod
    def _in_key_order(cls, groups: dict[str, str]) -> dict[str, str]:
        return {key: groups[key] for key in LEAKAGE_GROUP_KEYS if key in groups}

    @field_validator("model_version")
    @classmethod
    def _no_model_for_a_demonstration(cls, version: str, info: ValidationInfo) -> str:
        if version and info.data.get("autonomy_level") == "human_demonstration":
            raise ValueError(
                f"must be empty for a human demonstration (autonomy_level is human_demonstration, model_version is "
                f"{version!r}); drop model_version or set the autonomy_level the policy ran under"
            )
        return version

    @field_validator("confidence")
    @classmethod
    def _only_for_a_model(cls, confidence: float | None, info: ValidationInfo) -> float | None:
        source = info.data.get("source")
        if confidence is not None and source is not None and source != "model":
            raise ValueError(
                f'is only allowed when source is "model" (source is {source!r}); drop confidence or set source="model"'
            )
        return confidence


#: What a missing required field is told besides "is required".
_REQUIRED = {
    "outcome": f": one of {', '.join(OUTCOMES)}",
    "label": " (1 to 500 characters)",
    "action": " (1 to 500 characters)",
}


def _violation(error: Any) -> Violation:
    """One pydantic error as a violation: its field path and the project's message."""
    loc, kind = error["loc"], error["type"]
    if loc[-1:] == ("[key]",):  # a key of source_metadata or leakage_groups
        loc = loc[:-1] if isinstance(loc[-2], str) else loc[:-2]
    elif kind in ("extra_forbidden", "invalid_key"):
        key, parent = loc[-1], loc[:-1]
        if not parent:
            if key in READ_ONLY_FIELDS:
                return Violation(key, "is read-only (set by the store on every version); leave it out")
            return Violation(key, f"unknown field; writable fields are {', '.join(WRITABLE_FIELDS)}")
        part = Subtask if parent[0] == "subtasks" else HandActions if len(parent) == 1 else HandAction
        return Violation(_path(loc if isinstance(key, str) else parent), unknown_key(key, tuple(part.model_fields)))
    if kind == "missing":
        return Violation(_path(loc), "is required" + _REQUIRED.get(loc[-1], ""))
    value, limits = error["input"], error.get("ctx", {})
    if kind == "string_type":
        return Violation(_path(loc), f"must be a string, got {type(value).__name__} {describe(value)}")
    if kind == "string_too_short":
        n = limits["min_length"]
        return Violation(_path(loc), f'must have at least {n} character{"s" if n != 1 else ""}, got ""')
    if kind == "string_too_long":
        return Violation(_path(loc), f"has {len(value)} characters; at most {limits['max_length']} are allowed")
    return Violation(_path(loc), plain_message(error["msg"]))


def _path(loc: tuple[Any, ...]) -> str:
    """``("subtasks", 2, "end_ts")`` -> ``subtasks[2].end_ts``."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def check_label(fields: dict[str, Any], duration: float | None) -> dict[str, Any]:
    """:func:`strands_robots.outcomes.model.validate_label` (see there)."""
    try:
        label = Label.model_validate(fields, context={"duration": duration})
    except PydanticError as exc:
        raise OutcomeValidationError([_violation(e) for e in exc.errors(include_url=False)]) from None
    return label.model_dump()

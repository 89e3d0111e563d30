"""Input checks shared by every label writer: each raises ``LabelValidationError``
naming the field and the remedy, before anything is stored.

Booleans, numbers and integers go through the rules of :mod:`strands_robots.arguments`
(``bool_argument``, ``number_argument``, ``int_argument``); the messages are this store's own."""

from __future__ import annotations

import numbers
from typing import Any

from strands_robots.arguments import ANY_NUMBER, NAME_CHARS, bool_argument, int_argument, number_argument
from strands_robots.episode_labels.vocab import FAILURE_MODES, MAX_NOTE_CHARS, QUALITY_GRADES
from strands_robots.errors import LabelValidationError, did_you_mean, quoted
from strands_robots.storage.episode_index import MAX_EPISODE_INDEX
from strands_robots.storage.episode_index import episode_index as episode_index  # the one rule, checks.episode_index


def boolean(value: Any, what: str) -> bool:
    """A real boolean (``numpy.bool_`` accepted); ``"true"``, ``1`` and ``None`` refused."""
    return bool_argument(
        value,
        lambda v: LabelValidationError(f"{what} must be true or false (a real boolean), got {type(v).__name__} {v!r}."),
    )


def finite_number(value: Any, what: str) -> float | int:
    """A finite number (:func:`~strands_robots.arguments.number_argument`, no bounds): ints
    stay ints, anything else becomes a float; ``bool``, text, NaN and infinity refused."""

    def refuse(v: Any) -> LabelValidationError:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):  # numpy.bool_ is no numbers.Real either
            return LabelValidationError(f"{what} must be a finite number, got {type(v).__name__} {quoted(v)}.")
        return LabelValidationError(
            f"{what} must be a finite number, got {quoted(v)}; NaN and infinity cannot be stored."
        )

    as_float = number_argument(value, refuse, ANY_NUMBER)
    if type(value) is float:  # most values: no abstract-class check (~1 us a value)
        return as_float
    return int(value) if isinstance(value, numbers.Integral) else as_float


def non_negative_int(value: Any, what: str) -> int:
    """A non-negative integer that fits int64 (``bool`` refused)."""
    return int_argument(
        value,
        lambda v: LabelValidationError(f"{what} must be a non-negative integer, got {type(v).__name__} {quoted(v)}."),
        minimum=0,
        maximum=MAX_EPISODE_INDEX,
    )


def text(value: Any, what: str, *, limit: int = MAX_NOTE_CHARS) -> str:
    """A string of at most ``limit`` characters that encodes as UTF-8 (no lone surrogates)."""
    if not isinstance(value, str):
        raise LabelValidationError(f"{what} must be a string, got {type(value).__name__}.")
    if len(value) > limit:
        raise LabelValidationError(
            f"{what} is {len(value)} characters; the limit is {limit}. Shorten it (keep details elsewhere)."
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LabelValidationError(
            f"{what} is not valid Unicode text ({exc.reason}); decode the bytes as UTF-8 first."
        ) from exc
    return value


def name(value: Any, what: str) -> str:
    """A short identifier string (model id, reviewer, benchmark)."""
    return text(value, what, limit=NAME_CHARS)


def quality(value: Any, what: str = "quality", *, context: str = "") -> str:
    """One of ``QUALITY_GRADES``.

    Args:
        value: The grade to check.
        what: The field's name in the message.
        context: The public function refusing it (``annotate_episode``), said first.
    """
    return one_of(value, what, QUALITY_GRADES, context)


def failure_mode(value: Any, *, context: str = "") -> str | None:
    """``None`` or one of ``FAILURE_MODES`` (``context`` as in :func:`quality`)."""
    return None if value is None else one_of(value, "failure_mode", FAILURE_MODES, context, "None or ")


def one_of(value: Any, what: str, words: tuple[str, ...], context: str = "", alternative: str = "") -> str:
    """``value`` when it is one of ``words``, else refused naming them (``context`` said first)."""
    if not isinstance(value, str) or value not in words:
        prefix = f"{context}: " if context else ""
        hint = did_you_mean(value, words)
        raise LabelValidationError(f"{prefix}{what} must be {alternative}one of {words}, got {value!r}.{hint}")
    return value

"""Public-API arguments checked with pydantic, refused with a typed error naming the remedy.

Each checker validates one kind of argument with a pydantic ``TypeAdapter`` and turns
pydantic's ``ValidationError`` into :class:`~strands_robots.errors.LabelArgumentError`
(a :class:`LabelValidationError` that is also a ``TypeError``, so callers of the other
``strands_robots`` implementation that catch ``TypeError`` keep working). Values are
never coerced into something else: ``"no"`` is not a boolean, ``5`` is not a path.

Numbers are checked against one set of :class:`Limits` per kind of number (:data:`FPS`,
:data:`SECONDS`, :data:`HELD_OUT_SHARE`, :data:`UNIT_FRACTION`, :data:`SPEED_THRESHOLD`), so every entry point
taking an fps, a number of seconds or a fraction accepts and refuses the same values.

pydantic is imported on first need: the plain cases (an ``str`` or ``Path`` of plain
text, a ``bool``, a ``list`` of ``str``, an exact ``int`` or ``float``) are accepted by an
exact pre-check in each checker, so a process that only reads or annotates labels never
pays pydantic's import. ``tests/core/test_arguments.py`` checks every public checker
against the documented rule. The pre-check stays by the one-implementation rule: without
it (pydantic for every value) ``read_labels`` of 10,000 episodes took 0.34 s instead of
0.12 s, ``annotate_episode`` 0.41 s instead of 0.13 s and ``filter_episodes`` 0.24 s
instead of 0.13 s (``benchmarks/compare_upstream.py``, rows ``read``, ``annotate1`` and
``filter``, build ``noprecheck``; docs/performance.md, "Guard rails").
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path, PosixPath, WindowsPath
from typing import Annotated, Any, NamedTuple

from strands_robots.errors import LabelArgumentError, LabelValidationError, quoted


def _plain_path_text(value: str | Path) -> str | Path:
    text = str(value)
    if "\x00" in text:
        raise ValueError("it contains a NUL byte")
    if not encodes_utf8(text):
        raise ValueError("it is not valid Unicode (surrogates not allowed)")
    return value


@functools.cache
def _adapter(kind: str) -> Any:
    """The pydantic ``TypeAdapter`` of one kind of argument (built once, on first need)."""
    from pydantic import AfterValidator, StrictBool, StrictStr, TypeAdapter

    types: dict[str, Any] = {
        "path": Annotated[StrictStr | Path, AfterValidator(_plain_path_text)],
        "flag": StrictBool,
        "names": list[StrictStr] | None,
        "items": list[Any],
    }
    return TypeAdapter(types[kind])


def _validation_error() -> type[Exception]:
    from pydantic import ValidationError

    return ValidationError


#: Types the path pre-check accepts as they are (anything else goes to pydantic).
_PLAIN_PATH_TYPES = (str, PosixPath, WindowsPath)


def _plain_path(value: Any) -> bool:
    """True when pydantic's path adapter would accept ``value`` unchanged (exact types only)."""
    if type(value) not in _PLAIN_PATH_TYPES:
        return False
    text = value if type(value) is str else str(value)
    return "\x00" not in text and (text.isascii() or encodes_utf8(text))


def encodes_utf8(text: str) -> bool:
    """True when ``text`` has no lone surrogate (UTF-8 can encode it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: pydantic's wording of a refused value -> plain words (no "Value error, ", no "Input should be").
_PYDANTIC_WORDS = (
    (re.compile(r"^Input should be a valid integer.*$", re.S), "not a whole number: type one as digits, e.g. 3."),
    (re.compile(r"^Input should be a valid number.*$", re.S), "not a number: type one such as 0.5 or 3."),
    (re.compile(r"^Input should be a valid string.*$", re.S), "not text: write it between quotes"),
    (re.compile(r"^Input should be (.*?)\.?$", re.S), r"it must be \1"),
)


def plain_message(message: str) -> str:
    """A pydantic refusal's message in the project's words (every entry point shows this one).

    ``Value error, ...`` loses its prefix; ``Input should be a valid integer, unable to parse
    string as an integer`` is ``not a whole number: type one as digits, e.g. 3.``.
    """
    message = str(message).removeprefix("Value error, ")
    for pattern, plain in _PYDANTIC_WORDS:
        if pattern.match(message):
            return pattern.sub(plain, message)
    return message


def _refusal(exc: Any, what: str, value: Any, remedy: str) -> LabelArgumentError:
    problem = exc.errors(include_url=False)[0]
    message = plain_message(str(problem.get("msg", "invalid")))
    where = "".join(f"[{p!r}]" for p in problem.get("loc", ()) if not isinstance(p, str))
    shown = quoted(value, 80)
    return LabelArgumentError(f"{what}{where} is refused: {message} (got {type(value).__name__} {shown}); {remedy}")


def path_argument(value: Any, what: str = "root") -> Path:
    """A directory or file argument: ``str`` or ``pathlib.Path``.

    Raises:
        LabelArgumentError: another type, a NUL byte or a lone surrogate.
    """
    if _plain_path(value):
        return Path(value) if type(value) is str else value  # (a Path is immutable: no copy)
    try:
        return Path(_adapter("path").validate_python(value))
    except _validation_error() as exc:
        raise _refusal(
            exc, what, value, f"pass {what} as a path string or pathlib.Path, e.g. 'data/my_dataset'."
        ) from None


def names_argument(value: Any, what: str, example: str) -> list[str] | None:
    """None or a list (tuple, set) of strings.

    Raises:
        LabelArgumentError: a number, a bare string, or an item that is not a string.
    """
    if value is None:
        return None
    if type(value) is list and all(type(v) is str for v in value):
        return list(value)
    try:
        return _adapter("names").validate_python(value)
    except _validation_error() as exc:
        raise _refusal(exc, what, value, f"pass a list of strings such as {example}, or None for no filter.") from None


def items_argument(value: Any, what: str, example: str) -> list[Any]:
    """A list (or any iterable but a string or a mapping) of items, checked one by one by the caller.

    Raises:
        LabelArgumentError: a number, None, a string or a mapping.
    """
    if isinstance(value, str | bytes | dict):
        raise LabelArgumentError(
            f"{what} must be a list, got {type(value).__name__} {quoted(value, 60)}; pass a list such as {example}."
        )
    if type(value) is list:
        return list(value)
    try:
        return _adapter("items").validate_python(value)
    except _validation_error() as exc:
        raise _refusal(exc, what, value, f"pass a list such as {example}.") from None


@functools.cache
def _int_adapter(minimum: int | None, maximum: int | None) -> Any:
    """The strict-int adapter of one range (built once per range, on first need)."""
    from pydantic import Field, StrictInt, TypeAdapter

    return TypeAdapter(Annotated[StrictInt, Field(ge=minimum, le=maximum)])


def int_argument(
    value: Any,
    refuse: Callable[[Any], Exception],
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """A real integer within ``[minimum, maximum]``; numpy integers are taken as their value.

    ``True``, ``4.0``, ``"4"`` and ``None`` are refused (pydantic's ``StrictInt``). An exact
    ``int`` or a numpy integer is checked without pydantic, with the same answer
    (``tests/core/test_arguments.py``).

    Args:
        value: The argument as passed.
        refuse: Builds the entry point's own typed error from ``value`` (its message names
            the rule and the remedy), so each public function keeps its error and wording.
        minimum: Smallest accepted value (None: no bound).
        maximum: Largest accepted value (None: no bound).

    Returns:
        The value as a Python ``int``.

    Raises:
        Exception: ``refuse(value)`` when ``value`` is not such an integer.
    """
    if type(value) is int:
        if (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
            return value
        raise refuse(value)
    np = sys.modules.get("numpy")  # a process that has not imported numpy cannot hold a numpy value
    if np is not None and isinstance(value, np.integer):  # its value is a plain int: the same check
        number = int(value)
        if (minimum is None or number >= minimum) and (maximum is None or number <= maximum):
            return number
        raise refuse(value)
    try:
        return int(_int_adapter(minimum, maximum).validate_python(value))
    except _validation_error():
        raise refuse(value) from None


def bool_argument(value: Any, refuse: Callable[[Any], Exception]) -> bool:
    """A real ``True``/``False``; ``numpy.bool_`` is taken as its value.

    ``"true"``, ``1`` and ``None`` are refused (pydantic's ``StrictBool``); an exact ``bool``
    is checked without pydantic. The error is the entry point's own (``refuse(value)``), so
    its type and wording stay as they were.

    Raises:
        Exception: ``refuse(value)`` when ``value`` is not a boolean.
    """
    if type(value) is bool:
        return value
    np = sys.modules.get("numpy")
    candidate = bool(value) if np is not None and isinstance(value, np.bool_) else value
    try:
        return bool(_adapter("flag").validate_python(candidate))
    except _validation_error():
        raise refuse(value) from None


class Limits(NamedTuple):
    """The bounds of one kind of number; ``None`` leaves a side open.

    Args:
        gt: Values must be greater than this.
        ge: Values must be at least this.
        lt: Values must be less than this.
        le: Values must be at most this.
    """

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def holds(self, x: float) -> bool:
        """True when the finite float ``x`` is within the bounds."""
        return (
            (self.gt is None or x > self.gt)
            and (self.ge is None or x >= self.ge)
            and (self.lt is None or x < self.lt)
            and (self.le is None or x <= self.le)
        )

    def describe(self) -> str:
        """``"greater than 0"``, ``"from 0 to 1"``, ``"strictly between 0 and 1"`` (empty when unbounded)."""
        low = f"{self.gt:g}" if self.gt is not None else f"{self.ge:g}" if self.ge is not None else None
        high = f"{self.lt:g}" if self.lt is not None else f"{self.le:g}" if self.le is not None else None
        if low is not None and high is not None:
            if self.gt is not None and self.lt is not None:
                return f"strictly between {low} and {high}"
            if self.ge is not None and self.le is not None:
                return f"from {low} to {high}"
            return f"{'above' if self.gt is not None else 'at least'} {low} and {'below' if self.lt is not None else 'at most'} {high}"
        if low is not None:
            return f"greater than {low}" if self.gt is not None else f"{low} or greater"
        if high is not None:
            return f"less than {high}" if self.lt is not None else f"{high} or less"
        return ""


#: Any finite number (no bounds).
ANY_NUMBER = Limits()

#: Characters of a name saying who labelled (a judge ``model``, a ``reviewer``, a segment
#: ``annotator``, an outcome's ``labeled_by``): one limit in every label store, so a name
#: accepted in one role is accepted in every other.
NAME_CHARS = 255

#: The one set of limits of each kind of number taken at the public API (every entry point
#: taking such a value checks it against these, so one value is accepted everywhere or nowhere).
#: Frames per second (of a dataset, or given for seconds-based spans): positive.
FPS = Limits(gt=0)
#: Seconds (a timestamp from the episode start, a duration, a smoothing window): 0 or more.
SECONDS = Limits(ge=0)
#: A share of the candidate episodes held out for evaluation: never nothing, never everything.
HELD_OUT_SHARE = Limits(gt=0, lt=1)
#: A fraction from 0 to 1 inclusive (task progress, a confidence, a tolerance on a share).
UNIT_FRACTION = Limits(ge=0, le=1)
#: A base-speed threshold in the base-velocity feature's units (m/s): positive.
SPEED_THRESHOLD = Limits(gt=0)
#: A magnitude that may be zero (a dead band, a hysteresis share of a range, a minimum range).
NON_NEGATIVE = Limits(ge=0)


@functools.cache
def _number_adapter(limits: Limits) -> Any:
    """The strict, finite float adapter of one set of limits (built once per set, on first need)."""
    from pydantic import Field, StrictFloat, TypeAdapter

    bounds = Field(allow_inf_nan=False, gt=limits.gt, ge=limits.ge, lt=limits.lt, le=limits.le)
    return TypeAdapter(Annotated[StrictFloat, bounds])


def number_argument(value: Any, refuse: Callable[[Any], Exception], limits: Limits = ANY_NUMBER) -> float:
    """A finite real number within ``limits``, as a Python ``float``.

    Accepted: ``int``, ``float``, numpy integers and floats, ``Fraction``, ``Decimal``
    (pydantic's ``StrictFloat``). Refused: ``True``/``False``, text (``"0.5"``), ``None``,
    NaN, infinity and integers too large for a float. An exact ``int`` or ``float`` is
    checked without pydantic, with the same answer (``tests/core/test_arguments.py``).

    Args:
        value: The argument as passed.
        refuse: Builds the entry point's own typed error from ``value`` (see
            :func:`number_refusal` for the usual one).
        limits: The bounds, one of this module's sets (:data:`FPS`, :data:`SECONDS`,
            :data:`HELD_OUT_SHARE`, :data:`UNIT_FRACTION`) for those kinds of number.

    Returns:
        The value as a ``float``.

    Raises:
        Exception: ``refuse(value)`` when ``value`` is not such a number.
    """
    kind = type(value)
    if kind is float or kind is int:
        try:
            x = float(value)
        except OverflowError:  # an int past 1.8e308
            raise refuse(value) from None
        if x - x == 0.0 and limits.holds(x):  # x - x is NaN for NaN and infinity
            return x
        raise refuse(value)
    try:
        return float(_number_adapter(limits).validate_python(value))
    except _validation_error():
        raise refuse(value) from None


def number_refusal(
    what: str, limits: Limits, remedy: str, error: type[Exception] = LabelValidationError
) -> Callable[[Any], Exception]:
    """The usual ``refuse`` of :func:`number_argument`: ``error`` naming the bounds, the value and the remedy.

    The message reads ``"{what} must be a finite number {bounds}, got {type} {value}; {remedy}"``.
    """

    def refuse(value: Any) -> Exception:
        shown = quoted(value, 60)
        bounds = limits.describe()
        return error(
            f"{what} must be a finite number{' ' + bounds if bounds else ''}, got {type(value).__name__} {shown}; {remedy}"
        )

    return refuse

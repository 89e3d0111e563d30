"""Public-API arguments checked with pydantic, refused with a typed error naming the remedy.

Each checker validates one kind of argument with a pydantic ``TypeAdapter`` and turns
pydantic's ``ValidationError`` into :class:`~strands_robots.errors.LabelArgumentError`
(a :class:`LabelValidationError` that is also a ``TypeError``, so callers of the other
``strands_robots`` implementation that catch ``TypeError`` keep working). Values are
never coerced into something else: ``"no"`` is not a boolean, ``5`` is not a path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, StrictBool, StrictStr, TypeAdapter, ValidationError

from strands_robots.errors import LabelArgumentError


def _plain_path_text(value: str | Path) -> str | Path:
    text = str(value)
    if "\x00" in text:
        raise ValueError("it contains a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"it is not valid Unicode ({exc.reason})") from exc
    return value


_PATH = TypeAdapter(Annotated[StrictStr | Path, AfterValidator(_plain_path_text)])
_FLAG = TypeAdapter(StrictBool)
_NAMES = TypeAdapter(list[StrictStr] | None)
_ITEMS = TypeAdapter(list[Any])


def _refusal(exc: ValidationError, what: str, value: Any, remedy: str) -> LabelArgumentError:
    problem = exc.errors(include_url=False)[0]
    message = str(problem.get("msg", "invalid")).removeprefix("Value error, ")
    where = "".join(f"[{p!r}]" for p in problem.get("loc", ()) if not isinstance(p, str))
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return LabelArgumentError(f"{what}{where} is refused: {message} (got {type(value).__name__} {shown}); {remedy}")


def path_argument(value: Any, what: str = "root") -> Path:
    """A directory or file argument: ``str`` or ``pathlib.Path``.

    Raises:
        LabelArgumentError: another type, a NUL byte or a lone surrogate.
    """
    try:
        return Path(_PATH.validate_python(value))
    except ValidationError as exc:
        raise _refusal(
            exc, what, value, f"pass {what} as a path string or pathlib.Path, e.g. 'data/my_dataset'."
        ) from None


def optional_path_argument(value: Any, what: str) -> Path | None:
    """:func:`path_argument`, with None passed through."""
    return None if value is None else path_argument(value, what)


def flag_argument(value: Any, what: str) -> bool:
    """A real ``True``/``False`` (``"no"``, ``0`` and ``None`` are refused).

    Raises:
        LabelArgumentError: not a bool.
    """
    try:
        return _FLAG.validate_python(value)
    except ValidationError as exc:
        raise _refusal(exc, what, value, f"pass {what}=True or {what}=False.") from None


def names_argument(value: Any, what: str, example: str) -> list[str] | None:
    """None or a list (tuple, set) of strings.

    Raises:
        LabelArgumentError: a number, a bare string, or an item that is not a string.
    """
    try:
        return _NAMES.validate_python(value)
    except ValidationError as exc:
        raise _refusal(exc, what, value, f"pass a list of strings such as {example}, or None for no filter.") from None


def items_argument(value: Any, what: str, example: str) -> list[Any]:
    """A list (or any iterable but a string or a mapping) of items, checked one by one by the caller.

    Raises:
        LabelArgumentError: a number, None, a string or a mapping.
    """
    if isinstance(value, str | bytes | dict):
        raise LabelArgumentError(
            f"{what} must be a list, got {type(value).__name__} {repr(value)[:60]}; pass a list such as {example}."
        )
    try:
        return _ITEMS.validate_python(value)
    except ValidationError as exc:
        raise _refusal(exc, what, value, f"pass a list such as {example}.") from None

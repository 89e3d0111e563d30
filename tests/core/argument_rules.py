"""The argument rules as docs/architecture.md ("One store contract") and the docstrings of
``strands_robots.arguments`` state them, written as pydantic types: the answer every public
checker must give.

- a path: a ``str`` or ``Path`` (pydantic's ``StrictStr | Path``) whose text has no NUL byte
  and is valid Unicode;
- a flag: ``StrictBool``; names: ``list[StrictStr] | None``; items: any list;
- an integer: ``StrictInt`` within its bounds;
- a number: ``StrictFloat``, finite, within its limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StrictBool, StrictFloat, StrictInt, StrictStr, TypeAdapter, ValidationError


def _plain_text(value: str | Path) -> str | Path:
    text = str(value)
    if "\x00" in text:
        raise ValueError("it contains a NUL byte")
    text.encode("utf-8")  # a lone surrogate: UnicodeEncodeError, a ValueError
    return value


RULES = {
    "path": TypeAdapter(Annotated[StrictStr | Path, AfterValidator(_plain_text)]),
    "flag": TypeAdapter(StrictBool),
    "names": TypeAdapter(list[StrictStr] | None),
    "items": TypeAdapter(list[Any]),
}


def int_rule(minimum: int | None, maximum: int | None) -> TypeAdapter[Any]:
    """``StrictInt`` within ``[minimum, maximum]``."""
    return TypeAdapter(Annotated[StrictInt, Field(ge=minimum, le=maximum)])


def number_rule(limits: Any) -> TypeAdapter[Any]:
    """``StrictFloat``, finite, within ``limits`` (an ``arguments.Limits``)."""
    bounds = Field(allow_inf_nan=False, gt=limits.gt, ge=limits.ge, lt=limits.lt, le=limits.le)
    return TypeAdapter(Annotated[StrictFloat, bounds])


def rule_answer(rule: TypeAdapter[Any], value: Any) -> tuple[str, Any]:
    """``("ok", validated)`` or ``("refused", None)``."""
    try:
        return ("ok", rule.validate_python(value))
    except ValidationError:
        return ("refused", None)

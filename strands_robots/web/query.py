"""Query strings and JSON bodies of the label server, validated with pydantic models.

Each page declares the parameters it reads as a pydantic model (unknown parameters are
ignored, an empty value is the default) and reads them with :func:`parse_query`, which
answers a bad value with a 400 naming the parameter, the value and what it must be
(docs/review.md, "HTTP endpoints"). Numbers are written with the digits 0-9 only: ``-1``,
``+1``, ``1.0``, ``1_000``, `` 1`` and ``²`` are refused, not read as something else.

A JSON body is read with :func:`parse_body` into a :class:`BodyModel` (unknown keys
refused, values of the declared JSON type only, never coerced: ``5`` is not a string).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from strands_robots.web.context import RequestError

#: Longest number accepted in a query string, digits (an int64 has at most 19).
MAX_DIGITS = 19


class QueryModel(BaseModel):
    """Base of the query models: unknown parameters ignored, values immutable."""

    model_config = ConfigDict(extra="ignore", frozen=True)


_COUNT_RULE = f"must be a non-negative integer written with the digits 0-9 (at most {MAX_DIGITS} digits)"


def _digits(value: Any) -> Any:
    if isinstance(value, str) and not (value.isascii() and value.isdigit() and len(value) <= MAX_DIGITS):
        raise ValueError(_COUNT_RULE)
    return value


def count(upper: int | None = None) -> Any:
    """The type of a non-negative integer parameter; values above ``upper`` are read as ``upper``."""
    clamp = AfterValidator(lambda v: v if upper is None else min(v, upper))
    return Annotated[int, BeforeValidator(_digits), Field(ge=0, description=_COUNT_RULE), clamp]


def one_of(accepted: tuple[str, ...]) -> Any:
    """The type of an optional parameter taking one of ``accepted`` (the refusal lists them)."""
    rule = f"is not one of {', '.join(accepted)}"
    return Annotated[Literal[accepted] | None, Field(description=rule)]  # type: ignore[valid-type]


def _problem(model: type[BaseModel], error: Any, given: Mapping[str, str]) -> str:
    loc = error.get("loc") or ("query",)
    name = str(loc[0])
    shown = repr(given[name]) if name in given else "(missing)"
    if len(shown) > 40:
        shown = shown[:37] + "...'"
    if error.get("type") == "value_error":  # our own validators' sentences
        rule = str(error.get("msg", "")).removeprefix("Value error, ")
    else:
        field = model.model_fields.get(name)
        rule = (field.description if field is not None else None) or str(error.get("msg", "is invalid"))
    return f"{name}={shown} {rule}."


def parse_query[M: BaseModel](model: type[M], params: Mapping[str, str]) -> M:
    """``params`` (a request's query parameters) read into ``model``.

    Args:
        model: The page's :class:`QueryModel`.
        params: Parameter name -> value (the last one when a name is repeated).

    Returns:
        The model, with defaults for missing and empty parameters.

    Raises:
        RequestError: 400 naming every bad parameter, its value and the rule.
    """
    given = {k: v for k, v in params.items() if v != ""}
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        seen: list[str] = []
        for error in exc.errors(include_url=False):
            problem = _problem(model, error, given)
            if problem not in seen:
                seen.append(problem)
        raise RequestError(" ".join(seen), 400) from None


class BodyModel(BaseModel):
    """Base of the body models: unknown keys refused, values immutable, no coercion."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def parse_body[M: BaseModel](model: type[M], body: Any) -> M:
    """A request's JSON body read into ``model``.

    Args:
        model: The endpoint's :class:`BodyModel`; each field's ``description`` is the rule
            the refusal states (``"a string"``).
        body: The decoded JSON body.

    Returns:
        The model, with defaults for missing keys.

    Raises:
        RequestError: 400 for a body that is not an object, unknown keys (listed with the
            keys the request takes) or a value of another type (naming the key and the rule).
    """
    keys = sorted(model.model_fields)
    if not isinstance(body, dict):
        raise RequestError(f"the body must be a JSON object with {', '.join(keys)}.", 400)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        unknown = sorted({str(e["loc"][0]) for e in errors if e.get("type") == "extra_forbidden" and e.get("loc")})
        if unknown:
            raise RequestError(f"unknown keys {unknown}; this request takes {keys}.", 400) from None
        problems = []
        for error in errors:
            name = str(error["loc"][0]) if error.get("loc") else "body"
            field = model.model_fields.get(name)
            if error.get("type") == "value_error":  # our own validators' sentences
                rule = str(error.get("msg", "")).removeprefix("Value error, ")
                shown = repr(body.get(name))
                problem = f"{name}={shown if len(shown) <= 40 else shown[:37] + '...'} {rule}."
            else:
                rule = (field.description if field is not None else None) or str(error.get("msg", "is invalid"))
                problem = f"{name} must be {rule}."
            if problem not in problems:
                problems.append(problem)
        raise RequestError(" ".join(problems), 400) from None

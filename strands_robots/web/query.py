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

from collections.abc import Callable, Mapping
from typing import Annotated, Any, get_args, get_origin

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from strands_robots.errors import quoted
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


#: The type of a non-negative integer parameter (``Annotated[Count, at_most(n)]`` caps it).
Count = Annotated[int, BeforeValidator(_digits), Field(ge=0, description=_COUNT_RULE)]


def at_most(upper: int) -> AfterValidator:
    """A :data:`Count`'s cap: values above ``upper`` are read as ``upper``."""
    return AfterValidator(lambda v: min(v, upper))


def one_of(accepted: tuple[str, ...] | Callable[[], tuple[str, ...]]) -> AfterValidator:
    """The check of an optional text parameter taking one of ``accepted`` (a tuple, or a function
    giving the current ones; the refusal lists them); empty text is no value.

    Used as ``Annotated[str | None, one_of(("low", "high"))]``.
    """

    def check(value: str | None) -> str | None:
        choices = accepted() if callable(accepted) else accepted
        if value not in (None, "", *choices):
            raise ValueError(f"is not one of {', '.join(choices)}")
        return value

    return AfterValidator(check)


def _rule(error: Any, field: Any) -> str:
    """What a refused value must be: our own validator's sentence, else the field's ``description``."""
    if error.get("type") == "value_error":
        return str(error.get("msg", "")).removeprefix("Value error, ")
    return (field.description if field is not None else None) or str(error.get("msg", "is invalid"))


def _problem(model: type[BaseModel], error: Any, given: Mapping[str, str]) -> str:
    name = str((error.get("loc") or ("query",))[0])
    shown = quoted(given[name], 40) if name in given else "(missing)"
    return f"{name}={shown} {_rule(error, model.model_fields.get(name))}."


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
        problems = dict.fromkeys(_problem(model, error, given) for error in exc.errors(include_url=False))
        raise RequestError(" ".join(problems), 400) from None


class BodyModel(BaseModel):
    """Base of the body models: unknown keys refused, values immutable, no coercion."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _nested(annotation: Any) -> tuple[bool, type[BaseModel]] | None:
    """``(is a list, model)`` of a field holding a body model or a list of them, else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return False, annotation
    if get_origin(annotation) is list:
        inner = _nested(get_args(annotation)[0])
        return (True, inner[1]) if inner is not None and not inner[0] else None
    for arg in get_args(annotation):  # X | None, Annotated[X, ...]
        found = _nested(arg)
        if found is not None:
            return found
    return None


def _locate(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[str, type[BaseModel] | None, Any]:
    """``(path, model, field)`` of pydantic's error location ``loc`` in a body of ``model``.

    The path follows fields and list positions of body models (``segments[2].slots``) and
    stops at the field whose value is wrong (a key inside ``slots`` is not a field). ``model``
    is the body model the path ends in (None when it ends in a field's value); ``field`` the
    last field passed (its ``description`` is the rule).
    """
    path, field = "", None
    here: type[BaseModel] | None = model
    items: type[BaseModel] | None = None
    for part in loc:
        if here is not None and isinstance(part, str) and part in here.model_fields:
            field = here.model_fields[part]
            path = f"{path}.{part}" if path else part
            nested = _nested(field.annotation)
            here, items = None, None
            if nested is not None:
                if nested[0]:
                    items = nested[1]
                else:
                    here = nested[1]
        elif items is not None and isinstance(part, int):
            path += f"[{part}]"
            here, items = items, None
        else:
            break
    return path, here, field


def _body_problem(model: type[BaseModel], error: Any, unknown: dict[str, tuple[type[BaseModel], list[str]]]) -> str:
    """The sentence of one pydantic error (``unknown``: every unknown key, by object path)."""
    loc = tuple(error.get("loc") or ())
    if error.get("type") == "extra_forbidden" and loc:
        path = _locate(model, loc[:-1])[0]
        holder, keys = unknown[path]
        takes = sorted(holder.model_fields)
        if path:
            return f"{path} has unknown keys {sorted(keys)}; it takes {takes}."
        return f"unknown keys {sorted(keys)}; this request takes {takes}."
    path, here, field = _locate(model, loc)
    name = path or "body"
    if error.get("type") == "value_error":
        return f"{name}={quoted(error.get('input'), 40)} {_rule(error, field)}."
    if here is not None and path.endswith("]"):  # a list item that is not an object
        return f"{name} must be an object with {', '.join(here.model_fields)}."
    return f"{name} must be {_rule(error, field)}."


def body_problems(model: type[BaseModel], errors: list[Any]) -> list[str]:
    """One sentence per bad field of a body of ``model`` (pydantic's ``errors()``), in the body's order.

    Unknown keys are one sentence per object, listing the keys that object takes.
    """
    unknown: dict[str, tuple[type[BaseModel], list[str]]] = {}
    for error in errors:
        loc = tuple(error.get("loc") or ())
        if error.get("type") == "extra_forbidden" and loc:
            path, here, _ = _locate(model, loc[:-1])
            unknown.setdefault(path, (here or model, []))[1].append(str(loc[-1]))
    return list(dict.fromkeys(_body_problem(model, error, unknown) for error in errors))


def parse_body[M: BaseModel](model: type[M], body: Any) -> M:
    """A request's JSON body read into ``model``.

    Args:
        model: The endpoint's :class:`BodyModel`; each field's ``description`` is the rule
            the refusal states (``"a string"``). A field may hold body models or a list of
            them (a segment list); their fields are named by path (``segments[2].slots``).
        body: The decoded JSON body.

    Returns:
        The model, with defaults for missing keys.

    Raises:
        RequestError: 400 for a body that is not an object, or naming every bad field:
            unknown keys (listed with the keys that object takes), a value of another type
            (the key and the rule) or a value a validator refuses (the key, the value and why).
    """
    keys = sorted(model.model_fields)
    if not isinstance(body, dict):
        raise RequestError(f"the body must be a JSON object with {', '.join(keys)}.", 400)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise RequestError(" ".join(body_problems(model, exc.errors(include_url=False))), 400) from None

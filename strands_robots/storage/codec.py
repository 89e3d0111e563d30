"""The canonical JSON encoding of every JSON sidecar.

UTF-8 without ASCII escaping, keys sorted, indent 2, trailing newline, no NaN or
Infinity (issue "episode_labels.json", File format). Python's ``json`` reads what the
other ``strands_robots`` implementation writes (it escapes non-ASCII; both are JSON).
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec

from strands_robots.errors import LabelValidationError, SidecarError


def dump_canonical(document: Any) -> bytes:
    """Encode ``document`` canonically.

    Raises:
        LabelValidationError: the document holds NaN or Infinity (not JSON).
    """
    try:
        text = json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2, allow_nan=False)
    except ValueError as exc:
        raise LabelValidationError(
            f"a value is NaN or infinite, which JSON cannot store ({exc}); pass a finite number or None."
        ) from exc
    return _utf8(text, document)


def _utf8(text: str, value: Any) -> bytes:
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError as exc:
        where = surrogate_at(value) or "?"
        raise LabelValidationError(
            f"the text at {where} is not valid Unicode ({exc.reason}: a lone surrogate such as '\\ud800'); pass "
            "text decoded from UTF-8 (e.g. bytes.decode('utf-8', errors='replace')). Nothing was stored."
        ) from exc


def surrogate_at(value: Any, where: str = "$") -> str | None:
    """JSON path of the first string (value or key) that UTF-8 cannot encode (a lone surrogate), or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if surrogate_at(str(key)) is not None:
                return f"{where} (a key)"
            found = surrogate_at(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = surrogate_at(item, f"{where}[{i}]")
            if found:
                return found
    return None


def dump_line(obj: Any) -> bytes:
    """One compact JSON Lines record (sorted keys, UTF-8, newline-terminated, no NaN)."""
    try:
        text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:
        raise LabelValidationError(
            f"a value is NaN or infinite, which JSON cannot store ({exc}); pass a finite number or None."
        ) from exc
    return _utf8(text, obj)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: JSON allows the spelling, no float holds it
        raise ValueError(f"the number {text} is out of range (it would be read as infinity)")
    return value


def load_json_bytes(data: bytes, path: Any) -> Any:
    """Decode JSON bytes strictly (valid UTF-8, no NaN/Infinity).

    Raises:
        SidecarError: the bytes are not valid UTF-8 JSON; the message names ``path``.
    """
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        pass
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SidecarError(
            f"{path} is not valid JSON ({exc}); it may be truncated or written by another tool. "
            "It was left untouched: restore it from a backup or move it away and record the labels again."
        ) from exc


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, str, numbers, bools, None), much faster than
    ``copy.deepcopy`` for label records."""
    return msgspec.json.decode(msgspec.json.encode(value))


def is_finite_number(value: Any) -> bool:
    """True for an int or float (not bool) that is finite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)

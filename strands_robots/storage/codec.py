"""The canonical JSON encoding of every JSON sidecar.

UTF-8 without ASCII escaping, keys sorted, indent 2, trailing newline, no NaN or
Infinity (``docs/sidecar-format.md``): byte for byte ``json.dumps(document,
ensure_ascii=False, sort_keys=True, indent=2) + "\n"``. It is produced by the C encoder
(compact) and re-indented by ``msgspec.json.format``, which keeps every token as written
(Python's own encoder falls back to pure Python whenever it indents: ~10x slower), and a
large records mapping is encoded in batches so that a writer can stream it
(:func:`iter_canonical`). ``tests/storage/test_codec_streamed_encoding.py`` holds the bytes to
``json.dumps``. It stays beside ``json.dumps`` by the one-implementation rule: a 10,000-episode
document takes 2.1 s with ``json.dumps(indent=2)`` and 0.55 s here (every fold or
write-through of such a file; ``benchmarks/compare_upstream.py``, row ``verdicts``). Python's ``json`` reads what the other
``strands_robots`` implementation writes (it escapes non-ASCII; both are JSON). That
implementation can write the non-JSON tokens ``NaN``, ``Infinity`` and ``-Infinity``
(e.g. a ``cumulative_reward`` of NaN); they are read as null with a
:class:`~strands_robots.errors.NonFiniteNumberWarning`, and never written back.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from strands_robots.arguments import encodes_utf8
from strands_robots.errors import LabelValidationError, NonFiniteNumberWarning, SidecarError

#: Compact, sorted, non-ASCII kept: ``json``'s C encoder (it is only used without indent).
_COMPACT = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
#: Records per chunk of a large mapping in :func:`iter_canonical`.
BATCH = 1000


def dump_canonical(document: Any) -> bytes:
    """Encode ``document`` canonically.

    Raises:
        LabelValidationError: the document holds NaN or Infinity (not JSON), or text
            that is not valid Unicode.
    """
    return b"".join(iter_canonical(document))


def iter_canonical(document: Any, batch: int = BATCH) -> Iterator[bytes]:
    """:func:`dump_canonical` of ``document`` in chunks of about ``batch`` records.

    The chunks joined are byte for byte the canonical encoding. A top-level mapping
    whose value is a mapping of more than ``batch`` entries (the records) is encoded
    ``batch`` entries at a time, so a writer streaming the chunks to its file never
    holds the whole text nor its UTF-8 copy. An error surfaces while iterating, before
    the last chunk.

    Raises:
        LabelValidationError: see :func:`dump_canonical`.
    """
    if not (_str_keyed(document) and any(_large(value, batch) for value in document.values())):
        yield _indented(document, document, b"") + b"\n"
        return
    keys = sorted(document)
    yield b"{\n"
    for i, key in enumerate(keys):
        value = document[key]
        head = (b",\n  " if i else b"  ") + _utf8(json.encoder.encode_basestring(key), document, newline=False)
        if not _large(value, batch):
            yield head + b": " + _indented(value, document, b"  ")
            continue
        yield head + b": {\n"
        names = sorted(value)
        for start in range(0, len(names), batch):
            part = {name: value[name] for name in names[start : start + batch]}
            body = _indented(part, document, b"  ")[2:-4]  # the entries, without "{\n" and "\n  }"
            yield (b",\n" if start else b"") + body
        yield b"\n  }"
    yield b"\n}\n"


def _str_keyed(value: Any) -> bool:
    return type(value) is dict and all(type(key) is str for key in value)


def _large(value: Any, batch: int) -> bool:
    return len(value) > batch and _str_keyed(value) if type(value) is dict else False


def _indented(value: Any, document: Any, pad: bytes) -> bytes:
    """The indent-2 encoding of ``value`` nested ``len(pad) // 2`` levels deep (no newline)."""
    text = msgspec.json.format(_utf8(_compact(value), document, newline=False), indent=2)
    return text.replace(b"\n", b"\n" + pad) if pad else text


def _utf8(text: str, value: Any, *, newline: bool = True) -> bytes:
    try:
        return (text + "\n").encode("utf-8") if newline else text.encode("utf-8")
    except UnicodeEncodeError as exc:
        where = surrogate_at(value) or "?"
        raise LabelValidationError(
            f"the text at {where} is not valid Unicode ({exc.reason}: a lone surrogate such as '\\ud800'); pass "
            "text decoded from UTF-8 (e.g. bytes.decode('utf-8', errors='replace')). Nothing was stored."
        ) from exc


def surrogate_at(value: Any) -> str | None:
    """JSON path of the first string (value or key) that UTF-8 cannot encode (a lone surrogate), or None."""
    return _first_at(value, lambda item: isinstance(item, str) and not encodes_utf8(item))


def non_finite_at(value: Any) -> str | None:
    """JSON path of the first NaN or infinite float in ``value``, or None."""
    return _first_at(value, lambda item: isinstance(item, float) and not math.isfinite(item))


def _first_at(value: Any, bad: Callable[[Any], bool], where: str = "$") -> str | None:
    """JSON path of the first value (or key: ``"$.a (a key)"``) in ``value`` that is ``bad``."""
    if bad(value):
        return where
    if isinstance(value, dict):
        for key, item in value.items():
            if bad(str(key)):
                return f"{where} (a key)"
            found = _first_at(item, bad, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _first_at(item, bad, f"{where}[{i}]")
            if found:
                return found
    return None


def dump_line(obj: Any) -> bytes:
    """One compact JSON Lines record (sorted keys, UTF-8, newline-terminated, no NaN).

    Byte for byte ``json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
    allow_nan=False)`` (one encoder built once, not one per call).
    """
    return _utf8(_compact(obj), obj)


def _compact(value: Any) -> str:
    try:
        return _COMPACT.encode(value)
    except ValueError as exc:
        raise LabelValidationError(
            f"a value is NaN or infinite, which JSON cannot store ({exc}); pass a finite number or None."
        ) from exc


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: JSON allows the spelling, no float holds it
        raise ValueError(f"the number {text} is out of range (it would be read as infinity)")
    return value


def load_json_bytes(data: bytes, path: Any) -> Any:
    """Decode JSON bytes (valid UTF-8; ``NaN``/``Infinity``/``-Infinity`` read as null).

    The non-finite tokens are not JSON but Python's ``json.dump`` writes them by
    default, so a file another tool wrote may hold them. Each reads as ``None`` and one
    :class:`~strands_robots.errors.NonFiniteNumberWarning` names ``path`` and how many
    there were; a field that must be a number or a boolean then fails its own check.

    Raises:
        SidecarError: the bytes are not valid UTF-8 JSON; the message names ``path``.
    """
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        pass
    except RecursionError as exc:
        raise too_deep(path) from exc
    seen: list[str] = []  # the non-finite tokens, each read as None
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=seen.append, parse_float=_finite_float)
    except RecursionError as exc:
        raise too_deep(path) from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise SidecarError(
            f"{path} is not valid JSON ({exc}); it may be truncated or written by another tool. "
            "It was left untouched: restore it from a backup or move it away and record the labels again."
        ) from exc
    if seen:
        warnings.warn(
            f"{path} holds {len(seen)} non-finite number(s) ({', '.join(sorted(set(seen)))}), which JSON cannot "
            "store; each was read as null and will be written as null.",
            NonFiniteNumberWarning,
            stacklevel=2,
        )
    return document


def too_deep(path: Any) -> SidecarError:
    """The error for JSON nested deeper than a reader can hold (``docs/sidecar-format.md``)."""
    return SidecarError(
        f"{path} holds JSON nested deeper than the format can hold (thousands of brackets: not a file this package "
        "or strands-robots writes); it was left untouched. Restore it from a backup or move it away."
    )


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, str, numbers, bools, None): every dict and
    list new, the immutable values shared (``msgspec.to_builtins``; no text encoded and
    decoded again), much faster than ``copy.deepcopy`` for label records."""
    return msgspec.to_builtins(value)

"""The one reader of a text file a person named: a verdicts list, a label set, a mapping.

Every entry point that takes such a file (the CLI's JSON arguments,
:func:`strands_robots.segments.label_sets.load_label_set`,
:func:`strands_robots.segments.imports.load_source` and the CLI's JSON Lines arguments
through :func:`read_json_or_jsonl`,
:func:`strands_robots.outcomes.export.import_outcomes`,
:func:`strands_robots.ssc.behavior.read_behavior_annotation`) reads it here, so a missing file,
a directory, bytes that are not UTF-8 (:func:`read_user_text`) and a file that cannot be
read get one :class:`~strands_robots.errors.InputFileError` each, naming the path, with
the remedy for that case on the error (``remedy``) and at the end of its message; a
missing file's is :class:`~strands_robots.errors.InputFileNotFoundError`, also a
``FileNotFoundError``. What the file holds (JSON, JSON Lines, one label per line) is the
caller's to parse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from strands_robots.errors import InputFileError, InputFileNotFoundError, LabelValidationError

#: Remedies, one per way the read fails (``{kind}`` is the caller's description of the file).
MISSING_REMEDY = "pass the path of an existing {kind}."
DIRECTORY_REMEDY = "pass the path of the {kind} inside it, not the directory."
NOT_UTF8_REMEDY = "save it as UTF-8 text and retry."
UNREADABLE_REMEDY = "make it readable (check its permissions) and retry."

#: A UTF-8 byte order mark, which Windows tools write first (PowerShell 5's ``Out-File
#: -Encoding utf8``, older Notepad): not part of the content; RFC 8259 section 8.1 lets a JSON
#: parser ignore it, as the dataset's metadata reader does (:mod:`strands_robots.dataset.text`).
UTF8_BOM = b"\xef\xbb\xbf"


def read_user_bytes(path: str | Path, *, what: str = "the file", kind: str = "file") -> bytes:
    """The bytes of a file a person named (for a caller that decodes them itself).

    Args:
        path: The file (as given; not resolved here).
        what: How the message names the file, e.g. ``"the outcome file"``.
        kind: What the remedy asks for, e.g. ``"JSON Lines file written by export_outcomes"``.

    Returns:
        The file's bytes, without a leading UTF-8 byte order mark (:data:`UTF8_BOM`).

    Raises:
        InputFileNotFoundError: ``path`` does not exist (also a ``FileNotFoundError``).
        InputFileError: ``path`` is a directory or cannot be read; the message names
            ``path`` and ends with the error's ``remedy``.
    """
    path = Path(path)
    try:
        return path.read_bytes().removeprefix(UTF8_BOM)
    except OSError as exc:
        raise _os_refusal(exc, path, what, kind) from exc


def read_user_text(path: str | Path, *, what: str = "the file", kind: str = "file") -> str:
    """The text of a UTF-8 file a person named.

    Args:
        path: The file (as given; not resolved here).
        what: How the message names the file, e.g. ``"the label set file"``.
        kind: What the remedy asks for, e.g. ``"JSON file (a list such as [...])"``.

    Returns:
        The decoded text (``str``), without a leading byte order mark (:data:`UTF8_BOM`).

    Raises:
        InputFileError: ``path`` does not exist, is a directory, is not UTF-8 or cannot be
            read; the message names ``path`` and ends with the error's ``remedy``.
    """
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8").removeprefix(UTF8_BOM.decode())
    except UnicodeDecodeError as exc:
        raise _refusal(f"{what} {path} is not UTF-8 text ({exc.reason} at byte {exc.start})", NOT_UTF8_REMEDY) from exc
    except OSError as exc:
        raise _os_refusal(exc, path, what, kind) from exc


def read_json_or_jsonl(path: str | Path, *, what: str, kind: str, remedy: str) -> Any:
    """A JSON document, or a JSON Lines file as the list of its lines' values.

    A ``*.jsonl`` file is JSON Lines; any other is one JSON document, or JSON Lines when it
    is not valid JSON but its first line is. Blank lines are skipped. Lines end at line feeds
    only (jsonlines.org: the separator is ``\\n``): U+2028, U+2029 or U+0085 inside a string, as
    ``json.dumps(..., ensure_ascii=False)`` writes them, is text of its line, not a break.

    Args:
        path, what, kind: As :func:`read_user_text`.
        remedy: How the refusal of JSON that does not parse ends.

    Raises:
        InputFileError: as :func:`read_user_text`.
        LabelValidationError: the document (with the line and column where it breaks), or a
            line of a JSON Lines file (named by its number), is not valid JSON.
    """
    text = read_user_text(path, what=what, kind=kind)
    broken = None  # why the text is not one JSON document
    if Path(path).suffix != ".jsonl":
        try:
            return json.loads(text)
        except ValueError as exc:
            broken = exc
    lines = text.split("\n")  # not str.splitlines(): it also breaks at U+2028, U+0085, ...
    if broken is not None:
        first = next((line for line in lines if line.strip()), "")
        try:
            json.loads(first)
        except ValueError:  # not JSON Lines either: where the document breaks
            raise LabelValidationError(f"{path} is not valid JSON ({broken}); {remedy}") from None
    values = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                values.append(json.loads(line))
            except ValueError as exc:
                raise LabelValidationError(f"{path} line {number} is not valid JSON ({exc}); {remedy}") from exc
    return values


def _os_refusal(exc: OSError, path: Path, what: str, kind: str) -> InputFileError:
    if isinstance(exc, FileNotFoundError):
        remedy = MISSING_REMEDY.format(kind=kind)
        return InputFileNotFoundError(f"{what} {path} does not exist; {remedy}", remedy=remedy)
    if isinstance(exc, IsADirectoryError):
        return _refusal(f"{what} {path} is a directory", DIRECTORY_REMEDY.format(kind=kind))
    return _refusal(f"{what} {path} cannot be read ({exc.strerror or exc})", UNREADABLE_REMEDY)


def _refusal(problem: str, remedy: str) -> InputFileError:
    return InputFileError(f"{problem}; {remedy}", remedy=remedy)

"""Reading a metadata text file (``*.jsonl``) as UTF-8 JSON Lines, with typed errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from strands_robots.errors import DatasetError


def json_object_lines(path: Path, remedy: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line of a JSON Lines metadata file (a UTF-8 BOM allowed).

    Lines end at line feeds only (jsonlines.org): LeRobot 2.x wrote these files with the
    ``jsonlines`` package, which leaves U+2028, U+2029 and U+0085 unescaped inside a string
    (a task's text), so they are not line breaks here.

    Args:
        path: The ``*.jsonl`` file.
        remedy: What to do about a bad line, ending the error message (e.g. "repair or
            remove that line").

    Raises:
        DatasetError: The file is not UTF-8 (LeRobot writes its metadata as UTF-8), or a line
            is not JSON or not a JSON object.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not valid UTF-8 ({exc}); re-save it as UTF-8 text.") from exc
    for lineno, line in enumerate(text.split("\n"), start=1):  # not splitlines(): see above
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path} line {lineno} is not JSON ({exc}); {remedy}.") from exc
        if not isinstance(record, dict):
            raise DatasetError(f"{path} line {lineno} is not a JSON object; {remedy}.")
        yield lineno, record

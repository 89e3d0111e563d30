"""Reading a metadata text file (``*.jsonl``) as UTF-8, with a typed error when it is not."""

from __future__ import annotations

from pathlib import Path

from strands_robots.errors import DatasetError


def read_utf8(path: Path) -> str:
    """The text of ``path``.

    Raises:
        DatasetError: The file is not valid UTF-8 (LeRobot writes its metadata as UTF-8).
    """
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path} is not valid UTF-8 ({exc}); re-save it as UTF-8 text.") from exc

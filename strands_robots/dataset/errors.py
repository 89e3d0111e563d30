"""Errors specific to reading a LeRobot dataset.

They subclass :class:`strands_robots.errors.DatasetError` (itself a ``ValueError``) so one
``except DatasetError`` catches every reader failure, and also the built-in type a caller
would naturally catch (``FileNotFoundError`` for a missing file).
"""

from __future__ import annotations

from strands_robots.errors import DatasetError, MissingFileError

__all__ = ["FrameIndexError", "MissingFileError"]


class FrameIndexError(DatasetError, IndexError):
    """A requested ``frame_index`` is outside ``[0, length)`` of its episode."""

    http_status = 404

"""Errors specific to reading a LeRobot dataset.

They subclass :class:`strands_robots.errors.DatasetError` (itself a ``ValueError``) so one
``except DatasetError`` catches every reader failure, and also the built-in type a caller
would naturally catch (``FileNotFoundError`` for a missing file).
"""

from __future__ import annotations

from strands_robots.errors import DatasetError


class MissingFileError(DatasetError, FileNotFoundError):
    """A data parquet or video mp4 the metadata points to is not on disk.

    The message names the file and the episode that needs it.
    """

    def __str__(self) -> str:  # OSError formats (errno, strerror); keep our sentence
        return str(self.args[0]) if self.args else ""


class FrameIndexError(DatasetError, IndexError):
    """A requested ``frame_index`` is outside ``[0, length)`` of its episode."""

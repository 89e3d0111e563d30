"""Read-only LeRobot dataset reader (v3.x, v2.1, v2.0); no lerobot import.

``open_dataset(root)`` -> :class:`Dataset` with ``episodes`` keyed by the real
``episode_index``, ``read_frames`` and ``decode_frames``. See ``docs/dataset.md``.
"""

from strands_robots.dataset.episodes import Episode, EpisodeTable, VideoRef
from strands_robots.dataset.errors import FrameIndexError, MissingFileError
from strands_robots.dataset.frames import Frames, read_frames
from strands_robots.dataset.problems import Problem
from strands_robots.dataset.reader import Dataset, open_dataset


def __getattr__(name: str):  # PyAV and Pillow load only when video decoding is used
    if name == "decode_frames":
        from strands_robots.dataset.video import decode_frames

        return decode_frames
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Dataset",
    "Episode",
    "EpisodeTable",
    "FrameIndexError",
    "Frames",
    "MissingFileError",
    "Problem",
    "VideoRef",
    "decode_frames",
    "open_dataset",
    "read_frames",
]

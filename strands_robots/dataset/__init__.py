"""Read-only LeRobot dataset reader (v3.x, v2.1, v2.0); no lerobot import.

``open_dataset(root)`` -> :class:`Dataset` with ``episodes`` keyed by the real
``episode_index``, ``read_frames`` and ``decode_frames``. See ``docs/dataset.md``.

The names below load on first use, so a submodule without heavy imports (e.g.
:mod:`.cache`) can be imported without numpy, pyarrow, PyAV or Pillow.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "Dataset": "reader",
    "Episode": "episodes",
    "EpisodeTable": "episodes",
    "FrameIndexError": "errors",
    "Frames": "frames",
    "MissingFileError": "errors",
    "Problem": "problems",
    "VideoRef": "episodes",
    "check_dataset": "reader",
    "decode_frames": "video",
    "open_dataset": "reader",
    "read_frames": "frames",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


__all__ = sorted(_WHERE)

"""The episode-index check: the one rule for an argument that names an episode.

An episode is named by its real ``episode_index``: a non-negative integer that fits int64
(LeRobot stores the column as int64). numpy integers are taken as their value; ``True``,
``4.0``, ``"4"`` and ``None`` are refused (the integer rule of
:func:`strands_robots.arguments.int_argument`). Every store and the judge tools call
:func:`episode_index`, each raising its own typed error with one message.
"""

from __future__ import annotations

import sys
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.errors import LabelValidationError, quoted

#: episode_index is int64 in LeRobot's parquet files.
MAX_EPISODE_INDEX = 2**63 - 1


def refusal(value: Any, what: str = "episode") -> str:
    """The message refusing ``value`` as an episode index (it names the rule and the remedy)."""
    import numbers

    np = sys.modules.get("numpy")  # a process that has not imported numpy cannot hold a numpy value
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return f"{what} must be a non-negative integer episode_index, got the boolean {bool(value)}."
    if isinstance(value, numbers.Integral):
        index = int(value)
        if index < 0:
            return f"{what} must be a non-negative integer episode_index, got {quoted(index)}."
        return f"{what} is {quoted(index)}, beyond the largest episode_index a dataset can hold ({MAX_EPISODE_INDEX}, int64)."
    return (
        f"{what} must be a non-negative integer episode_index, got {type(value).__name__} {quoted(value)}; "
        "pass the dataset's real episode_index as an int."
    )


def episode_index(value: Any, what: str = "episode", error: type[Exception] = LabelValidationError) -> int:
    """``value`` as an episode index (module rule).

    Args:
        value: The argument as passed.
        what: The argument's name in the message (``"episode"``, ``"annotations[3].episode"``).
        error: The caller's typed error, built from the message.

    Returns:
        The index as a Python ``int``.

    Raises:
        Exception: ``error(message)`` (``LabelValidationError`` by default) for anything else.
    """
    return int_argument(value, lambda v: error(refusal(v, what)), minimum=0, maximum=MAX_EPISODE_INDEX)


def is_record_key(key: Any) -> bool:
    """Whether ``key`` is the decimal spelling of an episode_index (``"17"``, never ``"07"``,
    ``"+1"`` or ``"¹"``): the key of a record in every sidecar (docs/sidecar-format.md)."""
    return isinstance(key, str) and key.isascii() and key.isdigit() and str(int(key)) == key

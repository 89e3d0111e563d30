"""The ``{"status", "content"}`` envelope every judge tool returns (docs/judge.md, "The four tools").

A tool never raises: :func:`run_tool` turns any exception, expected or not, into an
error envelope whose text names the tool, the episode and the remedy. Every call
builds a fresh dict (strands adds ``toolUseId`` to the returned dict in place).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from strands_robots.errors import (
    QUOTE_CHARS,
    LabelsError,
    LabelsNotFoundError,
    LabelValidationError,
    MissingFileError,
    bounded_message,
    quoted,
)

logger = logging.getLogger(__name__)


class ToolInputError(LabelValidationError):
    """An argument a model passed to a judge tool is out of its domain."""


#: A camera's video file the tool needs is not on disk (the one missing-file error; raise it
#: with :data:`MISSING_VIDEO_REMEDY`).
MissingVideoError = MissingFileError

#: What a judge agent does about a missing mp4.
MISSING_VIDEO_REMEDY = (
    "call sample_frames with include_images=false for a state-only answer, or restore the video file."
)


def text_block(text: str) -> dict[str, Any]:
    """A ``{"text": ...}`` content block."""
    return {"text": text}


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf floats replaced by None and numpy scalars made plain."""
    kind = type(value)
    if kind is float:  # the common leaves first (a payload holds thousands of them)
        return value if math.isfinite(value) else None
    if kind is int or kind is str or kind is bool or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_block(value: Any) -> dict[str, Any]:
    """A ``{"json": ...}`` content block (NaN-free, so every provider can serialise it)."""
    return {"json": json_safe(value)}


def success(*blocks: dict[str, Any]) -> dict[str, Any]:
    """A fresh success envelope holding ``blocks``."""
    return {"status": "success", "content": list(blocks)}


def error(tool: str, episode: Any, message: str, remedy: str) -> dict[str, Any]:
    """A fresh error envelope: ``"<tool> failed for episode <episode>: <message> Remedy: <remedy>"``.

    The episode is quoted and the message bounded as every message is
    (:func:`strands_robots.errors.quoted`, :func:`strands_robots.errors.bounded_message`).
    """
    shown = episode if isinstance(episode, str) and len(episode) <= QUOTE_CHARS else quoted(episode)  # as written
    where = f"episode {shown}" if episode is not None else "this call"
    text = f"{tool} failed for {where}: {bounded_message(message).rstrip()} Remedy: {remedy}"
    return {"status": "error", "content": [text_block(text)]}


def remedy_for(exc: BaseException) -> str:
    """The remedy an exception carries (``LabelsError.remedy``; the message often carries a finer one).

    A built-in ``FileNotFoundError`` gets the remedy of a missing sidecar; anything else is
    unexpected.
    """
    if isinstance(exc, ImportError) and not isinstance(exc, LabelsError):  # MissingExtraError names its extra
        missing = (exc.name or ("pyarrow" if "pyarrow" in str(exc) else "")).split(".")[0]  # pyarrow.parquet: pyarrow
        if missing == "pyarrow":
            return (
                "this tool requires pyarrow to read parquet: install it (pip install 'pyarrow>=15'; it is a "
                "dependency of strands-robots-labels and comes with the lerobot extra of strands-robots)."
            )
        return f"install the missing package ({missing or exc}) and call the tool again."
    if isinstance(exc, LabelsError):
        return exc.remedy
    if isinstance(exc, FileNotFoundError):
        return LabelsNotFoundError.remedy
    return "this is unexpected: skip this episode and report the message to a human."


def run_tool(tool: str, episode: Any, body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``body`` and return its envelope, or an error envelope on any exception.

    Args:
        tool: Tool name for the message.
        episode: Episode argument as the model passed it (for the message).
        body: Builds the success envelope.

    Returns:
        ``body()``, or ``error(...)`` naming the tool, the episode and the remedy.
    """
    try:
        return body()
    except Exception as exc:  # noqa: BLE001 - a tool must never raise into the agent loop
        if not isinstance(exc, LabelsError | FileNotFoundError):
            logger.warning("%s: unexpected %s for episode %s", tool, type(exc).__name__, quoted(episode), exc_info=True)
        message = bounded_message(exc) or type(exc).__name__
        if not isinstance(exc, LabelsError):
            message = f"{type(exc).__name__}: {message}"
        return error(tool, episode, message, remedy_for(exc))

"""The ``{"status", "content"}`` envelope every judge tool returns (issue 4, "Tools").

A tool never raises: :func:`run_tool` turns any exception, expected or not, into an
error envelope whose text names the tool, the episode and the remedy. Every call
builds a fresh dict (strands adds ``toolUseId`` to the returned dict in place).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from typing import Any

from strands_robots.errors import (
    DatasetError,
    EpisodeNotFoundError,
    FrameDecodeError,
    LabelsError,
    LabelValidationError,
    RootNotFoundError,
    SidecarError,
    StorageError,
    UnsafeRootError,
)

logger = logging.getLogger(__name__)


class ToolInputError(LabelValidationError):
    """An argument a model passed to a judge tool is out of its domain."""


class MissingVideoError(DatasetError, FileNotFoundError):
    """A camera's video file the tool needs is not on disk."""


def text_block(text: str) -> dict[str, Any]:
    """A ``{"text": ...}`` content block."""
    return {"text": text}


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf floats replaced by None and numpy scalars made plain."""
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
    """A fresh error envelope: ``"<tool> failed for episode <episode>: <message> Remedy: <remedy>"``."""
    where = f"episode {episode}" if episode is not None else "this call"
    text = f"{tool} failed for {where}: {message.rstrip()} Remedy: {remedy}"
    return {"status": "error", "content": [text_block(text)]}


def remedy_for(exc: BaseException) -> str:
    """The default remedy for an exception type (the message often carries a finer one)."""
    if isinstance(exc, UnsafeRootError | RootNotFoundError):
        return "pass the dataset directory that holds meta/info.json, inside the allowed roots, without '..'."
    if isinstance(exc, ImportError) and not isinstance(exc, LabelsError):  # MissingExtraError names its extra
        if _missing_module(exc) == "pyarrow":
            return (
                "this tool requires pyarrow to read parquet: install it (pip install 'pyarrow>=15'; it is a "
                "dependency of strands-robots-labels and comes with the lerobot extra of strands-robots)."
            )
        return f"install the missing package ({_missing_module(exc) or exc}) and call the tool again."
    if isinstance(exc, EpisodeNotFoundError):
        return "use an episode_index the dataset has (load_episode lists it) and that has a verdict."
    if isinstance(exc, MissingVideoError):
        return "call sample_frames with include_images=false for a state-only answer, or restore the video file."
    if isinstance(exc, FrameDecodeError):
        return "retry with include_images=false for a state-only answer."
    if isinstance(exc, ToolInputError | LabelValidationError):
        return "fix the argument as the message says and call the tool again."
    if isinstance(exc, DatasetError):
        return "the dataset cannot be read as asked: fix it as the message says, or skip this episode."
    if isinstance(exc, FileNotFoundError):
        return "record the verdicts first (strands-labels verdicts ROOT FILE), then label."
    if isinstance(exc, SidecarError):
        return "a human must move the unusable episode_labels.json away; skip this episode."
    if isinstance(exc, StorageError):
        return "the write failed and nothing changed; retry later or skip this episode."
    if isinstance(exc, LabelsError):
        return "fix the input as the message says, or skip this episode."
    return "this is unexpected: skip this episode and report the message to a human."


def _missing_module(exc: ImportError) -> str:
    """Top-level name of the module an ImportError is about (``"pyarrow"`` for ``pyarrow.parquet``)."""
    name = exc.name or ""
    if not name and "pyarrow" in str(exc):
        name = "pyarrow"
    return name.split(".")[0]


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
            logger.warning("%s: unexpected %s for episode %r", tool, type(exc).__name__, episode, exc_info=True)
        message = str(exc) or type(exc).__name__
        if not isinstance(exc, LabelsError):
            message = f"{type(exc).__name__}: {message}"
        return error(tool, episode, message, remedy_for(exc))


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (NaN-free)."""
    return json.dumps(json_safe(value), ensure_ascii=False, separators=(",", ":"))

"""Export saved segmentations as JSON Lines (docs/segments.md, "Import and export")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, check_choice
from strands_robots.segments.convert import frame_to_seconds, segments_to_subtasks
from strands_robots.segments.episodes import open_dataset_if_present
from strands_robots.segments.store import list_segmentations
from strands_robots.storage.atomic import atomic_write_bytes
from strands_robots.storage.codec import dump_line

FORMATS = ("segments", "subtasks")


def export_segmentations(
    root: str | Path,
    path: str | Path | None = None,
    *,
    format: str = "segments",
    fps: float | None = None,
    labels_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """The export lines, written to ``path`` (atomically) when given.

    Args:
        root: Dataset root.
        path: Output JSONL file; None returns the lines only.
        format: ``segments`` or ``subtasks``.
        fps: Only for a root without LeRobot metadata (seconds need it).

    Raises:
        LabelValidationError: unknown format, or ``subtasks`` with no fps known.
        StorageError: the file could not be written.
    """
    check_choice("format", format, FORMATS)
    dataset = open_dataset_if_present(root)
    rate = float(dataset.fps) if dataset is not None else fps
    if format == "subtasks" and rate is None:
        raise LabelValidationError("subtasks are in seconds and the fps is unknown; pass fps= (CLI: --fps).")
    lines = []
    for record in list_segmentations(root, labels_dir=labels_dir):
        if format == "subtasks":
            assert rate is not None
            lines.append({"episode_index": record["episode_index"], "subtasks": segments_to_subtasks(record, rate)})
            continue
        if rate is not None:
            seconds = [
                dict(seg, start_ts=frame_to_seconds(seg["start"], rate), end_ts=frame_to_seconds(seg["end"], rate))
                for seg in record["segments"]
            ]
            record = dict(record, segments=seconds)
        lines.append(dict(record, fps=rate))
    if path is not None:
        atomic_write_bytes(Path(path), b"".join(dump_line(line) for line in lines))
    return lines

"""Readability check used before multi-sidecar edits (``strands-labels remap``)."""

from __future__ import annotations

from pathlib import Path

from strands_robots.outcomes.labels import load_store


def check_readable(root: str | Path, *, labels_dir: str | Path | None = None) -> None:
    """Raise now if ``episode_outcomes.jsonl`` exists but cannot be used (foreign, newer, corrupt)."""
    load_store(root, labels_dir)

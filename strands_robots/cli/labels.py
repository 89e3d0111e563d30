"""Commands on ``episode_labels.json``: verdicts, annotate, filter, agreement, show, remap, flush."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the label commands to ``app``."""

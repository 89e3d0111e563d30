"""``strands-labels info ROOT``: a dataset summary."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add ``info`` to ``app``."""

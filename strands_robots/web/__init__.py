"""The local label server: the review page and, later, the segment tool.

Needs the ``web`` extra (starlette, uvicorn, jinja2, matplotlib). Entry points:
``create_app(root, ...)`` (:mod:`.app`), ``serve(root, ...)`` and ``BackgroundServer``
(:mod:`.server`); ``strands-labels review ROOT`` on the command line. Security rules
are in :mod:`.security`; ``docs/review.md`` describes the page.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "create_app": "strands_robots.web.app",
    "serve": "strands_robots.web.server",
    "BackgroundServer": "strands_robots.web.server",
}


def __getattr__(name: str) -> Any:  # imported on first use: the extra stays optional
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'strands_robots.web' has no attribute {name!r}")


__all__ = ["BackgroundServer", "create_app", "serve"]

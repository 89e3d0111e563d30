"""Why the label rules drop an episode: the names of ``explain_filter`` kept where 0.5.3 users look.

The rule itself is :mod:`strands_robots.episode_labels.filter_rule`; ``explain_filter`` and
``DROP_REASONS`` live in :mod:`strands_robots.selection` (above both stores, it adds the
outcome and held-out reasons) and load here on first use.
"""

from __future__ import annotations

from typing import Any

from strands_robots.episode_labels.vocab import LABEL_DROP_REASONS

__all__ = ["LABEL_DROP_REASONS"]


def __getattr__(name: str) -> Any:
    if name in ("DROP_REASONS", "explain_filter"):
        from strands_robots import selection  # above this store: only on first use

        return getattr(selection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The review queue: open disputes first, then every episode, filterable.

Rows are :func:`strands_robots.report.summary.summarize` rows of the dataset's own
episodes (records of episodes the dataset does not have are ignored). Filters match the
effective values (a current human review's grade, failure mode and overrule applied);
``none`` selects episodes without a value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES
from strands_robots.report.summary import NONE, summarize
from strands_robots.web.context import next_after
from strands_robots.web.query import Count, QueryModel, at_most, one_of, parse_query

#: Filter name -> (row field, accepted values).
FILTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "quality": ("quality", (*QUALITY_GRADES, NONE)),
    "failure_mode": ("failure_mode", (*FAILURE_MODES, NONE)),
    "verdict": ("effective_verdict", ("success", "failure", NONE)),
    "dispute": ("dispute", ("open", "resolved", NONE)),
}
DEFAULT_LIMIT = 200
MAX_LIMIT = 2000


class QueueQuery(QueryModel):
    """``GET /api/queue``'s parameters: the filters (empty: no filter), ``offset`` and ``limit``
    (at most :data:`MAX_LIMIT`; a larger one is read as it)."""

    quality: Annotated[str | None, one_of(FILTERS["quality"][1])] = None
    failure_mode: Annotated[str | None, one_of(FILTERS["failure_mode"][1])] = None
    verdict: Annotated[str | None, one_of(FILTERS["verdict"][1])] = None
    dispute: Annotated[str | None, one_of(FILTERS["dispute"][1])] = None
    offset: Annotated[Count, at_most(1 << 62)] = 0
    limit: Annotated[Count, at_most(MAX_LIMIT)] = DEFAULT_LIMIT

    def filters(self) -> dict[str, str]:
        """The filters given, by name."""
        return {name: value for name in FILTERS if (value := getattr(self, name)) is not None}


def matches(row: Mapping[str, Any], filters: Mapping[str, str]) -> bool:
    """True when ``row`` passes every filter."""
    for name, value in filters.items():
        field = FILTERS[name][0]
        actual = row.get(field)
        if (NONE if actual is None else actual) != value:
            return False
    return True


def build_queue(
    document: Mapping[str, Any],
    episodes: list[int],
    params: Mapping[str, str],
    length_of: Callable[[int], int],
) -> dict[str, Any]:
    """The queue JSON.

    Args:
        document: The sidecar document.
        episodes: The dataset's ``episode_index`` values, sorted.
        params: Query parameters: the filters, ``offset`` and ``limit``.
        length_of: ``episode_index`` -> length in frames (asked only for the listed rows).

    Returns:
        ``disputes`` (every open dispute, unfiltered), ``episodes`` (the filtered page),
        ``matched`` (rows passing the filters), ``total`` (episodes in the dataset),
        ``offset``, ``limit``, ``filters`` and ``counts`` (``open``, ``resolved``,
        ``reviewed``, ``labelled``).

    Raises:
        RequestError: 400 for a bad filter value, ``offset`` or ``limit`` (:class:`QueueQuery`).
    """
    query = parse_query(QueueQuery, params)
    filters, offset, limit = query.filters(), query.offset, query.limit
    records = document.get("episodes", {})
    rows = [summarize(e, records.get(str(e))) for e in episodes]
    disputes = [r for r in rows if r["dispute"] == "open"]
    matched = [r for r in rows if matches(r, filters)] if filters else rows
    page = matched[offset : offset + limit]
    for row in (*disputes, *page):
        row["length"] = length_of(row["episode"])
    return {
        "disputes": disputes,
        "episodes": page,
        "matched": len(matched),
        "total": len(rows),
        "offset": offset,
        "limit": limit,
        "filters": filters,
        "counts": {
            "open": len(disputes),
            "resolved": sum(1 for r in rows if r["dispute"] == "resolved"),
            "reviewed": sum(1 for r in rows if r["review"] is not None),
            "labelled": sum(1 for r in rows if r["verdict"] is not None),
        },
    }


def next_dispute(document: Mapping[str, Any], episodes: list[int], after: int) -> int | None:
    """The first open dispute after episode ``after`` (wrapping around), or None."""
    records = document.get("episodes", {})
    return next_after([e for e in episodes if summarize(e, records.get(str(e)))["dispute"] == "open"], after)

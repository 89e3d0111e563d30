"""A task's label pool and its reference examples (docs/segments.md, "Label pool, reference examples, prefill")."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from strands_robots.segments.store import list_segmentations, query_records, template_ids_of
from strands_robots.segments.templates import (
    REFERENCE_EXAMPLES,
    TEMPLATES,
    all_templates,
    check_cohort,
    cohort_templates,
)


def label_pool(root: str | Path, task: str, *, labels_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The templates that occur in ``task``'s saved segmentations, most frequent first.

    Args:
        root: Dataset root.
        task: Task text exactly as in the dataset's tasks.

    Returns:
        ``[{"template_id", "operation", "surface", "count", "episodes", "labels":
        [{"label", "count"}]}]``: ``count`` segments using the template, in ``episodes``
        distinct episodes; ``labels`` its filled labels, most frequent first. Ties follow
        registry order.
    """
    episodes: dict[str, set[int]] = {}
    labels: dict[str, Counter[str]] = {}

    def count(records: dict[str, dict[str, Any]]) -> None:  # runs under the lock, copies nothing
        for record in records.values():
            if task not in record.get("tasks", []):
                continue
            for tid, seg in zip(template_ids_of(record), record["segments"], strict=True):
                if tid is not None and tid in TEMPLATES:  # a free label, or one of a set not loaded here: none
                    episodes.setdefault(tid, set()).add(record["episode_index"])
                    labels.setdefault(tid, Counter())[seg["label"]] += 1

    query_records(root, count, labels_dir=labels_dir)
    order = {t.id: i for i, t in enumerate(all_templates())}
    return [
        {
            "template_id": tid,
            "operation": TEMPLATES[tid].operation,
            "surface": TEMPLATES[tid].surface,
            "count": labels[tid].total(),
            "episodes": len(episodes[tid]),
            "labels": [{"label": lab, "count": n} for lab, n in labels[tid].most_common()],
        }
        for tid in sorted(labels, key=lambda t: (-labels[t].total(), order[t]))
    ]


def template_choices(root: str | Path, task: str, cohort: str = "robocasa365", **kwargs: Any) -> list[dict[str, Any]]:
    """A segment dropdown: the task's pool first, then every other template of the cohort.

    Each item is :meth:`Template.to_dict` plus ``in_pool`` (bool) and ``count``.
    """
    pool = {p["template_id"]: p["count"] for p in label_pool(root, task, **kwargs)}
    templates = cohort_templates(cohort)
    ordered = sorted(templates, key=lambda t: -pool.get(t.id, 0))  # stable: the pool first, ties in registry order
    return [dict(t.to_dict(), in_pool=t.id in pool, count=pool.get(t.id, 0)) for t in ordered]


def reference_examples(
    root: str | Path,
    task: str,
    *,
    exclude: int | None = None,
    cohort: str | None = None,
    limit: int | None = None,
    labels_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Saved segmentations of ``task`` marked as references, never ``exclude`` (the episode being annotated).

    Args:
        root: Dataset root.
        task: Task text exactly as in the dataset's tasks.
        exclude: The episode being annotated (never its own reference).
        cohort: Only references of this cohort; default every cohort.
        limit: At most this many; default the cohort's count in
            :data:`~strands_robots.segments.templates.REFERENCE_EXAMPLES` (2, Allex 3); with
            no ``cohort``, the count of the first reference's cohort.
        labels_dir: Where the sidecar lives (default ``root``).

    Returns:
        Up to ``limit`` records (without history), lowest ``episode_index`` first.

    Raises:
        LabelValidationError: an unknown cohort.
    """
    if cohort is not None:
        check_cohort(cohort)
    records = list_segmentations(root, task=task, reference=True, labels_dir=labels_dir)
    records = [r for r in records if r["episode_index"] != exclude and (cohort is None or r.get("cohort") == cohort)]
    if limit is None:
        chosen = cohort or (records[0].get("cohort") if records else None)
        limit = REFERENCE_EXAMPLES.get(chosen or "", max(REFERENCE_EXAMPLES.values()))
    return records[: max(0, int(limit))]

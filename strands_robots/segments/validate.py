"""Check a segmentation: structure first, then the cohort's guideline rules.

A segmentation of an episode of ``length`` frames is a list of half-open ``[start, end)``
frame intervals that are contiguous and cover every frame ``0..length`` with no gap or
overlap, each carrying one template (docs/segments.md, "Segments").
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.errors import LabelValidationError
from strands_robots.segments.findings import SEVERITIES, Finding
from strands_robots.segments.guideline_rules import COHORT_RULES, Context, Seg
from strands_robots.segments.motion import DEFAULT_THRESHOLD, check_threshold
from strands_robots.segments.parse import FreeLabel, LabelParseError, coerce_instance, render
from strands_robots.segments.templates import TASK_COMPLETE, check_cohort

#: Frames of the centred moving median applied to the base speed by the navigate rule.
DEFAULT_SMOOTH_FRAMES = 5


@dataclass(frozen=True)
class RawSegment:
    """A segment as given, before any check: ``start``/``end`` may be anything."""

    position: int
    start: Any
    end: Any
    label: Any
    note: Any = None


def _field(segment: Any, name: str) -> Any:
    return segment.get(name) if isinstance(segment, dict) else getattr(segment, name, None)


def raw_segments(segments: Any) -> list[RawSegment]:
    """Read ``segments`` (dicts ``{"start", "end", "label"[, "note"]}``, or objects with those
    attributes; ``label`` may be text, a :class:`TemplateInstance` or ``{"template_id",
    "slots", "modifiers"}``; a dict may also carry ``template_id``/``slots``/``modifiers``
    instead of ``label``).

    Raises:
        LabelValidationError: ``segments`` is not a list of such items.
    """
    if isinstance(segments, str | bytes | dict) or not isinstance(segments, Sequence):
        raise LabelValidationError(
            f"segments must be a list of {{start, end, label}} items, got {type(segments).__name__}."
        )
    out = []
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict) and not hasattr(seg, "start"):
            raise LabelValidationError(f"segments[{i}] must be an object with start, end and label, got {seg!r}.")
        label = _field(seg, "label")
        if _field(seg, "free") is True and isinstance(label, str):
            label = FreeLabel(label)
        elif label is None:
            label = _field(seg, "instance")
        if label is None and _field(seg, "template_id") is not None:
            label = {key: _field(seg, key) for key in ("template_id", "slots", "modifiers")}
        out.append(RawSegment(i, _field(seg, "start"), _field(seg, "end"), label, _field(seg, "note")))
    return out


def whole_frames(value: Any) -> int | None:
    """``value`` as a whole number of frames (an integer, or a float without a fraction), else None."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None if isinstance(value, bool) or not isinstance(value, numbers.Integral) else int(value)


def check_length(length: Any) -> int:
    """A positive integer episode length in frames.

    Raises:
        LabelValidationError: not a positive integer.
    """
    frames = whole_frames(length)
    if frames is None or frames <= 0:
        raise LabelValidationError(f"length must be a positive number of frames, got {length!r}.")
    return frames


def structure(
    length: int, raw: list[RawSegment], cohort: str, failure: str | None = None
) -> tuple[list[Finding], list[Seg]]:
    """Structural findings (blocking kinds) and the parsed, well-formed segments in start order.

    ``failure`` says why the episode did not succeed (None: it did, or it is not known).
    """
    findings: list[Finding] = []
    intervals: list[tuple[int, int, RawSegment]] = []
    for seg in raw:
        start, end = whole_frames(seg.start), whole_frames(seg.end)
        at = (seg.position,)
        if start is None or end is None or start < 0 or start >= end:
            lo = start if start is not None and start >= 0 else 0
            hi = end if end is not None and end > lo else lo
            why = (
                f"segment {seg.position} has start={seg.start!r}, end={seg.end!r}; a segment is [start, end) in whole "
                "frames with 0 <= start < end"
            )
            findings.append(Finding("invalid_interval", lo, hi, why, segments=at))
            continue
        if end > length:
            why = f"segment {seg.position} ends at frame {end}, past the episode's {length} frames"
            findings.append(Finding("out_of_range", max(start, length), end, why, segments=at))
        intervals.append((start, end, seg))
    intervals.sort(key=lambda t: (t[0], t[1], t[2].position))
    cursor = 0
    last: RawSegment | None = None
    for start, end, seg in intervals:
        start_c, end_c = min(start, length), min(end, length)
        between = tuple(p.position for p in (last, seg) if p is not None)
        if start_c > cursor:
            why = f"frames [{cursor}, {start_c}) are in no segment; move a boundary so that every frame is covered"
            findings.append(Finding("gap", cursor, start_c, why, segments=between))
        elif start_c < cursor:
            why = (
                f"frames [{start_c}, {min(cursor, end_c)}) are in segments {last.position if last else '?'} and "
                f"{seg.position}; each frame belongs to one segment"
            )
            findings.append(Finding("overlap", start_c, min(cursor, end_c), why, segments=between))
        if end_c > cursor:
            cursor, last = end_c, seg
    if cursor < length:
        why = (
            f"frames [{cursor}, {length}) at the end are in no segment; extend the last segment or add one "
            "(TASK_COMPLETE for an idle tail)"
        )
        findings.append(Finding("gap", cursor, length, why, segments=(last.position,) if last else ()))
    parsed: list[Seg] = []
    for start, end, seg in intervals:
        at = (seg.position,)
        if seg.label is None:
            why = f"segment {seg.position} has no label yet; choose its template and fill its slots"
            findings.append(Finding("unparseable_label", start, end, why, segments=at))
            continue
        if isinstance(seg.label, FreeLabel):
            why = (
                f"segment {seg.position} keeps the free label {seg.label.text!r} (no template fits it); choose a "
                "template to check it against the guideline, or keep it as written"
            )
            findings.append(Finding("free_label", start, end, why, severity="warning", segments=at))
            continue
        try:
            instance = coerce_instance(seg.label, cohort)
        except LabelValidationError as exc:  # a parse error names the label; another says which segment
            why = str(exc) if isinstance(exc, LabelParseError) else f"segment {seg.position}: {exc}"
            findings.append(Finding("unparseable_label", start, end, why, segments=at))
            continue
        if cohort not in instance.template.cohorts:
            why = f"{render(instance)!r} ({instance.template_id}) is not a {cohort} label"
            findings.append(Finding("wrong_cohort", start, end, why, segments=at))
        parsed.append(Seg(seg.position, start, end, instance, render(instance)))
    findings.extend(_task_complete(parsed, failure))
    return findings, parsed


def _task_complete(parsed: list[Seg], failure: str | None) -> Iterator[Finding]:
    for i, s in enumerate(parsed):
        if s.tid != TASK_COMPLETE:
            continue
        if failure:
            why = (
                f"TASK_COMPLETE marks a trailing interval after the task has succeeded, but {failure}; label the tail "
                "with the subtask it belongs to (or end with the last subtask), or correct the outcome/verdict first"
            )
            yield Finding("task_complete_after_failure", s.start, s.end, why, segments=(s.index,))
        if i != len(parsed) - 1:
            why = (
                "TASK_COMPLETE is only the trailing interval after the final subtask; it cannot be followed by another "
                "segment"
            )
        elif i == 0:
            why = "TASK_COMPLETE must follow the final subtask; an episode of only TASK_COMPLETE has no subtask"
        else:
            continue
        yield Finding("task_complete_placement", s.start, s.end, why, segments=(s.index,))


def validate_segmentation(
    length: int,
    segments: Any,
    *,
    cohort: str = "robocasa365",
    task: str | None = None,
    base_velocity: Any = None,
    base_speed_threshold: float = DEFAULT_THRESHOLD,
    smooth_frames: int = DEFAULT_SMOOTH_FRAMES,
    failure: str | None = None,
) -> list[Finding]:
    """All findings of a segmentation (empty when it is valid and every rule could run).

    Args:
        length: Episode length in frames.
        segments: ``[{"start": int, "end": int, "label": str | TemplateInstance}, ...]``
            in frames, half-open (see :func:`raw_segments`).
        cohort: ``robocasa365``, ``agibot`` or ``allex`` (the cohorts of
            docs/segments.md, "Templates").
        task: The episode's task text; the count-based rules are reported as skipped
            without it.
        base_velocity: Per-frame base velocity, shape ``(length,)`` or ``(length, dims)``;
            the navigate rule is reported as skipped without it.
        base_speed_threshold: Speed (feature units) below which the base counts as still.
        smooth_frames: Moving-median window for the base speed, in frames.
        failure: Why the episode did not succeed (``"its outcome label is 'aborted', not a
            success"``), or None when it succeeded or is not known; with it a TASK_COMPLETE
            segment is a blocking ``task_complete_after_failure`` finding (docs/segments.md).

    Returns:
        Findings in frame order; each has ``kind``, ``start``/``end`` (frames,
        half-open), ``severity`` and ``message``.

    Raises:
        LabelValidationError: ``length`` is not a positive integer, ``segments`` is not a
            list, the cohort is unknown, ``base_velocity`` has the wrong frame count,
            ``base_speed_threshold`` is not a positive number or ``smooth_frames`` not a
            positive integer.
    """
    length = check_length(length)
    check_cohort(cohort)
    raw = raw_segments(segments)
    findings, parsed = structure(length, raw, cohort, failure)
    threshold = check_threshold(base_speed_threshold)
    smooth = int_argument(
        smooth_frames,
        lambda v: LabelValidationError(
            f"smooth_frames must be a positive integer number of frames, got {type(v).__name__} {v!r}; "
            f"pass e.g. smooth_frames={DEFAULT_SMOOTH_FRAMES}."
        ),
        minimum=1,
    )
    ctx = Context(length, cohort, task, base_velocity, threshold, smooth)
    usable = [s for s in parsed if cohort in s.instance.template.cohorts]
    for rule in COHORT_RULES.get(cohort, ()):  # the generic set and label sets of your own: structure only
        findings.extend(rule(usable, ctx))
    findings.sort(key=lambda f: (f.start, f.end, SEVERITIES.index(f.severity), f.kind))
    return findings


def segments_from_starts(starts: Sequence[tuple[int, str]], length: int) -> list[dict[str, Any]]:
    """The segmentation whose segments start at ``starts`` (``(frame, label)`` in frame order):
    each runs until the next one starts, the first from frame 0, the last to ``length``; of two
    starting on one frame the later is kept (docs/segments.md, "Import (`import-lerobot`)").
    """
    kept = dict(starts)  # one label per frame, the later winning; keys stay in frame order
    if not kept:
        return []
    begins = [0, *list(kept)[1:]]
    ends = [*begins[1:], length]
    return [{"start": s, "end": e, "label": label} for s, e, label in zip(begins, ends, kept.values(), strict=True)]

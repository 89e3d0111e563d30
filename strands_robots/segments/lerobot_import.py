"""Import a LeRobot dataset's own subtask annotations (language rows or SARM's columns) as proposals
awaiting review (docs/segments.md, "Import (`import-lerobot`)"); a label no template renders exactly
is kept as a free label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_robots.errors import LabelsError, LabelValidationError
from strands_robots.segments import lerobot_language as language
from strands_robots.segments import sarm
from strands_robots.segments.episodes import episode_facts
from strands_robots.segments.imports import EpisodeReport, ImportReport, store_prepared
from strands_robots.segments.parse import clean_text, parse_candidates
from strands_robots.segments.proposals import review_status
from strands_robots.segments.store import (
    SegmentationRefused,
    open_store,
    prepare_record,
)
from strands_robots.segments.templates import check_cohort

#: The template set imported labels are matched against unless another is given.
DEFAULT_COHORT = "generic"


def label_segment(seg: dict[str, Any], cohort: str) -> dict[str, Any]:
    """``seg`` with a template when one of ``cohort`` renders its label exactly, else free."""
    text = str(seg["label"])
    for instance in parse_candidates(text, cohort=cohort):
        if instance.render() == clean_text(text) == text:  # parse_candidates keeps to the cohort's templates
            return {"start": seg["start"], "end": seg["end"], **instance.to_dict()}
    return {"start": seg["start"], "end": seg["end"], "label": text, "free": True}


def _proposals(root: Path, dataset: Any, style: str, prefix: str | None) -> tuple[str, dict[int, tuple[Any, ...]]]:
    """``(source name, {episode: (segments, changes, origin, length)})`` read from the dataset."""
    found: dict[int, tuple[Any, ...]] = {}
    if prefix is None:
        for ep, rows in language.read_episodes(root).items():
            picked = language.style_rows(rows.persistent, style)
            if not picked:
                continue
            segments, changes = language.rows_to_segments(picked, rows.timestamps, float(dataset.fps))
            if rows.uneven:
                changes.insert(0, "frames of the episode carry different language rows: read its first frame's")
            origin = {"tool": language.SOURCE_NAME, "style": style, "rows": language.rows_digest(picked)}
            found[ep] = (segments, changes, origin, len(rows.timestamps))
        return language.SOURCE_NAME, found
    for ep, spans in sarm.read_spans(root, prefix).items():
        if ep not in dataset.episodes:
            found[ep] = ([], [], {}, None)
            continue
        length = int(dataset.episodes[ep].length)
        segments, changes = sarm.spans_to_segments(spans, length, float(dataset.fps))
        origin = {"tool": sarm.source_name(prefix), "columns": prefix, "rows": language.rows_digest(spans)}
        found[ep] = (segments, changes, origin, length)
    return sarm.source_name(prefix), found


def import_lerobot(
    root: str | Path,
    *,
    style: str = language.SUBTASK_STYLE,
    sarm_prefix: str | None = None,
    cohort: str = DEFAULT_COHORT,
    dry_run: bool = False,
    labels_dir: str | Path | None = None,
) -> ImportReport:
    """Read the dataset's own subtask annotations into ``episode_segments.json`` as proposals.

    Args:
        root: A LeRobot v3.0 dataset root.
        style: The ``language_persistent`` style to read (``subtask``; any persistent style).
        sarm_prefix: ``sparse`` or ``dense`` to read SARM's columns instead of language rows.
        cohort: Template set labels are matched against (default ``generic``).
        dry_run: Report only; write nothing.
        labels_dir: Where the sidecar lives (default ``root``).

    Returns:
        The :class:`ImportReport`: per episode ``imported`` (or ``would_import``),
        ``skipped`` (a person's segmentation or review stands, or the same proposal is
        already there) or ``failed``, with the fixes made (``changes``).

    Raises:
        UnsupportedVersionError: not a v3.0 dataset (v2.1 has no language columns).
        LabelValidationError: an unknown style, SARM prefix or cohort.
        SidecarError, StorageError: a refused sidecar or a failed write (nothing written).
    """
    root = Path(root)
    check_cohort(cohort)
    dataset = language.open_v3(root, style, sarm_prefix)
    source, found = _proposals(root, dataset, style, sarm_prefix)
    report = ImportReport(f"{root} ({source})", dry_run=dry_run)
    prepared: dict[str, tuple[dict[str, Any], EpisodeReport]] = {}
    for ep in sorted(found):
        segments, changes, origin, length = found[ep]
        ep_report = EpisodeReport(ep, changes=list(changes))
        report.episodes.append(ep_report)
        try:
            facts = episode_facts(root, ep, dataset=dataset)
            if length is not None and length != facts.length:
                raise LabelValidationError(
                    f"the data files hold {length} frames of episode {ep}, its metadata says {facts.length}."
                )
            if not segments:
                raise LabelValidationError("no usable annotation is left for this episode (see changes).")
            labelled = [label_segment(s, cohort) for s in segments]
            if free := sum(1 for s in labelled if s.get("free")):
                ep_report.notes.append(f"{free} label(s) fit no {cohort} template exactly: kept as free labels")
            record, ep_report.findings = prepare_record(
                facts, labelled, annotator=source, cohort=cohort, source="proposal", dataset=dataset
            )
            prepared[str(ep)] = (dict(record, origin=origin), ep_report)
        except SegmentationRefused as exc:
            ep_report.errors.extend(exc.reasons)
        except LabelsError as exc:
            ep_report.errors.append(str(exc))
    store_prepared(open_store(root, labels_dir), prepared, _keep_reason, dry_run=dry_run, reason_is_error=False)
    return report


def _keep_reason(current: dict[str, Any] | None, record: dict[str, Any]) -> str | None:
    """Why the stored record stays (None: the proposal is written)."""
    if current is None:
        return None
    status = review_status(current)
    if status != "proposed":
        return (
            f"kept the stored segmentation ({status}, by {current.get('annotator')!r}): a person's decision stands "
            "until a person changes it"
        )
    if current.get("origin") == record.get("origin") and current.get("segments") == record.get("segments"):
        return "the same proposal is already stored"
    return None


__all__ = ["DEFAULT_COHORT", "import_lerobot", "label_segment"]

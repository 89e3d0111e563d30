"""Import segmentations written by other tools, with normalisation and a per-episode report
(docs/segments.md, "Import and export": the accepted shapes and each normalisation step).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strands_robots.arguments import ANY_NUMBER, number_argument
from strands_robots.errors import EpisodeNotFoundError, LabelsError, LabelValidationError, check_choice
from strands_robots.segments.convert import check_fps
from strands_robots.segments.episodes import EpisodeFacts, episode_facts, episode_index, open_dataset_if_present
from strands_robots.segments.findings import Finding
from strands_robots.segments.normalize import OFFICIAL_COHORT, normalize_official_label
from strands_robots.segments.parse import clean_text, parse_candidates
from strands_robots.segments.store import (
    SOURCES,
    SegmentationRefused,
    infer_cohort,
    open_store,
    prepare_record,
    put_record,
)
from strands_robots.segments.success import failed_episodes
from strands_robots.segments.templates import TASK_COMPLETE, check_cohort
from strands_robots.storage.labels_dir import require_dataset_root
from strands_robots.storage.record_store import Change, RecordStore
from strands_robots.storage.textfile import read_json_or_jsonl

SPAN_KEYS = ("segments", "subtasks", "skill_annotation", "spans", "annotations")
INDEX_KEYS = ("episode_index", "episode", "episode_id")
LABEL_KEYS = ("label", "subtask", "skill_description", "text", "name", "description", "annotation")
FRAME_PAIRS = (("start", "end"), ("start_frame", "end_frame"), ("frame_start", "frame_end"))
SECOND_PAIRS = (
    ("start_ts", "end_ts"),
    ("start_time", "end_time"),
    ("startTs", "endTs"),
    ("start_s", "end_s"),
    ("start_sec", "end_sec"),
)
HEAD_POLICIES = ("auto", "extend", "idle", "error")
TAIL_POLICIES = ("auto", "task_complete", "idle", "extend", "error")
GAP_POLICIES = ("error", "extend")


@dataclass
class EpisodeReport:
    """What happened to one episode of the input.

    ``status``: ``imported``, ``would_import`` (dry run), ``skipped`` (a segmentation
    exists and ``overwrite`` is off) or ``failed`` (``errors`` say why, with frames).
    ``changes`` are the normalisation steps that altered the input; ``notes`` how it was
    read without altering it.
    """

    episode_index: int | None
    status: str = "failed"
    segments: int = 0
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    relabels: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {**asdict(self), "findings": [f.to_dict() for f in self.findings]}


@dataclass
class ImportReport:
    """The per-episode reports of one import and their counts."""

    source: str
    episodes: list[EpisodeReport] = field(default_factory=list)
    dry_run: bool = False

    def count(self, status: str) -> int:
        """Episodes with ``status``."""
        return sum(1 for e in self.episodes if e.status == status)

    @property
    def ok(self) -> bool:
        """True when no episode failed."""
        return self.count("failed") == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        statuses = ("imported", "would_import", "skipped", "failed")
        return {
            "source": self.source,
            "dry_run": self.dry_run,
            "counts": {s: self.count(s) for s in statuses},
            "relabelled": sum(len(e.relabels) for e in self.episodes),
            "exceptions": sum(len(e.exceptions) for e in self.episodes),
            "episodes": [e.to_dict() for e in self.episodes],
        }


# -- reading the input ---------------------------------------------------------------------------


def load_source(path: str | Path) -> Any:
    """Read a JSON or JSON Lines file (:func:`~strands_robots.storage.textfile.read_json_or_jsonl`).

    Raises:
        LabelValidationError: unreadable JSON, naming the line.
        InputFileNotFoundError: no such file (a ``FileNotFoundError``).
        InputFileError: a directory, not UTF-8, or a file that cannot be read.
    """
    return read_json_or_jsonl(
        path,
        what="the segmentation file",
        kind="JSON or JSON Lines file of segmentations",
        remedy="fix it and import again.",
    )


def _spans_of(obj: dict[str, Any]) -> Any:
    return next((obj[k] for k in SPAN_KEYS if k in obj), None)


def _looks_like_span(obj: Any) -> bool:
    pairs = FRAME_PAIRS + SECOND_PAIRS
    return isinstance(obj, dict) and ("frame_duration" in obj or any(a in obj and b in obj for a, b in pairs))


def _key(key: Any) -> Any:
    """An episode key as written: decimal text as its int, anything else as given (refused later by name)."""
    return int(key) if isinstance(key, str) and key.isdecimal() else key


def episodes_of(data: Any, episode: int | None = None) -> list[tuple[Any, Any, dict[str, Any]]]:
    """``[(episode_index, spans, episode_object)]`` found in ``data`` (docs/segments.md, "Import and export").

    Raises:
        LabelValidationError: a shape this importer does not know, or a single episode
            without ``episode=``.
    """

    def single(spans: Any, obj: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
        index = next((obj[k] for k in INDEX_KEYS if obj.get(k) is not None), episode)
        if index is None:
            raise LabelValidationError(
                "the input holds the spans of one episode but does not say which; pass episode= (CLI: --episode)."
            )
        return index, spans, obj

    if isinstance(data, list):
        if data and all(_looks_like_span(x) for x in data):
            return [single(data, {})]
        for i, obj in enumerate(data):
            if not isinstance(obj, dict) or _spans_of(obj) is None:
                raise LabelValidationError(
                    f"item {i} of the input is not an episode object with one of {list(SPAN_KEYS)}; see the accepted "
                    "shapes in docs/segments.md."
                )
        return [single(_spans_of(obj), obj) for obj in data]
    if isinstance(data, dict):
        if _spans_of(data) is not None:
            return [single(_spans_of(data), data)]
        if "episodes" in data:
            return episodes_of(
                [
                    dict(v, episode_index=_key(k)) if isinstance(v, dict) else {"episode_index": _key(k), "segments": v}
                    for k, v in data["episodes"].items()
                ]
                if isinstance(data["episodes"], dict)
                else data["episodes"],
                episode,
            )
        if data and all(isinstance(k, str) and k.isdecimal() for k in data):
            return episodes_of({"episodes": data}, episode)
    raise LabelValidationError(
        "the input is not a known segmentation shape (episode objects with 'segments'/'subtasks'/'skill_annotation', "
        "or a mapping of episode_index to spans); see docs/segments.md."
    )


@dataclass
class _Span:
    """One input span: ``start``/``end`` as read (seconds when ``seconds``), whole frames after :func:`_frames`."""

    start: float
    end: float
    label: str
    note: Any = None
    seconds: bool = False


def _number(value: Any, what: str) -> float:
    return number_argument(
        value,
        lambda v: LabelValidationError(f"{what} must be a finite number, got {v!r}."),
        ANY_NUMBER,  # span ends are frames or seconds; negative ones are findings later
    )


def _label(span: dict[str, Any], what: str) -> str:
    key = next((key for key in LABEL_KEYS if span.get(key) is not None), None)
    if key is None:
        raise LabelValidationError(f"{what} has no label (one of {list(LABEL_KEYS)}).")
    if not isinstance(span[key], list):
        return clean_text(str(span[key]))
    distinct = sorted({clean_text(str(v)) for v in span[key] if str(v).strip()})
    if len(distinct) != 1:
        raise LabelValidationError(
            f"{what}.{key} holds {len(distinct)} descriptions {distinct}; one segment carries one label "
            "(split parallel per-arm descriptions first)."
        )
    return distinct[0]


def read_spans(spans: Any, what: str, time_unit: str = "auto") -> list[_Span]:
    """Spans as numbers with their unit.

    Raises:
        LabelValidationError: a span without a known start/end pair or label.
    """
    if not isinstance(spans, list):
        raise LabelValidationError(f"{what} must be a list of spans, got {type(spans).__name__}.")
    out = []
    plain_fraction = False
    for i, span in enumerate(spans):
        where = f"{what}[{i}]"
        if not isinstance(span, dict):
            raise LabelValidationError(f"{where} is not an object.")
        seconds = False
        if "frame_duration" in span:
            fd = span["frame_duration"]
            if not isinstance(fd, list | tuple) or len(fd) != 2:
                raise LabelValidationError(f"{where}.frame_duration must be [start, end].")
            pair = (_number(fd[0], f"{where}.frame_duration[0]"), _number(fd[1], f"{where}.frame_duration[1]"))
        else:
            a, b = next(((a, b) for a, b in FRAME_PAIRS + SECOND_PAIRS if a in span and b in span), ("", ""))
            if not a:
                raise LabelValidationError(f"{where} has no start/end (frames or seconds); keys: {sorted(span)}.")
            pair = (_number(span[a], f"{where}.{a}"), _number(span[b], f"{where}.{b}"))
            seconds = time_unit != "frames" and ((a, b) in SECOND_PAIRS or (time_unit == "seconds" and a == "start"))
            plain_fraction |= a == "start" and not (pair[0].is_integer() and pair[1].is_integer())
        out.append(_Span(pair[0], pair[1], _label(span, where), span.get("note"), seconds))
    if plain_fraction and time_unit == "auto":
        for s in out:
            s.seconds = True
    return out


# -- normalising one episode ---------------------------------------------------------------------


def _frames(spans: list[_Span], fps: float | None, report: EpisodeReport) -> None:
    if seconds := sum(s.seconds for s in spans):
        if fps is None:
            raise LabelValidationError("the spans are in seconds but the fps is unknown; pass fps= (CLI: --fps).")
        report.changes.append(f"converted {seconds} spans from seconds to frames at {fps:g} fps")
    for s in spans:
        if s.seconds:
            assert fps is not None
            s.start, s.end = round(s.start * fps), round(s.end * fps)
        elif s.start.is_integer() and s.end.is_integer():
            s.start, s.end = int(s.start), int(s.end)
        else:
            raise LabelValidationError(
                f"span {s.label!r} has fractional frames {s.start}..{s.end}; pass "
                "time_unit='seconds' if they are seconds."
            )


def _fix_boundaries(items: list[_Span], length: int, end_inclusive: bool | None, report: EpisodeReport) -> None:
    ordered = sorted(items, key=lambda s: (s.start, s.end))
    if ordered != items:
        items[:] = ordered
        report.changes.append("sorted the spans by start")
    pairs = list(zip(items, items[1:], strict=False))
    if end_inclusive is None:  # detected on frame-based spans only
        first = items[0]
        end_inclusive = any(not s.seconds for s in items) and (
            all(b.start == a.end + 1 for a, b in pairs) if pairs else (first.start, first.end) == (0, length - 1)
        )
    if end_inclusive:
        for s in items:
            s.end += 1
        report.changes.append(
            "ends were inclusive (next start == previous end + 1): read as half-open [start, end + 1)"
        )
    elif any(b.start == a.end for a, b in pairs):
        report.notes.append("spans share endpoints (end of one == start of the next): read as half-open [start, end)")
    for a, b in pairs:
        if a.seconds and b.seconds and a.end != b.start and abs(b.start - a.end) <= 1:
            report.changes.append(
                f"closed a one-frame rounding {'gap' if b.start > a.end else 'overlap'} at frame {a.end}"
            )
            b.start = a.end
    last = items[-1]
    if last.seconds and last.end in (length - 1, length + 1):
        report.changes.append(
            f"the last span ended at frame {last.end} (a timestamp of the last frame): set to {length}"
        )
        last.end = length


def _fill(
    items: list[_Span],
    length: int,
    cohort: str,
    head: str,
    tail: str,
    fill_gaps: str,
    report: EpisodeReport,
    failure: str | None = None,
) -> None:
    idle = "Idle"
    first, last = items[0], items[-1]
    if head == "auto":
        head = "idle" if cohort == "agibot" else "extend"
    if tail == "auto":
        tail = "idle" if cohort == "agibot" else ("extend" if failure else "task_complete")
        if failure and cohort != "agibot" and last.end < length:
            report.notes.append(f"no TASK_COMPLETE tail: {failure} (the tail gap extends the last segment)")
    if cohort != "agibot" and "idle" in (head, tail):
        raise LabelValidationError("the 'idle' head/tail policy is for the AgiBot cohort (Idle label); use extend.")
    if first.start > 0:
        gap = first.start
        if head == "error":
            raise LabelValidationError(f"frames [0, {gap}) before the first span are unlabelled (head gap).")
        if head == "extend" or (head == "idle" and first.label == idle):
            first.start = 0
            report.changes.append(f"head gap [0, {gap}) folded into the first segment")
        else:
            items.insert(0, _Span(0, gap, idle))
            report.changes.append(f"head gap [0, {gap}) labelled Idle")
    for a, b in zip(items, items[1:], strict=False):
        if b.start > a.end:
            if fill_gaps != "extend":
                raise LabelValidationError(
                    f"frames [{a.end}, {b.start}) between two spans are unlabelled (gap); fix the "
                    "input or pass fill_gaps='extend' (CLI: --fill-gaps extend)."
                )
            report.changes.append(f"gap [{a.end}, {b.start}) folded into the preceding segment")
            a.end = b.start
    if last.end < length:
        start = last.end
        if tail == "error":
            raise LabelValidationError(f"frames [{start}, {length}) after the last span are unlabelled (tail gap).")
        label = TASK_COMPLETE if tail == "task_complete" else idle
        if tail == "extend" or last.label in (label, TASK_COMPLETE):
            last.end = length
            report.changes.append(f"tail gap [{start}, {length}) folded into the last segment")
        else:
            items.append(_Span(start, length, label))
            report.changes.append(f"tail gap [{start}, {length}) labelled {label}")


def _labels(items: list[_Span], normalize: bool, cohort: str | None, report: EpisodeReport) -> None:
    if not normalize:
        return
    kept: list[_Span] = []
    for it in items:
        if cohort not in (None, OFFICIAL_COHORT) and parse_candidates(it.label, cohort=cohort):
            kept.append(it)  # a label of the chosen set is its template; the RoboCasa365 rules are not its rules
            continue
        result = normalize_official_label(it.label)
        if result.fold and kept:
            before = kept[-1]
            report.changes.append(
                f"{it.label!r} [{it.start}, {it.end}) folded into the preceding segment {before.label!r} "
                "(a release without transport is no segment of its own)"
            )
            before.end = max(before.end, it.end)
            continue
        if result.exception:
            report.exceptions.append({"label": it.label, "why": result.exception})
        elif result.text != it.label:
            report.relabels.append({"from": it.label, "to": result.text, "rewrites": list(result.rewrites)})
        it.label = result.text
        kept.append(it)
    items[:] = kept


def carried_fields(obj: dict[str, Any], *, annotator: str, reference: bool, report: EpisodeReport) -> dict[str, Any]:
    """The record fields of an episode object, defaults from the import's options.

    An export line keeps its ``annotator``, ``note``, ``reference``, ``source`` and
    ``annotated_at``, so it imports back unchanged; ``annotator`` is used where the input
    names none, and ``reference=True`` marks every episode. Kept values are listed in
    ``report.notes``; a field of another tool's shape (``source`` not ``annotation`` or
    ``import``, a time that is not ISO-8601, ...) is ignored with a note.
    """
    accepted: dict[str, tuple[Any, Callable[[Any], bool]]] = {  # field -> (default, what the input may give)
        "annotator": (annotator, lambda v: isinstance(v, str) and bool(v.strip())),
        "note": (None, lambda v: isinstance(v, str)),
        "reference": (reference, lambda v: type(v) is bool),
        "source": ("import", lambda v: v in SOURCES),
        "annotated_at": (None, _is_iso_time),
    }
    given = {key: obj[key] for key in accepted if obj.get(key) is not None}
    kept = {key: value for key, value in given.items() if accepted[key][1](value)}
    if kept:
        report.notes.append("kept the input's " + ", ".join(f"{key}={value!r}" for key, value in kept.items()))
    if ignored := [key for key in given if key not in kept]:
        report.notes.append(f"ignored the input's {', '.join(ignored)} (not this tool's record fields)")
    fields = {key: kept.get(key, default) for key, (default, _) in accepted.items()}
    return fields | {"reference": kept.get("reference", False) or reference}


def _is_iso_time(value: Any) -> bool:
    try:
        datetime.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    return True


def check_labels_only_episode(episode: int, total_episodes: int, length: Any) -> None:
    """An input line for a labels-only root: its episode is below ``total_episodes`` and it
    carries the episode's ``length`` (there is no metadata to read it from).

    Raises:
        EpisodeNotFoundError: ``episode`` is at or past ``total_episodes``.
        LabelValidationError: the line has no ``length``.
    """
    if episode >= total_episodes:
        raise EpisodeNotFoundError(
            f"episode {episode} is not in a dataset of {total_episodes} episodes (total_episodes / "
            f"--total-episodes {total_episodes}: episodes 0-{total_episodes - 1}); pass the right count or only "
            "its episodes."
        )
    if length is None:
        raise LabelValidationError(
            f'episode {episode} has no "length" in the input and a labels-only root has no metadata to read it '
            'from; add "length": <frames> to its line.'
        )


def import_segmentations(
    root: str | Path,
    source: Any,
    *,
    annotator: str,
    episode: int | None = None,
    fps: float | None = None,
    cohort: str | None = None,
    normalize: bool = True,
    head: str = "auto",
    tail: str = "auto",
    fill_gaps: str = "error",
    end_inclusive: bool | None = None,
    time_unit: str = "auto",
    overwrite: bool = False,
    reference: bool = False,
    dry_run: bool = False,
    labels_dir: str | Path | None = None,
    total_episodes: int | None = None,
) -> ImportReport:
    """Import segmentations with normalisation; returns the report (docs/segments.md, "Import and
    export": the input shapes, and what each policy argument does).

    Args:
        source: A JSON/JSONL path, or the loaded data.
        annotator: The annotator of every segmentation whose input names none (an export
            line keeps its own fields: :func:`carried_fields`).
        episode: The episode of an input that holds only one episode's spans.
        fps: Frames per second of seconds-based spans when the dataset has no metadata.
        head, tail, fill_gaps: What fills the frames before, after and between the spans.
        end_inclusive: Ends are inclusive (True), half-open (False) or detected (None).
        time_unit: ``auto``, ``frames`` or ``seconds`` for plain ``start``/``end``.
        total_episodes: ``root`` is a labels-only directory of a dataset with this many
            episodes; each input line then carries its ``length`` (docs/sidecar-format.md,
            "Writes only into a dataset").

    Raises:
        LabelValidationError: an input shape that cannot be read, bad options, or a root
            without LeRobot metadata and no ``total_episodes`` (nothing is created).
        SidecarError, StorageError: a refused sidecar or a failed write (nothing written).
    """
    for name, value, allowed in (
        ("head", head, HEAD_POLICIES),
        ("tail", tail, TAIL_POLICIES),
        ("fill_gaps", fill_gaps, GAP_POLICIES),
        ("time_unit", time_unit, ("auto", "frames", "seconds")),
    ):
        check_choice(name, value, allowed)
    if cohort is not None:
        check_cohort(cohort)
        if cohort != "agibot" and "idle" in (head, tail):
            raise LabelValidationError("the 'idle' head/tail policy is for the AgiBot cohort (Idle label); use extend.")
    if fps is not None:
        fps = check_fps(fps)
    labels_only = require_dataset_root(root, total_episodes, writer="a segmentation import")
    label = str(source) if isinstance(source, str | Path) else "<data>"
    data = load_source(source) if isinstance(source, str | Path) else source
    found = episodes_of(data, episode)
    dataset = open_dataset_if_present(root)
    store = open_store(root, labels_dir)
    failed = failed_episodes(root, labels_dir=labels_dir)
    report = ImportReport(label, dry_run=dry_run)
    prepared: dict[str, tuple[dict[str, Any], EpisodeReport]] = {}
    for index, spans, obj in found:
        ep_report = EpisodeReport(None)
        report.episodes.append(ep_report)
        try:
            ep = episode_index(_key(index))
            ep_report.episode_index = ep
            if str(ep) in prepared:
                raise LabelValidationError(f"episode {ep} appears twice in the input.")
            length = obj.get("length") if dataset is None else None
            if labels_only is not None:
                check_labels_only_episode(ep, labels_only, length)
            facts = episode_facts(root, ep, length=length, dataset=dataset)
            if dataset is None and fps is None and obj.get("fps") is not None:
                facts = EpisodeFacts(facts.episode_index, facts.length, facts.tasks, check_fps(obj["fps"]))
            fields = carried_fields(obj, annotator=annotator, reference=reference, report=ep_report)
            items = read_spans(spans, f"episode {ep} spans", time_unit)
            if not items:
                raise LabelValidationError("no spans for this episode.")
            _frames(items, facts.fps or fps, ep_report)
            _labels(items, normalize, cohort, ep_report)
            chosen = cohort or infer_cohort([{"label": s.label} for s in items])
            _fix_boundaries(items, facts.length, end_inclusive, ep_report)
            _fill(items, facts.length, chosen, head, tail, fill_gaps, ep_report, failed.get(ep))
            segments = [{"start": s.start, "end": s.end, "label": s.label, "note": s.note} for s in items]
            record, ep_report.findings = prepare_record(
                facts, segments, **fields, cohort=chosen, failure=failed.get(ep), dataset=dataset
            )
            prepared[str(ep)] = (record, ep_report)
        except SegmentationRefused as exc:
            ep_report.errors.extend(exc.reasons)
        except LabelsError as exc:
            ep_report.errors.append(str(exc))

    def keep(current: dict[str, Any] | None, record: dict[str, Any]) -> str | None:
        exists = current is not None and not overwrite
        return "a segmentation exists; pass overwrite=True (CLI: --overwrite) to replace it" if exists else None

    if prepared:
        store_prepared(store, prepared, keep, dry_run=dry_run)
    return report


def store_prepared(
    store: RecordStore,
    prepared: dict[str, tuple[dict[str, Any], EpisodeReport]],
    keep: Callable[[dict[str, Any] | None, dict[str, Any]], str | None],
    *,
    dry_run: bool,
    reason_is_error: bool = True,
) -> None:
    """Write ``prepared`` (episode key -> record and its report) in one locked update; a dry run only reads.

    Each episode becomes ``imported`` (``would_import``), or, when ``keep(stored, record)`` gives a
    reason, ``skipped`` with that reason in its ``errors`` (else its ``notes``) and is not written.
    """

    def mutate(document: dict[str, Any]) -> tuple[Change, None]:
        episodes = document.setdefault("episodes", {})
        written = []
        for key, (record, report) in prepared.items():
            report.segments = len(record["segments"])
            why = keep(episodes.get(key), record)
            if why is not None:
                report.status = "skipped"
                (report.errors if reason_is_error else report.notes).append(why)
                continue
            report.status = "would_import" if dry_run else "imported"
            if not dry_run:
                put_record(document, record)
                written.append(key)
        return Change(records=written, fields=[]), None

    if dry_run or not prepared:
        mutate(store.read())
    else:
        store.update(mutate)

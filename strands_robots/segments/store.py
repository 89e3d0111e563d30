"""``episode_segments.json``: saved segmentations beside the dataset, on the shared RecordStore
(docs/segments.md, "Storage": the layout, and the refusal of a file that is not it).
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_robots.arguments import NAME_CHARS, bool_argument, path_argument
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, check_choice
from strands_robots.segments.episodes import EpisodeFacts, episode_facts, episode_index, open_dataset_if_present
from strands_robots.segments.findings import Finding
from strands_robots.segments.motion import DEFAULT_THRESHOLD
from strands_robots.segments.navigate import episode_base_velocity
from strands_robots.segments.parse import FreeLabel, coerce_instance
from strands_robots.segments.success import failed_episodes
from strands_robots.segments.templates import TASK_COMPLETE, check_cohort, known_cohorts
from strands_robots.segments.validate import raw_segments, validate_segmentation, whole_frames
from strands_robots.storage.atomic import check_target
from strands_robots.storage.labels_dir import check_labels_dir, require_directory
from strands_robots.storage.record_store import Change, RecordStore, check_document, keyed_record_problem
from strands_robots.storage.side_files import SEGMENTS, remap_hint

SIDECAR_FILENAME = SEGMENTS
SCHEMA_VERSION = 1
DOCUMENT_KIND = "episode_segments"
MAX_NAME_CHARS = NAME_CHARS
MAX_NOTE_CHARS = 2000
#: Where a saved segmentation came from (the record's ``source``): a person's annotation
#: (or review), a file import, or another tool's proposal awaiting review (docs/segments.md,
#: "Proposals and review").
SOURCES = ("annotation", "import", "proposal")


class StaleVersionError(LabelValidationError):
    """A save expected another current version (someone saved the episode meanwhile)."""


class SegmentationRefused(LabelValidationError):
    """A save was refused; ``findings`` lists each blocking finding, ``reasons`` each as
    ``"<kind> at frames [start, end): <message>"``."""

    def __init__(self, episode: int, findings: list[Finding]) -> None:
        self.findings = findings
        self.reasons = [f"{f.kind} at frames [{f.start}, {f.end}): {f.message}" for f in findings]
        more = f" (and {len(findings) - 12} more)" if len(findings) > 12 else ""
        super().__init__(
            f"segmentation of episode {episode} not saved: {'; '.join(self.reasons[:12])}{more}. Fix these and save "
            "again; nothing was changed."
        )

    def to_dict(self) -> dict[str, Any]:
        """``{"error", "findings"}`` JSON-ready (a page shows each range on the timeline)."""
        return {"error": str(self), "findings": [f.to_dict() for f in self.findings]}


@dataclass(frozen=True)
class SaveResult:
    """What :func:`save_segmentation` stored and the non-blocking findings it saw."""

    record: dict[str, Any]
    findings: list[Finding]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (for a web page)."""
        return {"record": self.record, "findings": [f.to_dict() for f in self.findings]}


# -- document ------------------------------------------------------------------------------------


def segments_path(root: str | Path, *, labels_dir: str | Path | None = None) -> Path:
    """``<labels_dir or root>/episode_segments.json``."""
    root = path_argument(root, "root")
    return (root if labels_dir is None else path_argument(labels_dir, "labels_dir")) / SIDECAR_FILENAME


def empty_document() -> dict[str, Any]:
    """A new document with no episodes."""
    return {"schema_version": SCHEMA_VERSION, "kind": DOCUMENT_KIND, "episodes": {}}


def record_problem(key: str, record: Any) -> str | None:
    """Why ``episodes[key]`` is not a readable record, or None."""
    if problem := keyed_record_problem(key, record):
        return problem
    segments = record.get("segments")
    if not isinstance(segments, list):
        return f"episodes[{key!r}].segments is not a list"
    for i, seg in enumerate(segments):
        if (
            not isinstance(seg, dict)
            or type(seg.get("start")) is not int
            or type(seg.get("end")) is not int
            or not isinstance(seg.get("label"), str)
        ):
            return f"episodes[{key!r}].segments[{i}] has no integer start/end and text label"
    if not isinstance(record.get("history", []), list):
        return f"episodes[{key!r}].history is not a list"
    return None


def _header_problem(document: dict[str, Any]) -> str | None:
    version = document.get("schema_version")
    if document.get("kind") != DOCUMENT_KIND:
        return f"its 'kind' is {document.get('kind')!r}, not {DOCUMENT_KIND!r} (another tool's file?)"
    if type(version) is int and version > SCHEMA_VERSION:
        return (
            f"schema_version {version} is newer than this build reads ({SCHEMA_VERSION}); upgrade strands-robots-labels"
        )
    if type(version) is not int or version != SCHEMA_VERSION:
        return f"schema_version is {version!r}, this build reads {SCHEMA_VERSION}"
    return None


def open_store(root: str | Path, labels_dir: str | Path | None = None) -> RecordStore:
    """The process-wide :class:`RecordStore` of this dataset's ``episode_segments.json``.

    Raises:
        RootNotFoundError: the directory does not exist (a ``SidecarError``).
    """
    path = segments_path(root, labels_dir=labels_dir)
    check_target(path)  # a name too long for the file system is a typed refusal too
    require_directory(path.parent, "Dataset root" if labels_dir is None else "Labels directory")
    check_labels_dir(root, labels_dir, write_key=path.exists())  # a read of no segments creates nothing
    check = functools.partial(
        check_document, header_problem=_header_problem, record_problem=record_problem, kept="segments"
    )
    return RecordStore.open(path, validate=check, empty=empty_document, records_key="episodes")


def check_readable(root: str | Path, *, labels_dir: str | Path | None = None) -> None:
    """Raise :class:`SidecarError` now if ``episode_segments.json`` exists but cannot be used."""
    store = open_store(root, labels_dir)
    if store.exists():
        store.query(lambda document: None)


def query_records(
    root: str | Path, fn: Callable[[dict[str, dict[str, Any]]], Any], *, labels_dir: str | Path | None = None
) -> Any:
    """``fn(episodes)`` on the stored records under the lock, without copying the document.

    ``fn`` must not mutate its argument and must return copies of what it keeps.
    """
    store = open_store(root, labels_dir)
    if not store.exists():
        return fn({})
    return store.query(lambda document: fn(document["episodes"]))


# -- input checks --------------------------------------------------------------------------------


def text_problem(value: Any, limit: int) -> str | None:
    """Why ``value`` is not text of at most ``limit`` characters once trimmed, or None (None passes).

    The rule of an annotator (:data:`MAX_NAME_CHARS`) and of a note (:data:`MAX_NOTE_CHARS`);
    the phrase follows the field's name: ``"has 2001 characters; at most 2000 are allowed"``.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        return f"must be text, got {type(value).__name__} {value!r}"
    length = len(value.strip())
    return f"has {length} characters; at most {limit} are allowed" if length > limit else None


def _text(value: Any, what: str, limit: int, *, required: bool) -> str | None:
    if value is None or (value == "" and not required):
        if required:
            raise LabelValidationError(f"{what} is required: pass who made the segmentation (e.g. a name or id).")
        return None
    problem = text_problem(value, limit)
    if problem is not None:
        raise LabelValidationError(f"{what} {problem}.")
    value = value.strip()
    if required and not value:
        raise LabelValidationError(f"{what} must not be empty.")
    return value or None


def _bool(value: Any, what: str) -> bool:
    return bool_argument(
        value, lambda v: LabelValidationError(f"{what} must be true or false, got {type(v).__name__} {v!r}.")
    )


def infer_cohort(segments: Any) -> str:
    """The cohort all labels belong to (``robocasa365`` when none or several fit)."""
    possible = set(known_cohorts())
    for seg in raw_segments(segments):
        if isinstance(seg.label, FreeLabel):
            continue
        try:
            template = coerce_instance(seg.label).template
        except LabelValidationError:
            continue
        if template.id != TASK_COMPLETE:
            possible &= set(template.cohorts)
    return possible.pop() if len(possible) == 1 else "robocasa365"


def now_iso() -> str:
    """Current UTC time as ISO 8601 with milliseconds and a ``Z`` suffix."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stored_segments(segments: Any, cohort: str | None = None) -> list[dict[str, Any]]:
    """The stored form of valid segments, in start order (label strings read as ``cohort``'s first,
    :func:`coerce_instance`; a free label stays a :class:`FreeLabel`)."""
    stored = []
    for seg in raw_segments(segments):
        start, end = whole_frames(seg.start), whole_frames(seg.end)
        if start is None or end is None:
            raise LabelValidationError(f"segment {seg.position} has no integer start/end; validate it first.")
        label = seg.label if isinstance(seg.label, FreeLabel) else coerce_instance(seg.label, cohort)
        note = _text(seg.note, f"segments[{seg.position}].note", MAX_NOTE_CHARS, required=False)
        stored.append({"start": start, "end": end, "label": label.render(), **label.to_dict(), "note": note})
    return sorted(stored, key=lambda s: (s["start"], s["end"]))


def task_text(tasks: Any) -> str | None:
    """The episode's task strings joined for the task-dependent rules (None when none)."""
    tasks = [t for t in (tasks or ()) if t]
    return " ; ".join(tasks) if tasks else None


def prepare_record(
    facts: EpisodeFacts,
    segments: Any,
    *,
    annotator: Any,
    note: Any = None,
    reference: Any = False,
    cohort: str | None = None,
    strict: bool = False,
    source: str = "annotation",
    base_velocity: Any = None,
    base_speed_threshold: float = DEFAULT_THRESHOLD,
    annotated_at: str | None = None,
    failure: str | None = None,
    dataset: Any = None,
) -> tuple[dict[str, Any], list[Finding]]:
    """Check a segmentation and build its record (without version/history).

    ``base_velocity`` (shape ``(length,)`` or ``(length, dims)``) lets the navigate rule run;
    ``annotated_at`` (ISO 8601, checked by the caller) defaults to now; with ``failure`` (why the episode did not succeed)
    TASK_COMPLETE is refused; with the opened ``dataset`` the record carries the episode's fingerprint.

    Raises:
        SegmentationRefused: a blocking finding, or with ``strict`` any error.
        LabelValidationError: bad annotator, note, reference, cohort or source.
    """
    annotator = _text(annotator, "annotator", MAX_NAME_CHARS, required=True)
    note = _text(note, "note", MAX_NOTE_CHARS, required=False)
    reference = _bool(reference, "reference")
    cohort = check_cohort(cohort) if cohort is not None else infer_cohort(segments)
    check_choice("source", source, SOURCES)
    findings = validate_segmentation(
        facts.length,
        segments,
        cohort=cohort,
        task=task_text(facts.tasks),
        base_velocity=base_velocity,
        base_speed_threshold=base_speed_threshold,
        failure=failure,
    )
    if refusing := [f for f in findings if f.blocking or (strict and f.severity == "error")]:
        raise SegmentationRefused(facts.episode_index, refusing)
    record = {
        "episode_index": facts.episode_index,
        "cohort": cohort,
        "length": facts.length,
        "tasks": list(facts.tasks),
        "segments": stored_segments(segments, cohort),
        "annotator": annotator,
        "annotated_at": annotated_at or now_iso(),
        "note": note,
        "reference": reference,
        "source": source,
    }
    if dataset is not None:
        from strands_robots.fingerprint.columns import fingerprinter_of

        record["fingerprint"] = fingerprinter_of(dataset)(facts.episode_index)
    return record, findings


def stale_segmentations(root: str | Path, *, labels_dir: str | Path | None = None) -> dict[int, str]:
    """Episodes whose saved segmentation was made for another episode: ``{episode: reason}``.

    Compares each record's stored ``fingerprint`` (``docs/segments.md``, "Storage") with
    the dataset, as ``episode_labels.stale_episodes`` does; a remap refreshes it. Records
    saved before fingerprints existed are never stale. Empty without the dataset's metadata.
    """
    from strands_robots.fingerprint import stale_records

    stored = query_records(
        root, lambda records: {int(k): r.get("fingerprint") for k, r in records.items()}, labels_dir=labels_dir
    )
    return stale_records(root, stored)


def put_record(document: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """Make ``record`` the current version in ``document`` (the previous one joins the history)."""
    episodes = document.setdefault("episodes", {})
    key = str(record["episode_index"])
    previous = episodes.get(key)
    history = [_public(previous), *previous.get("history", [])] if previous is not None else []
    version = int(previous.get("version", len(history))) + 1 if previous is not None else 1
    episodes[key] = stored = dict(record, version=version, history=history)
    return stored


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "history"}


# -- API -----------------------------------------------------------------------------------------


def save_segmentation(
    root: str | Path,
    episode: int,
    segments: Any,
    *,
    annotator: str,
    note: str | None = None,
    reference: bool = False,
    labels_dir: str | Path | None = None,
    cohort: str | None = None,
    strict: bool = False,
    length: int | None = None,
    base_velocity_feature: str | None = None,
    use_base_velocity: bool = True,
    base_speed_threshold: float = DEFAULT_THRESHOLD,
    source: str = "annotation",
    review: dict[str, Any] | None = None,
    expect_version: int | None = None,
) -> SaveResult:
    """Save the segmentation of one episode as its new current version (docs/segments.md,
    "Storage: `episode_segments.json`", says what each argument does).

    Args:
        segments: ``[{"start", "end", "label"[, "note"]}]`` in frames, half-open; a
            segment may give ``template_id``/``slots``/``modifiers`` instead of ``label``.
        length: Episode length in frames, only for a root without LeRobot metadata.
        base_velocity_feature: Column of the base velocity; default auto-detected (as
            :func:`validate_episode` reads it).
        base_speed_threshold: Speed (the feature's units) below which the base counts as still.
        expect_version: Refuse unless the current version is this one (0: nothing saved
            yet), checked under the lock.

    Returns:
        :class:`SaveResult`: the stored record (without history) and every finding
        (findings are not stored; :func:`validate_episode` recomputes them).

    Raises:
        SegmentationRefused: gaps, overlaps, segments out of range, labels that fit no
            template or another cohort, TASK_COMPLETE not trailing or on an episode whose
            outcome label or verdict is not a success (each finding with its frame range);
            nothing stored changes.
        EpisodeNotFoundError: the dataset has no such episode.
        DatasetError: ``base_velocity_feature`` is not a feature of the dataset.
        LabelValidationError, SidecarError, StorageError: bad input / refused file / write failure.
        StaleVersionError: ``expect_version`` is not the current version (nothing written).
    """
    dataset = open_dataset_if_present(root)
    facts = episode_facts(root, episode, length=length, dataset=dataset)
    velocity = None
    if dataset is not None and use_base_velocity:
        velocity = episode_base_velocity(root, facts.episode_index, base_velocity_feature, dataset=dataset)
    record, findings = prepare_record(
        facts,
        segments,
        annotator=annotator,
        dataset=dataset,
        note=note,
        reference=reference,
        cohort=cohort,
        strict=strict,
        base_velocity=velocity,
        base_speed_threshold=base_speed_threshold,
        failure=failed_episodes(root, labels_dir=labels_dir).get(facts.episode_index),
        source=source,
    )
    if review is not None:
        record["review"] = review
    store = open_store(root, labels_dir)

    def mutate(document: dict[str, Any]) -> tuple[Change, dict[str, Any]]:
        if expect_version is not None:
            current = document["episodes"].get(str(facts.episode_index))
            version = 0 if current is None else int(current.get("version", 0))
            if version != expect_version:
                raise StaleVersionError(
                    f"episode {facts.episode_index}'s segmentation is at version {version}, not {expect_version}: "
                    "someone saved it meanwhile. Reload it and decide again; nothing was changed."
                )
        stored = put_record(document, record)
        return Change(records=[str(facts.episode_index)], fields=[]), _public(stored)

    stored = store.update(mutate)
    return SaveResult(stored, findings)


def get_segmentation(root: str | Path, episode: int, *, labels_dir: str | Path | None = None) -> dict[str, Any]:
    """The current segmentation record of ``episode`` (without its history).

    Raises:
        EpisodeNotFoundError: nothing saved for that episode.
    """
    return segmentation_history(root, episode, labels_dir=labels_dir)[0]


def segmentation_history(
    root: str | Path, episode: int, *, labels_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """Every version of ``episode``'s segmentation, newest (current) first.

    Raises:
        EpisodeNotFoundError: nothing saved for that episode.
    """
    episode = episode_index(episode)
    record = query_records(root, lambda eps: copy.deepcopy(eps.get(str(episode))), labels_dir=labels_dir)
    if record is None:
        path = segments_path(root, labels_dir=labels_dir)
        moved = remap_hint(path.parent)  # an in-place edit moved the sidecars to ROOT_old
        raise EpisodeNotFoundError(
            f"no segmentation saved for episode {episode} in {path}."
            + (moved or " Save one (save_segmentation or `strands-labels segments import`).")
        )
    return [_public(record), *record.get("history", [])]


def list_segmentations(
    root: str | Path,
    *,
    task: str | None = None,
    reference: bool | None = None,
    labels_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Current segmentation records (without history), sorted by ``episode_index``.

    Args:
        task: Only episodes whose saved tasks include this task text.
        reference: Only reference examples (True) or only non-references (False).
    """

    def select(records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            copy.deepcopy(_public(record))
            for record in (records[key] for key in sorted(records, key=int))
            if (task is None or task in record.get("tasks", []))
            and (reference is None or bool(record.get("reference")) == reference)
        ]

    return query_records(root, select, labels_dir=labels_dir)


def mark_reference(
    root: str | Path, episode: int, reference: bool = True, *, labels_dir: str | Path | None = None
) -> dict[str, Any]:
    """Mark (or unmark) a saved segmentation as a reference example; no new version.

    Raises:
        EpisodeNotFoundError: nothing saved for that episode.
    """
    episode = episode_index(episode)
    reference = _bool(reference, "reference")
    store = open_store(root, labels_dir)

    def mutate(document: dict[str, Any]) -> tuple[Change, dict[str, Any]]:
        record = document["episodes"].get(str(episode))
        if record is None:
            raise EpisodeNotFoundError(f"no segmentation saved for episode {episode}; save one before marking it.")
        record["reference"] = reference
        return Change(records=[str(episode)], fields=[]), _public(record)

    return store.update(mutate)


def template_ids_of(record: dict[str, Any]) -> list[str | None]:
    """Template ids of a stored record's segments (in order; None for a free label)."""
    return [
        None
        if seg.get("free") is True
        else seg.get("template_id") or coerce_instance(seg["label"], record.get("cohort")).template_id
        for seg in record["segments"]
    ]


def prevailing_cohort(root: str | Path, *, labels_dir: str | Path | None = None) -> str | None:
    """The template set most of the dataset's saved segmentations use, or None when none is saved.

    Ties go to the set saved most recently (docs/segments.md, "The segment page": the page
    opens with this set, else ``generic``). Only cohorts known to this process count.
    """
    known = set(known_cohorts())
    records = [r for r in list_segmentations(root, labels_dir=labels_dir) if r.get("cohort") in known]
    counts = Counter(r["cohort"] for r in records)
    latest = {c: max(str(r.get("annotated_at") or "") for r in records if r["cohort"] == c) for c in counts}
    return max(counts, key=lambda c: (counts[c], latest[c]), default=None)

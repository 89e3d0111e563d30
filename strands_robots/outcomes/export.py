"""Export current outcome labels as ``meta/avala_sequence_outcomes.jsonl`` and import them back
(docs/outcomes.md, "Export and import": the keys, ``avala_sequence_uid``, the import's checks
and versions).
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.dataset.cache import cached_dataset
from strands_robots.errors import LabelValidationError, SidecarError, clipped, did_you_mean, quoted
from strands_robots.outcomes.labels import default_labeled_by, load_store, new_version
from strands_robots.outcomes.model import (
    EMPTY_STRING_FIELDS,
    OutcomeValidationError,
    Violation,
    label_fields,
    validate_label,
)
from strands_robots.outcomes.store import OutcomeStore, open_outcome_store
from strands_robots.storage.atomic import atomic_write_bytes
from strands_robots.storage.codec import dump_line, load_json_bytes
from strands_robots.storage.episode_index import episode_index
from strands_robots.storage.mapping import MAX_EPISODE_INDEX
from strands_robots.storage.side_files import outcome_export_path
from strands_robots.storage.textfile import read_user_bytes

PathLike = str | Path

#: Fixed namespace of every ``avala_sequence_uid`` this package derives.
SEQUENCE_UID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "strands-robots-labels:avala_sequence_uid")
#: The label fields exported under another name.
RENAMED = {"source": "outcome_source", "source_metadata": "outcome_source_metadata", "confidence": "outcome_confidence"}
_SAME = ("outcome", "progress", "quality", "speed", "subtasks", "hand_actions", *EMPTY_STRING_FIELDS, "leakage_groups")
#: Label field -> its key in the export, in the export's order.
EXPORTED: dict[str, str] = {**{key: key for key in _SAME}, **RENAMED}
#: The keys of an export line (``outcome_version`` follows ``outcome``).
EXPORT_KEYS: tuple[str, ...] = ("episode_index", "avala_sequence_uid", "outcome", "outcome_version", *_SAME[1:])
EXPORT_KEYS += tuple(RENAMED.values())
_HUB_SNAPSHOT = re.compile(r"datasets--(?P<owner>[^/]+?)--(?P<name>[^/]+)/snapshots/[^/]+/?$")


def dataset_id_of(root: PathLike) -> str:
    """The id ``avala_sequence_uid`` is derived from: the repo id ``owner/name`` of a hub-cache snapshot, else
    the root directory's name (docs/outcomes.md, "Export and import")."""
    resolved = Path(root).resolve()
    match = _HUB_SNAPSHOT.search(resolved.as_posix())
    if match:
        return f"{match['owner']}/{match['name']}"
    return resolved.name


def sequence_uid(dataset_id: str, episode: int) -> str:
    """``uuid5(uuid5(SEQUENCE_UID_NAMESPACE, dataset_id), str(episode))`` as a string."""
    return str(uuid.uuid5(uuid.uuid5(SEQUENCE_UID_NAMESPACE, dataset_id), str(episode)))


def export_line(episode: int, uid: str, record: dict[str, Any] | None) -> dict[str, Any]:
    """The export object of one episode (``record`` is its stored current label or None)."""
    line: dict[str, Any] = {"episode_index": episode, "avala_sequence_uid": uid, "outcome": None}
    if record is None:
        return line
    line["outcome_version"] = record["version"]
    line.update((name, record.get(key)) for key, name in EXPORTED.items())
    line.update((key, line[key] or None) for key in EMPTY_STRING_FIELDS)
    return line


def export_outcomes(
    root: PathLike,
    path: PathLike | None = None,
    *,
    labels_dir: PathLike | None = None,
    dataset_id: str | None = None,
) -> Path:
    """Write every episode's current outcome label as JSON Lines (atomically).

    Args:
        root: The LeRobot dataset root; every one of its episodes gets a line.
        path: The output file; default ``<labels_dir or root>/meta/avala_sequence_outcomes.jsonl``.
        labels_dir: Where ``episode_outcomes.jsonl`` lives (default ``root``).
        dataset_id: Pins the id ``avala_sequence_uid`` is derived from.

    Returns:
        The path written.

    Raises:
        DatasetError: ``root`` is not a readable dataset.
        SidecarError, StorageError: the label sidecar is unusable or the file cannot be written.
    """
    dataset = cached_dataset(root)
    store = load_store(root, labels_dir)
    did = dataset_id if dataset_id is not None else dataset_id_of(root)
    target = Path(path) if path is not None else outcome_export_path(labels_dir if labels_dir is not None else root)
    lines = [export_line(e, sequence_uid(did, e), store.current(e)) for e in sorted(dataset.episodes)]
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, b"".join(dump_line(line) for line in lines))
    return target


# -- import -----------------------------------------------------------------------------------------


def _export_path(path: str) -> str:
    head, sep, rest = path.partition(".")
    head, bracket, tail = head.partition("[")
    return RENAMED.get(head, head) + bracket + tail + sep + rest


def _parse_line(
    n: int, raw: bytes, dataset: Any, seen: dict[int, int], problems: list[Violation]
) -> tuple[int, dict[str, Any], int] | None:
    """Check one line; returns ``(episode, label, outcome_version)`` for a labelled line."""
    where = f"line {n}"

    def problem(field: str, message: str) -> None:
        problems.append(Violation(f"{where}: {field}" if field else where, message))

    try:
        line = load_json_bytes(raw, where)
    except SidecarError:
        problem("", "is not valid JSON")
        return None
    if not isinstance(line, dict):
        problem("", f"must be a JSON object, got {type(line).__name__}")
        return None
    before = len(problems)
    for key in line:
        if key not in EXPORT_KEYS:
            hint = did_you_mean(key, EXPORT_KEYS)
            problem(clipped(key), f"unknown key; allowed keys are {', '.join(EXPORT_KEYS)}.{hint}")
    if "episode_index" not in line:
        problem("episode_index", "is missing; each line names its episode_index")
        return None
    try:  # the limits of every episode_index argument (0..int64, no bool, no 3.0)
        episode = episode_index(line["episode_index"])
    except LabelValidationError:
        problem("episode_index", f"must be a non-negative integer, got {quoted(line['episode_index'])}")
        return None
    if episode not in dataset.episodes:
        problem("episode_index", f"the dataset has no episode {episode}")
        return None
    if episode in seen:
        problem("episode_index", f"episode {episode} is also on line {seen[episode]}")
        return None
    seen[episode] = n
    uid = line.get("avala_sequence_uid")
    if uid is not None and not isinstance(uid, str):
        problem("avala_sequence_uid", f"must be a string, got {uid!r}")
    if line.get("outcome") is None:
        extra = sorted(set(line) - {"episode_index", "avala_sequence_uid", "outcome"})
        if extra:
            problem("outcome", f"is null (unlabelled episode) but the line also has {', '.join(extra)}")
        return None
    version = line.get("outcome_version")
    if version is not None:
        try:  # an int64, 1 or more (bool and 2.0 refused)
            version = int_argument(version, lambda v: LabelValidationError(v), minimum=1, maximum=MAX_EPISODE_INDEX)
        except LabelValidationError:
            problem("outcome_version", f"must be a positive integer or absent, got {version!r}")
    fields = {key: line[name] for key, name in EXPORTED.items() if name in line}
    try:
        label = validate_label(fields, duration=dataset.episodes[episode].length / dataset.fps)
    except OutcomeValidationError as exc:
        for violation in exc.violations:
            problem(_export_path(violation.path), violation.message)
        return None
    if len(problems) > before:
        return None
    return episode, label, version or 1


def import_outcomes(
    root: PathLike,
    path: PathLike,
    *,
    labels_dir: PathLike | None = None,
    labeled_by: str | None = None,
) -> dict[str, int]:
    """Read an exported ``avala_sequence_outcomes.jsonl`` back into the outcome store: every line
    checked first, then each changed label a new version (docs/outcomes.md, "Export and import").
    ``avala_sequence_uid`` is not checked against this dataset's ids (the file may come from a copy of it).

    Returns:
        ``{"lines": ..., "written": ..., "unchanged": ..., "unlabelled": ...}``.

    Raises:
        OutcomeValidationError: one or more lines break a rule (all listed with line numbers).
        DatasetError: ``root`` is not a readable dataset.
        InputFileNotFoundError: ``path`` does not exist (a ``FileNotFoundError``).
        InputFileError: ``path`` is a directory or cannot be read (nothing stored).
    """
    path = Path(path)
    data = read_user_bytes(path, what="the outcome file", kind="JSON Lines file written by export_outcomes")
    dataset = cached_dataset(root)
    problems: list[Violation] = []
    seen: dict[int, int] = {}
    parsed: list[tuple[int, dict[str, Any], int]] = []
    n_lines = 0
    for n, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        n_lines += 1
        item = _parse_line(n, raw, dataset, seen, problems)
        if item is not None:
            parsed.append(item)
    if problems:
        raise OutcomeValidationError(problems, context=f"{path}")
    if n_lines == 0:
        raise LabelValidationError(f"{path} holds no lines; pass a file written by export_outcomes.")
    who = labeled_by if labeled_by is not None else default_labeled_by()
    from strands_robots.fingerprint.columns import fingerprinter_of

    fingerprint = fingerprinter_of(dataset)

    def build(store: OutcomeStore) -> tuple[list[dict[str, Any]], dict[str, int]]:
        records = []
        for episode, label, version in parsed:
            label = {**label, "labeled_by": who}
            current = store.current(episode)
            if current is not None and label_fields(current) == label_fields(label):
                continue
            records.append(new_version(episode, label, current, fingerprint(episode), min_version=version))
        return records, {
            "lines": n_lines,
            "written": len(records),
            "unchanged": len(parsed) - len(records),
            "unlabelled": n_lines - len(parsed),
        }

    return open_outcome_store(root, labels_dir).write(build)

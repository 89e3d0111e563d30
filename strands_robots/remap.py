"""Carry every sidecar of a dataset across an edit that renumbers episodes, in one transaction.

``episode_labels.json``, ``episode_outcomes.jsonl`` and ``episode_segments.json`` are
remapped together by :func:`strands_robots.storage.remap_txn.run_remap`: all or none,
and a run interrupted by a kill or a failure is completed (or rolled back) by running the
same remap again (``docs/sidecar-format.md``, "Remap"). The mapping rule and
:func:`mapping_after_delete` are those of :mod:`strands_robots.storage.mapping`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, NothingToRemapError, SidecarError
from strands_robots.storage.atomic import atomic_write_bytes, fsync_dir
from strands_robots.storage.codec import dump_canonical, load_json_bytes
from strands_robots.storage.labels_dir import require_directory
from strands_robots.storage.mapping import EpisodeMapping, mapping_after_delete
from strands_robots.storage.record_store import content_digest
from strands_robots.storage.remap_txn import Participant, RemapResult, Step, run_remap
from strands_robots.storage.side_files import (
    LABELS,
    OUTCOMES,
    SEGMENTS,
    SIDECARS,
    carry_marker_path,
    journal_path,
    outcome_export_path,
    remap_applied_path,
    remap_staged_path,
    sidecar_path,
)

#: The participant that records a remap's id (:func:`applied_remaps`).
RECORD = "applied"
APPLIED_FORMAT = "strands-robots-labels/remaps-applied"


def _participants(root: str | Path, labels_dir: str | Path | None, allow_drop: bool) -> list[Any]:
    names = ("episode_labels", "outcomes", "segments")
    modules = [importlib.import_module(f"strands_robots.{name}.remap") for name in names]
    return [m.participant(root, labels_dir, allow_drop=allow_drop) for m in modules]


def remap_dataset(
    root: str | Path,
    mapping: Any = None,
    *,
    source: str | Path | None = None,
    labels_dir: str | Path | None = None,
    allow_drop: bool = False,
    dry_run: bool = False,
) -> RemapResult:
    """Renumber the records of every sidecar of ``root`` together, or carry them from ``source``.

    With ``source`` (the dataset before a LeRobot edit: ``ROOT_old`` after an in-place
    ``delete_episodes``, the original of ``--new_root``, ``split``, ``remove_feature``,
    ``modify_tasks`` ...), the mapping is found, not given: each labelled episode of the
    source is matched with the episode of ``root`` holding the same recording
    (:mod:`strands_robots.fingerprint.match`), its sidecars are copied and remapped into
    ``root`` (or ``labels_dir``); ``source`` is never changed (``docs/editing.md``).

    Each remap records its id (a digest of the mapping and its source) beside the sidecars,
    in the same transaction: the same remap again changes nothing and reports
    ``already_applied``.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}`` or an
            :class:`~strands_robots.storage.mapping.EpisodeMapping` (e.g. from
            :func:`mapping_after_delete`, whose deleted episodes may be dropped); None with ``source``.
        source: The dataset root before the edit (its sidecars are carried).
        labels_dir: Directory of the sidecars (default ``root``).
        allow_drop: Drop the records of every old episode missing from the mapping (with
            ``source``: of every labelled episode whose recording ``root`` does not hold).
        dry_run: Run every check and count, write nothing.

    Returns:
        :class:`~strands_robots.storage.remap_txn.RemapResult`: records kept per
        sidecar (``episode_labels``, ``outcomes``, ``segments``), whether an
        interrupted remap was completed or rolled back first, and ``already_applied``.

    Raises:
        LabelValidationError: bad mapping, records dropped without ``allow_drop``, or a
            mapping that contradicts stored fingerprints; with ``source``: labelled
            episodes without a unique match (listed), nothing to carry, or ``root``
            already holding other sidecars; nothing changed.
        EpisodeNotFoundError: a new index the edited dataset does not have.
        SidecarError: a sidecar cannot be used (nothing changed).
        RootNotFoundError: the labels dir (default ``root``) does not exist.
        RemapConflictError: an interrupted remap could not be completed.
        StorageError: a write failed (see :func:`~strands_robots.storage.remap_txn.run_remap`).
    """
    directory = Path(labels_dir if labels_dir is not None else root)
    require_directory(directory)
    if source is not None:
        if mapping is not None:
            raise LabelValidationError("give either a mapping or a source dataset to match episodes with, not both.")
        return _carry(root, Path(source), labels_dir=labels_dir, allow_drop=allow_drop, dry_run=dry_run)
    if mapping is None:
        raise LabelValidationError("give a mapping ({old: new}) or the dataset before the edit (source=OLD_ROOT).")
    parsed = EpisodeMapping.parse(mapping)
    return _run_with_record(root, labels_dir, parsed, allow_drop=allow_drop, dry_run=dry_run, source=None)


def remap_id(mapping: EpisodeMapping, source: str | Path | None) -> str:
    """16 hex digits naming a remap: its mapping, its deleted episodes and its source."""
    described = {
        "mapping": mapping.to_json(),
        "deleted": sorted(mapping.deleted),
        "source": str(Path(source).resolve()) if source is not None else None,
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


def applied_remaps(directory: str | Path) -> list[dict[str, Any]]:
    """The remaps recorded as applied to the sidecars of ``directory`` (oldest first)."""
    path = remap_applied_path(directory)
    try:
        document = load_json_bytes(path.read_bytes(), path)
    except FileNotFoundError:
        return []
    if not isinstance(document, dict) or document.get("format") != APPLIED_FORMAT:
        raise SidecarError(f"{path} is not a remap record of this tool; move it away and run the remap again.")
    return list(document.get("applied", []))


def _record_participant(directory: Path, entry: dict[str, Any]) -> Participant:
    path = remap_applied_path(directory)

    def plan(mapping: EpisodeMapping) -> Step:
        before = path.read_bytes() if path.exists() else b""
        applied = [a for a in applied_remaps(directory) if a.get("id") != entry["id"]] + [entry]
        data = dump_canonical({"format": APPLIED_FORMAT, "applied": applied})
        return Step(RECORD, path, len(applied), "replace", data=data, before=content_digest(before) if before else None)

    return Participant(RECORD, path, plan)


def _run_with_record(
    root: str | Path,
    labels_dir: str | Path | None,
    mapping: EpisodeMapping,
    *,
    allow_drop: bool,
    dry_run: bool,
    source: str | Path | None,
) -> RemapResult:
    """Run the remap with the record of its id as one more participant (skipped when recorded)."""
    directory = Path(labels_dir if labels_dir is not None else root)
    rid = remap_id(mapping, source)
    if any(a.get("id") == rid for a in applied_remaps(directory)):
        return RemapResult(already_applied=rid)
    entry = {"id": rid, "mapping": mapping.to_json(), "deleted": sorted(mapping.deleted)}
    if source is not None:
        entry["source"] = str(Path(source).resolve())
    participants = [*_participants(root, labels_dir, allow_drop), _record_participant(directory, entry)]
    result = run_remap(directory, participants, mapping, dry_run=dry_run)
    result.counts.pop(RECORD, None)
    return result


# -- carrying the sidecars of the dataset before an edit (``source``) -------------------------------


def _source_records(source: Path) -> tuple[dict[str, bytes], dict[int, Any]]:
    """The source's sidecars as bytes to install (record stores with their journal folded in
    memory: the source is not written) and ``{episode: stored fingerprint or None}`` of every
    labelled episode."""
    from strands_robots.episode_labels.document import open_store as open_labels
    from strands_robots.outcomes.store import open_outcome_store
    from strands_robots.segments.store import open_store as open_segments

    files: dict[str, bytes] = {}
    stored: dict[int, Any] = {}
    for name, opener in ((LABELS, open_labels), (SEGMENTS, open_segments)):
        path = sidecar_path(source, name)
        if not path.exists() and not journal_path(path).exists():
            continue
        store = opener(source)
        document = store.read()
        for key, record in document[store.records_key].items():
            fingerprint = record.get("fingerprint") if isinstance(record, dict) else None
            if stored.get(int(key)) is None:
                stored[int(key)] = fingerprint
        files[name] = dump_canonical(document)
    outcomes = sidecar_path(source, OUTCOMES)
    if outcomes.exists():
        outcome_store = open_outcome_store(source)
        outcome_store.refresh()
        for episode in outcome_store.versions:
            if stored.get(int(episode)) is None:
                stored[int(episode)] = (outcome_store.current(episode) or {}).get("fingerprint")
        files[OUTCOMES] = outcomes.read_bytes()
    return files, stored


def _fingerprints(root: Path, episodes: list[int] | None, rows: bool = False) -> dict[int, dict[str, Any]] | None:
    """``{episode: fingerprint}`` read from ``root``'s dataset (every episode when ``episodes``
    is None), or None when ``root`` has no LeRobot metadata. With ``rows``, ``content`` is the
    digest of the episode's ``observation.state`` rows (for datasets without statistics)."""
    from strands_robots.fingerprint.columns import fingerprinter_of, open_dataset_if_present, state_rows_digest

    dataset = open_dataset_if_present(root)
    if dataset is None:
        return None
    found = fingerprinter_of(dataset).present(sorted(dataset.episodes) if episodes is None else episodes)
    if rows:
        for episode, fingerprint in found.items():
            digest = state_rows_digest(dataset, episode)
            fingerprint.pop("content", None)
            if digest is not None:
                fingerprint["content"] = f"rows:{digest}"
    return found


def _retasked(fingerprint: Any, change: tuple[Any, Any] | None) -> Any:
    if not change or not isinstance(fingerprint, dict) or list(fingerprint.get("tasks") or []) != list(change[0]):
        return fingerprint
    return dict({k: v for k, v in fingerprint.items() if k != "meta"}, tasks=list(change[1]))


def _retask(data: bytes, retasked: dict[int, tuple[Any, Any]], path: Path) -> bytes:
    """The copy of a sidecar whose retasked episodes' stored ``tasks`` are the new ones (the
    same recording under a renamed task: ``modify_tasks``); the remap then refreshes them.
    In the outcome log, the versions of those episodes that name the old tasks."""
    if path.name == OUTCOMES:
        from strands_robots.storage.codec import dump_line

        lines = []
        for line in data.splitlines(keepends=True):
            record = load_json_bytes(line, path) if line.strip() else None
            if isinstance(record, dict) and isinstance(record.get("episode_index"), int) and "fingerprint" in record:
                changed = _retasked(record["fingerprint"], retasked.get(record["episode_index"]))
                if changed is not record["fingerprint"]:
                    line = dump_line(dict(record, fingerprint=changed))
            lines.append(line)
        return b"".join(lines)
    document = load_json_bytes(data, path)
    records = document.get("episodes") or {}
    for key, record in records.items():
        if isinstance(record, dict) and "fingerprint" in record:
            record["fingerprint"] = _retasked(record["fingerprint"], retasked.get(int(key)))
    return dump_canonical(document)


def _carry(
    root: str | Path, source: Path, *, labels_dir: str | Path | None, allow_drop: bool, dry_run: bool
) -> RemapResult:
    from strands_robots.fingerprint.match import match_episodes

    directory = Path(labels_dir if labels_dir is not None else root)
    if not (source / "meta" / "info.json").is_file() and not source.is_dir():
        raise LabelValidationError(f"--from {source}: no such dataset directory; give the dataset before the edit.")
    files, stored = _source_records(source)
    export = outcome_export_path(source).is_file()
    if not files:
        raise NothingToRemapError(
            f"nothing to carry: {source} has none of {', '.join(SIDECARS)} (looked in {source.resolve()}); "
            "give the root that held the labels before the edit as --from."
        )
    labelled = sorted(stored)
    old_read = _fingerprints(source, labelled) or {}
    old = {e: old_read.get(e) or stored.get(e) or {} for e in labelled}
    new = _fingerprints(Path(root), None)
    if new is not None and old_read and not all("content" in f for f in [*old.values(), *new.values()]):
        # no statistics to tell recordings apart: the digest of their observation.state rows does
        old_rows = _fingerprints(source, labelled, rows=True) or {}
        old = {e: old_rows.get(e) or {} for e in labelled}
        new = _fingerprints(Path(root), None, rows=True)
    if new is None:
        raise LabelValidationError(
            f"{root} has no LeRobot metadata (meta/info.json) to match episodes with; for a labels-only root give "
            "the mapping (`strands-labels remap ROOT MAPPING.json` or --deleted)."
        )
    match = match_episodes(old, new)
    if match.ambiguous:
        shown = "; ".join(f"{o} -> {c}" for o, c in list(match.ambiguous.items())[:20])
        raise LabelValidationError(
            f"the recordings of {len(match.ambiguous)} labelled episode(s) of {source} match several episodes of "
            f"{root}, or one episode is matched by several records ({shown}); no remap was made (never a guess). "
            "Give the mapping explicitly: `strands-labels remap ROOT MAPPING.json`."
        )
    if match.unmatched and not allow_drop:
        shown = ", ".join(map(str, match.unmatched[:20])) + (" ..." if len(match.unmatched) > 20 else "")
        raise LabelValidationError(
            f"{len(match.unmatched)} labelled episode(s) of {source} [{shown}] have no episode with the same "
            f"recording (length, content, tasks) in {root}; no remap was made. If the edit deleted them, pass "
            f"--allow-drop (allow_drop=True) to drop exactly their records."
        )
    mapping = EpisodeMapping(dict(match.table), frozenset(match.unmatched))
    rid = remap_id(mapping, source)
    if any(a.get("id") == rid for a in applied_remaps(directory)):
        if _carrying(directory) == rid:  # killed after the remap, before this mark was removed
            carry_marker_path(directory).unlink(missing_ok=True)
        return RemapResult(already_applied=rid, source=str(source))
    present = [n for n in SIDECARS if sidecar_path(directory, n).exists()]
    staged = {name: remap_staged_path(sidecar_path(directory, name), f"carry-{rid}") for name in files}
    carrying = all(p.exists() for p in staged.values()) or _carrying(directory) == rid
    if present and not carrying:
        raise LabelValidationError(
            f"{directory} already holds {', '.join(present)}; carrying the sidecars of {source} would overwrite "
            "them. Move them away first (or remap them by their own mapping)."
        )
    if dry_run:
        return RemapResult(counts={"episode_labels": len(mapping)}, retasked=dict(match.retasked), source=str(source))
    if _carrying(directory) != rid:
        carry_marker_path(directory).parent.mkdir(exist_ok=True)
        for name, data in files.items():
            if match.retasked:
                data = _retask(data, match.retasked, sidecar_path(source, name))
            atomic_write_bytes(staged[name], data)
        atomic_write_bytes(carry_marker_path(directory), dump_canonical({"carrying": rid, "files": sorted(files)}))
    for name, path in staged.items():  # installed in old numbering: the remap below renumbers them
        if path.exists():
            os.replace(path, sidecar_path(directory, name))
    fsync_dir(directory)
    result = _run_with_record(root, labels_dir, mapping, allow_drop=True, dry_run=False, source=source)
    carry_marker_path(directory).unlink(missing_ok=True)
    result.retasked = {match.table[o]: change for o, change in match.retasked.items()}
    result.source = str(source)
    if export:
        from strands_robots.outcomes.export import export_outcomes

        export_outcomes(root, labels_dir=labels_dir)
    return result


def _carrying(directory: Path) -> str | None:
    path = carry_marker_path(directory)
    try:
        return load_json_bytes(path.read_bytes(), path).get("carrying")
    except FileNotFoundError:
        return None


__all__ = ["EpisodeMapping", "RemapResult", "applied_remaps", "mapping_after_delete", "remap_dataset", "remap_id"]

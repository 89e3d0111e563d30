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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, MappingMismatchError, NothingToRemapError, SidecarError
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
    holds_sidecars,
    index_cache_path,
    journal_base_path,
    journal_path,
    outcome_export_path,
    remap_applied_path,
    remap_hint,
    remap_intent_path,
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
    source: str | Path | Sequence[str | Path] | None = None,
    labels_dir: str | Path | None = None,
    allow_drop: bool = False,
    dry_run: bool = False,
) -> RemapResult:
    """Renumber the records of every sidecar of ``root`` together, or carry them from ``source``.

    With ``source`` (the dataset before a LeRobot edit: ``ROOT_old`` after an in-place
    ``delete_episodes``, the original of ``--new_root``, ``split``, ``remove_feature``,
    ``modify_tasks`` ...; for ``merge`` the list of merged datasets), the mapping is found,
    not given: each labelled episode of each source is matched with the episode of ``root``
    holding the same recording (:mod:`strands_robots.fingerprint.match`), its sidecars are
    copied and remapped into ``root`` (or ``labels_dir``); the sources are never changed
    (``docs/editing.md``). A ``mapping`` given with one source is checked against the found
    one (it may settle recordings the fingerprints cannot tell apart).

    Each remap records its id (a digest of the mapping and its source) beside the sidecars,
    in the same transaction: the same remap again changes nothing and reports
    ``already_applied``.

    Args:
        root: Dataset root (after the edit).
        mapping: ``{old_index: new_index}`` or an
            :class:`~strands_robots.storage.mapping.EpisodeMapping` (e.g. from
            :func:`mapping_after_delete`, whose deleted episodes may be dropped); with one
            ``source``, optional and checked against the mapping found.
        source: The dataset root before the edit (its sidecars are carried), or a list of
            the datasets a merge combined (each carried to the episodes its recordings became).
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
            episodes without a unique match (listed), one merged episode claimed by two
            sources, nothing to carry, or ``root`` already holding other sidecars; nothing changed.
        MappingMismatchError: with ``source``, a given mapping that disagrees with the
            mapping found (every disagreement listed); nothing changed.
        EpisodeNotFoundError: a new index the edited dataset does not have.
        SidecarError: a sidecar cannot be used (nothing changed).
        RootNotFoundError: the labels dir (default ``root``) does not exist.
        RemapConflictError: an interrupted remap could not be completed.
        StorageError: a write failed (see :func:`~strands_robots.storage.remap_txn.run_remap`).
    """
    directory = Path(labels_dir if labels_dir is not None else root)
    require_directory(directory)
    if source is not None:
        sources = [Path(source)] if isinstance(source, str | os.PathLike) else [Path(s) for s in source]
        if not sources:
            raise LabelValidationError("source=[] names no dataset; give the dataset(s) before the edit.")
        given = EpisodeMapping.parse(mapping) if mapping is not None else None
        if given is not None and len(sources) > 1:
            raise LabelValidationError(
                "a mapping names the episodes of one source: with several sources (a merge) the mapping is found, "
                "never given. Drop the mapping."
            )
        return _carry(root, sources, labels_dir=labels_dir, allow_drop=allow_drop, dry_run=dry_run, given=given)
    if mapping is None:
        raise LabelValidationError("give a mapping ({old: new}) or the dataset before the edit (source=OLD_ROOT).")
    parsed = EpisodeMapping.parse(mapping)
    unfinished = remap_intent_path(directory).exists() or carry_marker_path(directory).exists()
    if not (holds_sidecars(directory) or unfinished):  # it would keep 0 records: refused (docs/editing.md)
        raise NothingToRemapError(
            f"nothing to remap: {directory.resolve()} holds none of {', '.join(SIDECARS)}."
            + (remap_hint(directory) or " Give the directory that holds the labels (ROOT, or --labels-dir DIR).")
        )
    return _run_with_record(root, labels_dir, parsed, allow_drop=allow_drop, dry_run=dry_run, source=None)


def remap_entry(mapping: EpisodeMapping, source: Path | list[Path] | None) -> dict[str, Any]:
    """The record of a remap in :func:`applied_remaps`: its mapping, its deleted episodes, its
    source (or the sources of a merge, in order) and ``id``, 16 hex digits of a digest of them."""
    entry: dict[str, Any] = {"mapping": mapping.to_json(), "deleted": sorted(mapping.deleted)}
    if source is not None:
        entry["source"] = [str(s.resolve()) for s in source] if isinstance(source, list) else str(source.resolve())
    described = {"source": None, **entry}
    return {"id": hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16], **entry}


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
    source: Path | list[Path] | None,
) -> RemapResult:
    """Run the remap with the record of its id as one more participant (skipped when recorded)."""
    directory = Path(labels_dir if labels_dir is not None else root)
    entry = remap_entry(mapping, source)
    if any(a.get("id") == entry["id"] for a in applied_remaps(directory)):
        return RemapResult(already_applied=entry["id"])
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
    from strands_robots.dataset.cache import cached_dataset_if_present
    from strands_robots.fingerprint.columns import fingerprinter_of, state_rows_digest

    dataset = cached_dataset_if_present(root)
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


def _identities(
    root: Path, sources: list[tuple[Path, dict[int, Any]]]
) -> tuple[list[dict[int, dict[str, Any]]], dict[int, dict[str, Any]]]:
    """The fingerprints that identify recordings: per source ``{labelled episode: fingerprint}``
    (``sources``: each source with ``{labelled episode: stored fingerprint}``) and
    ``{episode: fingerprint}`` of every episode of ``root``.

    A source's labelled episodes are read from its dataset (their stored fingerprints stand in
    when it has none). When an episode lacks the ``content`` digest (no statistics), every side
    that has a dataset falls back to the digest of its ``observation.state`` rows.

    Raises:
        LabelValidationError: ``root`` has no LeRobot metadata to match episodes with.
    """
    reads = [_fingerprints(source, sorted(stored)) for source, stored in sources]
    olds = [
        {e: (read or {}).get(e) or stored.get(e) or {} for e in sorted(stored)}
        for (_, stored), read in zip(sources, reads, strict=True)
    ]
    new = _fingerprints(root, None)
    if new is None:
        raise LabelValidationError(
            f"{root} has no LeRobot metadata (meta/info.json) to match episodes with; for a labels-only root give "
            "the mapping (`strands-labels remap ROOT MAPPING.json` or --deleted)."
        )
    everything = [f for old in olds for f in old.values()] + list(new.values())
    if any(reads) and not all("content" in f for f in everything):
        # no statistics to tell recordings apart: the digest of their observation.state rows does
        for k, ((source, stored), read) in enumerate(zip(sources, reads, strict=True)):
            if read:
                rows = _fingerprints(source, sorted(stored), rows=True) or {}
                olds[k] = {e: rows.get(e) or {} for e in sorted(stored)}
        new = _fingerprints(root, None, rows=True) or {}
    return olds, new


def _refuse_unmatched(match: Any, source: Path, root: str | Path, allow_drop: bool) -> None:
    """Refuse a match with ambiguous episodes, or unmatched ones without ``allow_drop`` (listed)."""
    if match.ambiguous:
        shown = "; ".join(f"{o} -> {c}" for o, c in list(match.ambiguous.items())[:20])
        raise LabelValidationError(
            f"the recordings of {len(match.ambiguous)} labelled episode(s) of {source} match several episodes of "
            f"{root}, or one episode is matched by several records ({shown}); no remap was made (never a guess). "
            f"Give the mapping explicitly: `strands-labels remap {root} MAPPING.json --from {source}`."
        )
    if match.unmatched and not allow_drop:
        shown = ", ".join(map(str, match.unmatched[:20])) + (" ..." if len(match.unmatched) > 20 else "")
        raise LabelValidationError(
            f"{len(match.unmatched)} labelled episode(s) of {source} [{shown}] have no episode with the same "
            f"recording (length, content, tasks) in {root}; no remap was made. If the edit deleted them, pass "
            f"--allow-drop (allow_drop=True) to drop exactly their records."
        )


def _given_match(
    match: Any, old: dict[int, Any], given: EpisodeMapping, source: Path, root: str | Path, allow_drop: bool
) -> Any:
    """The match a given mapping makes, checked against the found one (``docs/editing.md``).

    The given mapping may choose among the candidates of an ambiguous recording and may map an
    episode whose record has no fingerprint to compare; it may not send an episode anywhere the
    fingerprints found it is not.

    Raises:
        MappingMismatchError: the mapping disagrees with the found one (every disagreement listed).
        LabelValidationError: a labelled episode the mapping leaves out, without ``allow_drop``.
    """
    from strands_robots.fingerprint.match import EpisodeMatch

    disagree = []
    for episode, new in sorted(given.table.items()):
        if episode in match.table and match.table[episode] != new:
            disagree.append(f"{episode} -> {new} (its recording is episode {match.table[episode]})")
        elif episode in match.ambiguous and new not in match.ambiguous[episode]:
            disagree.append(f"{episode} -> {new} (its recording is one of episodes {match.ambiguous[episode]})")
        elif episode in match.unmatched and "length" in old.get(episode, {}) and "content" in old[episode]:
            disagree.append(f"{episode} -> {new} (no episode of {root} holds its recording)")
    if disagree:
        raise MappingMismatchError(
            f"the mapping disagrees with the recordings' fingerprints, {len(disagree)} move(s): "
            + "; ".join(disagree[:10])
            + f". Nothing was changed. Drop the mapping to carry by the found one (`strands-labels remap {root} "
            f"--from {source}`) or correct the file."
        )
    labelled = set(match.table) | set(match.ambiguous) | set(match.unmatched)
    given.refuse_drops(labelled, allow_drop=allow_drop, what="labels")
    chosen = EpisodeMatch(table={o: n for o, n in sorted(given.table.items()) if o in labelled})
    chosen.unmatched = sorted(labelled - set(chosen.table))
    chosen.retasked = {o: change for o, change in match.retasked.items() if o in chosen.table}
    return chosen


def _carry(
    root: str | Path,
    sources: list[Path],
    *,
    labels_dir: str | Path | None,
    allow_drop: bool,
    dry_run: bool,
    given: EpisodeMapping | None = None,
) -> RemapResult:
    """Carry the sidecars of ``sources`` (one, or the datasets a merge combined) into ``root``."""
    from strands_robots.fingerprint.match import match_episodes

    directory = Path(labels_dir if labels_dir is not None else root)
    for source in sources:
        if not source.is_dir():
            raise LabelValidationError(f"--from {source}: no such dataset directory; give the dataset before the edit.")
    if len(set(s.resolve() for s in sources)) != len(sources):
        raise LabelValidationError("a --from source is named twice; name each dataset the merge combined once.")
    read = [_source_records(source) for source in sources]
    if not any(files for files, _ in read):
        looked = ", ".join(str(s.resolve()) for s in sources)
        raise NothingToRemapError(
            f"nothing to carry: {' and '.join(map(str, sources))} hold none of {', '.join(SIDECARS)} (looked in "
            f"{looked}); give the root that held the labels before the edit as --from."
        )
    olds, new = _identities(Path(root), [(source, stored) for source, (_, stored) in zip(sources, read, strict=True)])
    matches = []
    for source, old in zip(sources, olds, strict=True):
        match = match_episodes(old, new)
        if given is not None:
            match = _given_match(match, old, given, source, root, allow_drop)
        else:
            _refuse_unmatched(match, source, root, allow_drop)
        matches.append(match)
    if len(sources) == 1:
        (match,) = matches
        files = {
            name: _retask(data, match.retasked, sidecar_path(sources[0], name)) if match.retasked else data
            for name, data in read[0][0].items()
        }
        mapping = EpisodeMapping(dict(match.table), frozenset(match.unmatched))
        retasked = {match.table[o]: change for o, change in match.retasked.items()}
    else:
        files, retasked = _merged_files(sources, [files for files, _ in read], matches, root)
        mapping = EpisodeMapping({new: new for match in matches for new in match.table.values()})
    return _install(root, labels_dir, directory, sources, files, mapping, retasked, dry_run)


def _merged_files(
    sources: list[Path], files: list[dict[str, bytes]], matches: list[Any], root: str | Path
) -> tuple[dict[str, bytes], dict[int, tuple[Any, Any]]]:
    """The sidecars of a merge, in the merged dataset's numbering: each carried record (with its
    history: every outcome version, every segmentation of the history) under the episode its
    recording became; ``{merged episode: (old tasks, new tasks)}`` of retasked ones.

    Raises:
        LabelValidationError: two sources' records claim one merged episode (listed).
    """
    claimed: dict[int, list[str]] = {}
    for source, match in zip(sources, matches, strict=True):
        for old, new in match.table.items():
            claimed.setdefault(new, []).append(f"{source} episode {old}")
    shared = {new: who for new, who in claimed.items() if len(who) > 1}
    if shared:
        shown = "; ".join(f"{new} <- {', '.join(who)}" for new, who in sorted(shared.items())[:10])
        raise LabelValidationError(
            f"{len(shared)} episode(s) of {root} hold a recording labelled in several sources ({shown}); "
            "no remap was made (never a guess), and a merge takes no mapping: carry from copies of the sources "
            "without those records, then label those episodes again."
        )
    retasked = {m.table[o]: change for m in matches for o, change in m.retasked.items()}
    merged: dict[str, bytes] = {}
    for name in (LABELS, SEGMENTS):
        documents = [
            (load_json_bytes(f[name], sidecar_path(s, name)), m)
            for s, f, m in zip(sources, files, matches, strict=True)
            if name in f
        ]
        if not documents:
            continue
        combined = dict(documents[0][0], episodes={})
        benchmarks = sorted({d["benchmark"] for d, _ in documents if d.get("benchmark")})
        if "benchmark" in combined:
            combined["benchmark"] = " + ".join(benchmarks)
        for document, match in documents:
            for old, new in match.table.items():
                record = document["episodes"].get(str(old))
                if isinstance(record, dict):
                    combined["episodes"][str(new)] = _renumbered(record, new)
        merged[name] = _retask(dump_canonical(combined), retasked, sidecar_path(root, name))
    logs = [(s, m) for s, f, m in zip(sources, files, matches, strict=True) if OUTCOMES in f]
    if logs:
        from strands_robots.outcomes.store import HEADER, open_outcome_store
        from strands_robots.storage.codec import dump_line

        lines = [dump_line(HEADER)]
        for source, match in logs:
            store = open_outcome_store(source)
            store.refresh()
            for old, new in match.table.items():
                lines += [dump_line(dict(version, episode_index=new)) for version in store.versions.get(old, [])]
        merged[OUTCOMES] = _retask(b"".join(lines), retasked, sidecar_path(root, OUTCOMES))
    return merged, retasked


def _renumbered(record: dict[str, Any], new: int) -> dict[str, Any]:
    """A record (and the entries of its ``history``) under episode ``new``."""
    record = dict(record, episode_index=new)
    if isinstance(record.get("history"), list):
        record["history"] = [dict(h, episode_index=new) if isinstance(h, dict) else h for h in record["history"]]
    return record


def _copied_with_dataset(sources: list[Path], directory: Path) -> bool:
    """True when ``directory``'s sidecars (and journals) are byte-for-byte those of the one
    source: the edit copied them with the dataset (``recompute_stats`` and ``reencode_videos``
    to a new root copy the whole root; a copy made before an in-place ``modify_tasks``)."""
    if len(sources) != 1:
        return False
    source = sources[0]
    if source.resolve() == directory.resolve():
        return False
    for name in SIDECARS:
        path, there = sidecar_path(source, name), sidecar_path(directory, name)
        for a, b in ((path, there), (journal_path(path), journal_path(there))):
            if a.exists() != b.exists() or (a.exists() and a.read_bytes() != b.read_bytes()):
                return False
    return True


def _install(
    root: str | Path,
    labels_dir: str | Path | None,
    directory: Path,
    sources: list[Path],
    files: dict[str, bytes],
    mapping: EpisodeMapping,
    retasked: dict[int, tuple[Any, Any]],
    dry_run: bool,
) -> RemapResult:
    """Install ``files`` (the sidecars to carry, in the numbering ``mapping`` starts from) beside
    ``root`` and remap them, as one remap recorded under its id (of its source, or the sources
    of a merge); resumed by running it again after a kill."""
    described = sources[0] if len(sources) == 1 else list(sources)
    rid = remap_entry(mapping, described)["id"]
    shown = ", ".join(map(str, sources))
    if any(a.get("id") == rid for a in applied_remaps(directory)):
        if _carrying(directory) == rid:  # killed after the remap, before this mark was removed
            carry_marker_path(directory).unlink(missing_ok=True)
        return RemapResult(already_applied=rid, source=shown)
    present = [n for n in SIDECARS if sidecar_path(directory, n).exists()]
    staged = {name: remap_staged_path(sidecar_path(directory, name), f"carry-{rid}") for name in files}
    carrying = all(p.exists() for p in staged.values()) or _carrying(directory) == rid
    if present and not carrying and _copied_with_dataset(sources, directory):
        # copies the edit made of the source's sidecars: carried again from the source, which keeps them
        if not dry_run:
            for name in SIDECARS:
                sidecar = sidecar_path(directory, name)
                for derived in (journal_path, journal_base_path, index_cache_path):
                    derived(sidecar).unlink(missing_ok=True)
                sidecar.unlink(missing_ok=True)
            fsync_dir(directory)
        present = []
    if present and not carrying:
        raise LabelValidationError(
            f"{directory} already holds {', '.join(present)}; carrying the sidecars of {shown} would overwrite "
            "them. Move them away first (or remap them by their own mapping)."
        )
    if dry_run:
        return RemapResult(counts={"episode_labels": len(mapping)}, retasked=retasked, source=shown)
    if _carrying(directory) != rid:
        carry_marker_path(directory).parent.mkdir(exist_ok=True)
        for name, data in files.items():
            atomic_write_bytes(staged[name], data)
        atomic_write_bytes(carry_marker_path(directory), dump_canonical({"carrying": rid, "files": sorted(files)}))
    for name, path in staged.items():  # installed in old numbering: the remap below renumbers them
        if path.exists():
            os.replace(path, sidecar_path(directory, name))
    fsync_dir(directory)
    result = _run_with_record(root, labels_dir, mapping, allow_drop=True, dry_run=False, source=described)
    carry_marker_path(directory).unlink(missing_ok=True)
    result.retasked = retasked
    result.source = shown
    if any(outcome_export_path(source).is_file() for source in sources):
        from strands_robots.outcomes.export import export_outcomes

        export_outcomes(root, labels_dir=labels_dir)
    return result


def _carrying(directory: Path) -> str | None:
    path = carry_marker_path(directory)
    try:
        return load_json_bytes(path.read_bytes(), path).get("carrying")
    except FileNotFoundError:
        return None


__all__ = ["EpisodeMapping", "RemapResult", "applied_remaps", "mapping_after_delete", "remap_dataset"]

"""One transactional remap over every sidecar of a labels directory.

Each sidecar is a :class:`Participant`; :func:`run_remap` plans every participant under
its lock, writes the intent file (phase ``staging``) and the staged documents, commits the
intent (phase ``committed``), then installs each step (each one checks first whether it is
done, so it can be repeated) and removes the intent. A run that finds an intent file
finishes it first: a ``staging`` one is rolled back, a ``committed`` one completed (the
same mapping again is that re-run; a different one is refused after the completion).
See docs/sidecar-format.md, "Remap".
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from strands_robots.errors import LabelValidationError, RemapConflictError, SidecarError, StorageError
from strands_robots.storage.atomic import atomic_write_bytes, fsync_dir, read_regular
from strands_robots.storage.codec import dump_canonical, load_json_bytes
from strands_robots.storage.jsonl import append_jsonl, read_jsonl
from strands_robots.storage.lock import sidecar_lock
from strands_robots.storage.mapping import EpisodeMapping
from strands_robots.storage.record_store import content_digest
from strands_robots.storage.side_files import (
    journal_path,
    legacy_remap_intent_path,
    legacy_temp_prefix,
    remap_intent_path,
    remap_lock_target,
    remap_staged_path,
)

INTENT_FORMAT = "strands-robots-labels/remap-intent"
INTENT_VERSION = 1


@dataclass
class Step:
    """What one participant's remap changes.

    Attributes:
        name: The participant (``episode_labels``, ``outcomes``, ``segments``).
        sidecar: Its file.
        count: Records kept under their new index.
        kind: ``none`` (nothing to write), ``replace`` (a new JSON document) or
            ``append`` (one JSON line appended to a JSON Lines sidecar).
        data: ``replace``: the new file's bytes.
        before: ``replace``: sha256 of the file the plan was made from.
        record: ``append``: the line (the transaction id is added as ``txn``).
        size_before: ``append``: the file's size when planned.
    """

    name: str
    sidecar: Path
    count: int
    kind: Literal["none", "replace", "append"] = "none"
    data: bytes | None = None
    before: str | None = None
    record: dict[str, Any] | None = None
    size_before: int = 0


@dataclass
class Participant:
    """A sidecar taking part in a remap: ``plan(mapping)`` runs with its lock held and raises
    (a typed error) when the mapping is refused for it."""

    name: str
    sidecar: Path
    plan: Callable[[EpisodeMapping], Step]


@dataclass
class RemapResult:
    """Records kept per participant, and whether an interrupted remap was finished first."""

    counts: dict[str, int] = field(default_factory=dict)
    recovered: str | None = None  # "completed" or "rolled back"
    already_applied: str | None = None  # the id of a remap found recorded as applied: nothing changed
    retasked: dict[int, tuple[Any, Any]] = field(default_factory=dict)  # new episode: (old tasks, new tasks)
    source: str | None = None  # the dataset the sidecars were carried from


def _read_intent(path: Path | str) -> dict[str, Any] | None:
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return None
    intent = load_json_bytes(data, path)
    if not isinstance(intent, dict) or intent.get("format") != INTENT_FORMAT:
        raise SidecarError(f"{path} is not a remap intent file of this tool; move it away and run the remap again.")
    if intent.get("version") != INTENT_VERSION or intent.get("phase") not in ("staging", "committed"):
        raise SidecarError(
            f"{path} has version {intent.get('version')!r} / phase {intent.get('phase')!r}, which this build "
            "cannot finish; upgrade strands-robots-labels (or move the file away after checking the sidecars)."
        )
    return intent


def refuse_write_before_install(sidecar: Path, intent_file: str | None = None) -> None:
    """Refuse a write to a sidecar that an interrupted, committed remap has yet to install
    (its renumbered version waits in the state folder): written now, the change would be in
    the old numbering and the remap could no longer be completed (``docs/editing.md``).
    A remap in progress holds this sidecar's lock until it is done, so only a killed one is seen;
    an intent file this build cannot read is left to the remap, which names it.

    Args:
        sidecar: The sidecar about to be written.
        intent_file: Its directory's remap intent file, when the caller keeps it (every
            write checks it: the store names it once).

    Raises:
        RemapConflictError: naming the remap to run again; nothing was written.
    """
    path = intent_file or remap_intent_path(sidecar.parent)
    if not os.access(path, os.F_OK, follow_symlinks=False):
        return  # no remap left one (the common case, answered without an exception)
    try:
        intent = _read_intent(path)
    except SidecarError:
        return
    if intent is None or intent["phase"] != "committed":
        return
    if any(isinstance(s, dict) and s.get("sidecar") == sidecar.name for s in intent.get("steps", [])):
        raise RemapConflictError(
            f"a remap of {sidecar.parent} (transaction {intent.get('txn')}) was interrupted after it committed and "
            f"has not installed {sidecar.name} yet; nothing was written. Run the same remap again (it completes it: "
            f"`strands-labels remap {sidecar.parent} ...` as before), then write again."
        )


def _apply_step(directory: Path, txn: str, step: dict[str, Any]) -> None:
    """Make one committed step happen (a no-op when it already has)."""
    sidecar = directory / step["sidecar"]
    if step["kind"] == "replace":
        staged, journal = remap_staged_path(sidecar, txn), journal_path(sidecar)
        current = content_digest(sidecar.read_bytes()) if sidecar.exists() else None
        if current == step["after"]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(staged)
            return
        journal_pending = journal.exists() and journal.stat().st_size > 0
        if current != step["before"] or journal_pending or not staged.exists():
            raise RemapConflictError(
                f"{sidecar} changed since the interrupted remap {txn} was prepared (another writer ran before this "
                f"re-run), so its renumbered version was not installed. It is kept at {staged}. Compare the two, "
                f"keep the right one at {sidecar}, then delete {remap_intent_path(directory)} and the file you did not keep."
            )
        try:
            os.replace(staged, sidecar)
            fsync_dir(directory)
        except OSError as exc:
            raise StorageError(
                f"could not install {staged} as {sidecar}: {exc.strerror or exc}; run the same remap again to "
                "complete it (the intent file records it)."
            ) from exc
    elif step["kind"] == "append":
        records, _ = read_jsonl(sidecar, offset=step["size_before"]) if sidecar.exists() else ([], 0)
        if any(isinstance(r, dict) and r.get("kind") == "remap" and r.get("txn") == txn for r in records):
            return
        with sidecar_lock(sidecar):
            append_jsonl(sidecar, [step["record"]])


def _roll_back(directory: Path, intent: dict[str, Any]) -> None:
    for step in intent.get("steps", []):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(remap_staged_path(directory / step["sidecar"], intent["txn"]))
    with contextlib.suppress(FileNotFoundError):
        os.unlink(remap_intent_path(directory))
    fsync_dir(directory)


def _complete(directory: Path, intent: dict[str, Any]) -> None:
    for step in intent["steps"]:
        _apply_step(directory, intent["txn"], step)
    os.unlink(remap_intent_path(directory))
    fsync_dir(directory)


def _adopt_legacy_intent(directory: Path) -> dict[str, Any] | None:
    """Move the intent of a remap an earlier version left unfinished (and its staged files)
    into the state folder, so it is finished or rolled back as one of ours."""
    legacy = legacy_remap_intent_path(directory)
    intent = _read_intent(legacy)
    if intent is None:
        return None
    for step in intent.get("steps", []):
        sidecar = directory / step["sidecar"]
        old = sidecar.with_name(f"{legacy_temp_prefix(sidecar)}remap-{intent['txn']}")
        if os.path.lexists(old):
            os.replace(old, remap_staged_path(sidecar, intent["txn"]))
    atomic_write_bytes(remap_intent_path(directory), dump_canonical(intent))
    os.unlink(legacy)
    return intent


@contextlib.contextmanager
def _locked(paths: list[Path]) -> Any:
    with contextlib.ExitStack() as stack:
        for path in sorted(set(paths)):
            stack.enter_context(sidecar_lock(path))
        yield


def recover(directory: Path) -> tuple[str | None, dict[str, Any] | None]:
    """Finish an interrupted remap of ``directory``, if any (caller holds the intent lock).

    Returns:
        ``(what, intent)``: ``"completed"`` or ``"rolled back"`` and the intent it read,
        or ``(None, None)`` when there was none.

    Raises:
        RemapConflictError: a sidecar changed since the remap was prepared.
        SidecarError: the intent file is not readable.
    """
    intent = _read_intent(remap_intent_path(directory))
    if intent is None:
        intent = _adopt_legacy_intent(Path(directory))
    if intent is None:
        return None, None
    with _locked([directory / s["sidecar"] for s in intent.get("steps", [])]):
        if intent["phase"] == "staging":
            _roll_back(directory, intent)
            return "rolled back", intent
        _complete(directory, intent)
        return "completed", intent


def run_remap(
    directory: str | Path, participants: list[Participant], mapping: EpisodeMapping, *, dry_run: bool = False
) -> RemapResult:
    """Remap every participant together (see the module docstring for the protocol).

    Args:
        directory: The labels directory (every participant's sidecar lives in it).
        participants: The sidecars to remap.
        mapping: The validated mapping.
        dry_run: Plan (every check) and count, write nothing.

    Returns:
        :class:`RemapResult`.

    Raises:
        LabelValidationError, EpisodeNotFoundError: a participant refused the mapping;
            nothing changed.
        RemapConflictError: an interrupted remap could not be completed.
        StorageError: writing failed. Before the commit nothing changed; after it the
            message says to run the same remap again, which completes it.
    """
    directory = Path(directory)
    intent_file = remap_intent_path(directory)
    result = RemapResult()
    with sidecar_lock(remap_lock_target(directory)):
        if not dry_run:
            result.recovered, previous = recover(directory)
            if result.recovered == "completed" and previous is not None:
                if previous["mapping"] == mapping.to_json():
                    result.counts = {s["name"]: s["count"] for s in previous["steps"]}
                    return result
                raise LabelValidationError(
                    f"an interrupted remap (transaction {previous['txn']}, mapping {previous['mapping']}) was found "
                    "and completed first; the mapping you passed was not applied. If it describes a further edit, "
                    "run it again."
                )
        with _locked([p.sidecar for p in participants]):
            steps = [p.plan(mapping) for p in participants]
            result.counts = {s.name: s.count for s in steps}
            writes = [s for s in steps if s.kind != "none"]
            if dry_run or not writes:
                return result
            txn = uuid.uuid4().hex
            intent: dict[str, Any] = {
                "format": INTENT_FORMAT,
                "version": INTENT_VERSION,
                "txn": txn,
                "phase": "staging",
                "mapping": mapping.to_json(),
                "deleted": sorted(mapping.deleted),
                "steps": [_describe(s, txn) for s in writes],
            }
            try:
                atomic_write_bytes(intent_file, dump_canonical(intent))
                for step in writes:
                    if step.kind == "replace":
                        atomic_write_bytes(remap_staged_path(step.sidecar, txn), step.data or b"")
                intent["phase"] = "committed"
                atomic_write_bytes(intent_file, dump_canonical(intent))
            except BaseException:
                _roll_back(directory, intent)
                raise
            try:
                _complete(directory, intent)
            except OSError as exc:
                if isinstance(exc, StorageError) and "run the same remap again" in str(exc):
                    raise
                raise StorageError(
                    f"the remap was interrupted while installing it ({exc}); run the same remap again to complete "
                    f"it ({intent_file} records it)."
                ) from exc
            return result


def remap_sidecar(mapping: Any, participant: Callable[[], Participant], *, dry_run: bool = False) -> int:
    """One sidecar's own ``remap`` (``episode_labels.remap`` and its siblings): a remap of one participant.

    The mapping is checked first (a bad mapping is reported before anything is opened),
    then ``participant()`` opens the store; a store whose directory does not exist yet
    (the outcome store creates it on its first write) holds nothing to remap.

    Args:
        mapping: ``{old_index: new_index}`` or an :class:`EpisodeMapping`.
        participant: Opens the store's :class:`Participant`.
        dry_run: Plan (every check) and count, write nothing.

    Returns:
        Records kept under their new index.

    Raises:
        LabelValidationError: a bad mapping, or the participant refused it (see :func:`run_remap`).
    """
    parsed = EpisodeMapping.parse(mapping)
    part = participant()
    if not part.sidecar.parent.is_dir():
        return 0
    return run_remap(part.sidecar.parent, [part], parsed, dry_run=dry_run).counts[part.name]


def _describe(step: Step, txn: str) -> dict[str, Any]:
    described: dict[str, Any] = {"name": step.name, "sidecar": step.sidecar.name, "kind": step.kind}
    described["count"] = step.count
    if step.kind == "replace":
        described["before"] = step.before
        described["after"] = content_digest(step.data or b"")
    else:
        described["record"] = dict(step.record or {}, txn=txn)
        described["size_before"] = step.size_before
    return described

"""The remap participant: one store's part of a remap, the same for every store.

Every store plans its :class:`~strands_robots.storage.remap_txn.Step` here, with its lock
held (docs/sidecar-format.md, "Remap"): new indices the edited dataset lacks, drops nobody
consented to and moves the stored fingerprints contradict are refused
(:mod:`strands_robots.storage.mapping`), then the store's ``move`` turns the carried pairs
``{old: new}`` into its step. A record store gives :func:`record_store_participant` just
the change of one record under its new index; its ``episode_index`` and fingerprint are
set here (read anew for the new episode when the dataset is there; a moved record kept
unchecked loses its ``meta``, its values were not read for the new index).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from strands_robots.storage.codec import dump_canonical
from strands_robots.storage.mapping import EpisodeMapping, check_fingerprints, check_targets
from strands_robots.storage.record_store import RecordStore, content_digest
from strands_robots.storage.remap_txn import Participant, Step

#: ``{old_episode_index: stored fingerprint or None}`` of a store's labelled episodes.
Labelled = Callable[[], dict[int, Any]]
#: A store's move: the carried pairs ``{old: new}`` and the edited dataset's fingerprinter
#: (None without its metadata) -> the store's :class:`Step`.
Move = Callable[[dict[int, int], Any], Step]


def store_participant(
    name: str, sidecar: Path, root: str | Path, *, what: str, allow_drop: bool, labelled: Labelled, move: Move
) -> Participant:
    """A store's :class:`Participant`: the steps of the module docstring around its ``move``.

    Args:
        name: The participant (``episode_labels``, ``outcomes``, ``segments``).
        sidecar: Its file.
        root: The dataset root (after the edit).
        what: What the records are, for refusals (``"labels"``, ``"outcome labels"``).
        allow_drop: Old episodes missing from the mapping may be dropped.
        labelled: Reads the store's labelled episodes (called with the lock held).
        move: Makes the step from the carried pairs.

    Returns:
        The participant; its ``plan`` raises ``LabelValidationError`` (drops without
        ``allow_drop``, a contradicted fingerprint) or ``EpisodeNotFoundError`` (a new index
        the dataset lacks) before anything is written.
    """

    def plan(mapping: EpisodeMapping) -> Step:
        from strands_robots.dataset.cache import cached_dataset_if_present
        from strands_robots.fingerprint.columns import fingerprinter_of

        dataset = cached_dataset_if_present(root)
        if dataset is not None:
            check_targets(mapping, dataset.episodes, root)
        stored = labelled()
        if not stored:
            return Step(name, sidecar, 0)
        mapping.refuse_drops(stored, allow_drop=allow_drop, what=what)
        carried = {old: new for old in sorted(stored) if (new := mapping.get(old)) is not None}
        fingerprinter = fingerprinter_of(dataset) if dataset is not None else None
        if fingerprinter is not None:
            check_fingerprints([(old, new, stored[old]) for old, new in carried.items()], fingerprinter, what)
        return move(carried, fingerprinter)

    return Participant(name, sidecar, plan)


def _stored_fingerprint(record: Any) -> Any:
    """A record's fingerprint for the remap check; a record saved without one is checked by
    its ``length`` when it has one."""
    if not isinstance(record, dict):
        return None
    return record.get("fingerprint") or ({"length": record["length"]} if "length" in record else None)


def record_store_participant(
    name: str,
    store: RecordStore,
    root: str | Path,
    *,
    what: str,
    allow_drop: bool,
    move: Callable[[dict[str, Any], int], dict[str, Any]] = lambda record, new: record,
) -> Participant:
    """The participant of a :class:`RecordStore` sidecar.

    The journal is folded first, so the plan is made from (and its ``before`` digest is)
    the canonical file's bytes. The step is a no-op when nothing moves, else a ``replace``
    of the validated document.

    Args:
        name: The participant.
        store: Its record store.
        root: The dataset root (after the edit).
        what: What the records are, for refusals (``"labels"``, ``"segmentations"``).
        allow_drop: Old episodes missing from the mapping may be dropped.
        move: The store's own change of a record (a copy, ``episode_index`` already the
            new one) moved to the new index ``new``; the default keeps it as it is.
    """
    read: dict[str, Any] = {}

    def labelled() -> dict[int, Any]:
        if not store.exists():
            return {}
        store.flush()
        store.forget_versions()  # the records are renumbered: versions remembered by key no longer apply
        read["before"] = store.path.read_bytes()
        read["document"] = store.read()
        return {int(key): _stored_fingerprint(record) for key, record in read["document"][store.records_key].items()}

    def step(carried: dict[int, int], fingerprinter: Any) -> Step:
        from strands_robots.fingerprint import META_KEY

        document = read["document"]
        records = document[store.records_key]
        current = fingerprinter.present(sorted(carried.values())) if fingerprinter is not None else {}
        moved: dict[str, Any] = {}
        for key, record in records.items():
            new = carried.get(int(key))
            if new is None:
                continue
            record = move(dict(record, episode_index=new), new)
            fingerprint = record.get("fingerprint")
            if fingerprinter is not None and fingerprint:
                record["fingerprint"] = current[new]
            elif new != int(key) and isinstance(fingerprint, dict) and META_KEY in fingerprint:
                record["fingerprint"] = {k: v for k, v in fingerprint.items() if k != META_KEY}
            moved[str(new)] = record
        if moved == records:
            return Step(name, store.path, len(moved))
        document[store.records_key] = moved
        store.validate(document, store.path)
        data = dump_canonical(document)
        return Step(name, store.path, len(moved), "replace", data=data, before=content_digest(read["before"]))

    return store_participant(name, store.path, root, what=what, allow_drop=allow_drop, labelled=labelled, move=step)

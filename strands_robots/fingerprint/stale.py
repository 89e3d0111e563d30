"""Stale labels: records whose stored dataset fingerprint no longer matches the dataset.

The stored fingerprints are columns of the label index (:mod:`.index`); the dataset's are
columns too (:mod:`strands_robots.dataset.fingerprints`), so a million records are
compared with numpy in milliseconds. The dataset's columns are cached per process and
beside the sidecar as ``.episode_labels.json.fingerprints.npz``, keyed by the dataset's
metadata files (name, inode, size, mtime): a later process checks staleness without
opening the dataset, and any change to ``meta/`` makes the cache stale. The label writer
leaves that cache when it records fingerprints (:func:`remember_dataset_columns`). For
datasets of up to :data:`JSON_CACHE_EPISODES` episodes the cache is JSON
(``.episode_labels.json.fingerprints.json``) and a small sidecar is checked against it in
plain Python, so a filter of a small labelled dataset imports neither numpy nor pyarrow
(docs/performance.md, "Small sidecars"). Without a cache the columns are read from the
metadata by :mod:`strands_robots.dataset.light_fingerprints` (no pyarrow or numpy) when it is
plainly well-formed, else by the dataset reader ("Fingerprints without pyarrow"). Before
either, labels whose fingerprints all name the current digest of the metadata files
(``meta``: :func:`read_from` for a small sidecar, the index's ``fp_meta`` for a large one)
are known fresh without reading them. The rule (only keys present on both sides count;
a record without a fingerprint is never stale) is stated in ``docs/sidecar-format.md``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

from strands_robots.dataset.hub import accepts_repo_id
from strands_robots.episode_labels.document import existing_store
from strands_robots.episode_labels.rows import TaskCodes, fingerprint_row, is_small
from strands_robots.fingerprint import (
    META_KEY,
    fingerprinter_of,
    has_dataset_metadata,
    open_dataset_for_checks,
    reason_order,
)
from strands_robots.storage.side_files import fingerprints_cache_path

CACHE_VERSION = 1
#: Datasets of at most this many episodes have their fingerprint cache in JSON (read
#: without numpy); larger ones in ``.npz``.
JSON_CACHE_EPISODES = 200_000
_COLUMNS = ("episode", "length", "index_from", "index_to", "task_code", "content")
_results: dict[str, tuple[tuple[Any, ...], dict[int, str]]] = {}
_datasets: dict[str, tuple[tuple[Any, ...], Any]] = {}
_plains: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
_metadata_digests: dict[str, tuple[tuple[Any, ...], str | None]] = {}


def clear_caches() -> None:
    """Forget what this process remembers of datasets and results (what a new process
    starts with; the files beside the sidecar stay)."""
    for cache in (_results, _datasets, _plains, _metadata_digests):
        cache.clear()


def _cache_path(sidecar: Path) -> Path:
    return fingerprints_cache_path(sidecar, ".npz")


def _json_cache_path(sidecar: Path) -> Path:
    return fingerprints_cache_path(sidecar, ".json")


def _cache_meta(root: Path, signature: tuple[Any, ...]) -> dict[str, Any]:
    return {"version": CACHE_VERSION, "root": os.path.abspath(root), "signature": [list(s) for s in signature]}


def _load_json(path: Path, expected: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON cache's columns (plain lists) when it is for ``expected``, else None."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or {k: data.get(k) for k in expected} != expected:
        return None
    return data


def _load_cached(path: Path, expected: dict[str, Any]) -> Any | None:
    import numpy as np

    from strands_robots.dataset.fingerprints import DatasetFingerprints

    plain = _load_json(_json_cache_path_of(path), expected)
    if plain is not None:
        try:
            return DatasetFingerprints.from_plain(plain)
        except (KeyError, TypeError, ValueError, AttributeError, UnicodeEncodeError):
            return None
    try:
        with np.load(path) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if {k: meta.get(k) for k in expected} != expected:
                return None
            return DatasetFingerprints(
                **{name: data[name] for name in _COLUMNS},
                has_range=bool(meta["has_range"]),
                task_lists=[tuple(t) for t in meta["task_lists"]],
                meta=str(meta.get("digest") or ""),
            )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save_cached(path: Path, expected: dict[str, Any], columns: Any) -> None:
    if len(columns.episode) <= JSON_CACHE_EPISODES:
        _save_plain(path, expected, columns.to_plain())
        return
    import numpy as np

    meta = {
        **expected,
        "has_range": columns.has_range,
        "task_lists": [list(t) for t in columns.task_lists],
        "digest": columns.meta,
    }
    buffer = io.BytesIO()
    np.savez(
        buffer,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        **{name: getattr(columns, name) for name in _COLUMNS},
    )
    _write_cache(path, buffer.getvalue())
    with contextlib.suppress(OSError):
        _json_cache_path_of(path).unlink()  # one cache per dataset


def _save_plain(path: Path, expected: dict[str, Any], plain: dict[str, Any]) -> None:
    """Keep the plain columns as the JSON cache (``path`` names the ``.npz`` one; a large
    dataset's columns go there instead, which needs numpy)."""
    if len(plain["episode"]) > JSON_CACHE_EPISODES:
        from strands_robots.dataset.fingerprints import DatasetFingerprints

        _save_cached(path, expected, DatasetFingerprints.from_plain(plain))
        return
    _write_cache(_json_cache_path_of(path), json.dumps({**expected, **plain}).encode())
    with contextlib.suppress(OSError):
        path.unlink()  # one cache per dataset


def _write_cache(path: Path, data: bytes) -> None:
    """Replace ``path`` atomically (not fsynced: a cache that is lost is rebuilt)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:  # a cache: a read-only directory only costs speed
        with contextlib.suppress(OSError):
            tmp.unlink()


def _json_cache_path_of(npz: Path) -> Path:
    return npz.with_name(npz.name.removesuffix(".npz") + ".json")


def remember_dataset_columns(root: str | Path, sidecar: Path, signature: tuple[Any, ...], columns: Any) -> None:
    """Keep the dataset's fingerprint columns beside ``sidecar`` (what a label writer just
    read), so the next filter checks staleness without opening the dataset.

    Args:
        root: Dataset root.
        sidecar: The label sidecar the columns are kept beside.
        signature: The metadata signature taken *before* the dataset was opened (a
            change meanwhile then makes the cache stale, never wrong).
        columns: :class:`strands_robots.dataset.fingerprints.DatasetFingerprints`.
    """
    root = Path(root)
    expected = _cache_meta(root, signature)
    _save_cached(_cache_path(sidecar), expected, columns)
    _datasets[os.path.abspath(root)] = (signature, columns)


def dataset_columns(root: Path, sidecar: Path, signature: tuple[Any, ...], *, read: bool = True) -> Any | None:
    """The dataset's fingerprint columns (memory, then the file beside ``sidecar``, then the
    dataset itself); None when the reader refuses the dataset (a warning says so), or, with
    ``read=False``, when neither memory nor the file has them."""
    key = os.path.abspath(root)
    hit = _datasets.get(key)
    if hit is not None and hit[0] == signature:
        return hit[1]
    expected = _cache_meta(root, signature)
    columns = _load_cached(_cache_path(sidecar), expected)
    if columns is None and not read:
        return None
    if columns is None:
        from strands_robots.dataset.fingerprints import DatasetFingerprints

        plain = _read_plain(root, signature)
        if plain is not None:
            columns = DatasetFingerprints.from_plain(plain)
            if len(columns.episode) <= JSON_CACHE_EPISODES:
                _save_plain(_cache_path(sidecar), expected, plain)  # already the JSON cache's form
            else:
                _save_cached(_cache_path(sidecar), expected, columns)
        else:
            digest = metadata_digest_of(root, signature)  # before the read, as _read_plain
            dataset = open_dataset_for_checks(root)
            if dataset is None:
                return None
            columns = tagged(root, signature, digest, fingerprinter_of(dataset).columns)
            _save_cached(_cache_path(sidecar), expected, columns)
    _datasets[key] = (signature, columns)
    return columns


def plain_dataset_columns(
    root: str | Path, sidecar: Path, signature: tuple[Any, ...], *, save: bool = True, read: bool = True
) -> tuple[dict[str, Any] | None, bool]:
    """The dataset's fingerprint columns as plain lists, without numpy or pyarrow.

    From memory, else the JSON cache beside ``sidecar``, else the metadata itself read by
    :func:`strands_robots.dataset.light_fingerprints.light_fingerprint_columns`.

    Args:
        root: Dataset root.
        sidecar: The label sidecar the cache is kept beside.
        signature: :func:`strands_robots.dataset.signature.metadata_signature` of ``root``,
            taken before reading (a change meanwhile makes the cache stale, never wrong).
        save: Keep columns read from the metadata beside ``sidecar`` (a writer passes
            False and calls :func:`remember_plain_columns` after its write).
        read: Read the metadata when neither memory nor the cache has the columns
            (False: ``(None, False)`` then).

    Returns:
        ``(columns, fresh)``: the plain form
        (:data:`strands_robots.dataset.light_fingerprints.COLUMNS`) or None when only the
        dataset reader can give the columns (:func:`dataset_columns` then); ``fresh`` when
        they were read from the metadata and not yet kept beside the sidecar.
    """
    key = os.path.abspath(root)
    hit = _plains.get(key)
    if hit is not None and hit[0] == signature:
        return hit[1], False
    expected = _cache_meta(Path(root), signature)
    columns = _load_json(_json_cache_path(sidecar), expected)
    fresh = False
    if columns is None:
        if not read:
            return None, False
        plain = _read_plain(root, signature)
        if plain is None:
            return None, False
        columns = {**expected, **plain}
        if save:
            _save_plain(_cache_path(sidecar), expected, plain)
        fresh = not save
    _plains[key] = (signature, columns)
    return columns, fresh


def _read_plain(root: str | Path, signature: tuple[Any, ...]) -> dict[str, Any] | None:
    """The light reader's columns of ``root``, with ``"meta"``: the digest of the metadata
    they were read from (:data:`strands_robots.fingerprint.META_KEY`), when the metadata
    did not change while they were read (``signature`` was taken before)."""
    from strands_robots.dataset.light_fingerprints import light_fingerprint_columns
    from strands_robots.dataset.signature import metadata_signature

    digest = metadata_digest_of(root, signature)
    plain = light_fingerprint_columns(root)
    if plain is not None and digest is not None and metadata_signature(root) == signature:
        plain[META_KEY] = digest
    return plain


def remember_plain_columns(
    root: str | Path, sidecar: Path, signature: tuple[Any, ...], columns: dict[str, Any]
) -> None:
    """Keep plain columns (:func:`plain_dataset_columns`) beside ``sidecar``, as
    :func:`remember_dataset_columns` keeps the dataset reader's."""
    _save_plain(_cache_path(sidecar), _cache_meta(Path(root), signature), columns)


def metadata_digest_of(root: str | Path, signature: tuple[Any, ...]) -> str | None:
    """:func:`strands_robots.dataset.signature.metadata_digest` of ``root``, computed once
    per metadata ``signature`` in a process."""
    from strands_robots.dataset.signature import metadata_digest

    key = os.path.abspath(root)
    hit = _metadata_digests.get(key)
    if hit is not None and hit[0] == signature:
        return hit[1]
    digest = metadata_digest(root)
    _metadata_digests[key] = (signature, digest)
    return digest


def tagged(root: str | Path, signature: tuple[Any, ...], digest: str | None, columns: Any) -> Any:
    """``columns`` (:class:`strands_robots.dataset.fingerprints.DatasetFingerprints`) naming
    ``digest`` as their metadata, when the metadata still has the ``signature`` taken before
    ``digest`` and the read; else ``columns`` as they are."""
    import dataclasses

    from strands_robots.dataset.signature import metadata_signature

    if digest is None or metadata_signature(root) != signature:
        return columns
    return dataclasses.replace(columns, meta=digest)


def read_from(document: dict[str, Any], digest: str | None) -> bool:
    """True when every fingerprinted record of ``document`` names ``digest`` as the metadata
    its fingerprint was read from (:data:`strands_robots.fingerprint.META_KEY`): while the
    metadata has that digest, none of them can be stale, and the metadata need not be read.
    ``meta`` vouches for the values beside it as a writer left them; an edit of a
    fingerprint drops it (``docs/sidecar-format.md``, ``fingerprint``)."""
    if digest is None:
        return False
    for record in document["episodes"].values():
        stored = record.get("fingerprint")
        if stored and (not isinstance(stored, dict) or stored.get(META_KEY) != digest):
            return False
    return True


def plain_positions(columns: dict[str, Any]) -> dict[int, int]:
    """``{episode_index: row}`` of plain columns."""
    return {episode: i for i, episode in enumerate(columns["episode"])}


def _mismatches(index: Any, current: Any) -> tuple[Any, Any, list[Any], Any]:
    """Per fingerprinted record: ``(episodes, found, [(key, mask), ...], other)`` (numpy arrays)."""
    import numpy as np

    from strands_robots.episode_labels.index import FP_CONTENT, FP_LENGTH, FP_OTHER, FP_RANGE, FP_TASKS

    rows = np.flatnonzero(index.has_fingerprint)
    episodes = index.episode[rows]
    keys = index.fp_keys[rows]
    positions, found = current.positions(episodes)
    # REASON_ORDER (length, tasks, content, index_range): the first mismatching key is the reason
    checks = [("length", (keys & FP_LENGTH).astype(bool) & (index.fp_length[rows] != current.length[positions]))]
    if current.has_range:
        dataset_code = {tasks: code for code, tasks in enumerate(current.task_lists)}
        translate = np.array([dataset_code.get(t, -2) for t in index.task_lists] + [-2], dtype=np.int32)
        stored = translate[index.fp_tasks[rows]]  # -1 (none) picks the final -2: never compared
        now = current.task_code[positions]
        checks.append(("tasks", (keys & FP_TASKS).astype(bool) & (now >= 0) & (stored != now)))
    checks.append(
        (
            "content",
            (keys & FP_CONTENT).astype(bool)
            & (current.content[positions] != b"")
            & (index.fp_content[rows] != current.content[positions]),
        )
    )
    if current.has_range:
        checks.append(
            (
                "index_range",
                (keys & FP_RANGE).astype(bool)
                & (
                    (index.fp_from[rows] != current.index_from[positions])
                    | (index.fp_to[rows] != current.index_to[positions])
                ),
            )
        )
    other = (keys & FP_OTHER).astype(bool)
    return episodes, found, checks, other


def _reason(key: str, index: Any, row: int, current: Any, position: int) -> str:
    stored: Any
    now: Any
    if key == "content":
        stored, now = bytes(index.fp_content[row]).decode(), bytes(current.content[position]).decode()
    elif key == "index_range":
        stored = [int(index.fp_from[row]), int(index.fp_to[row])]
        now = [int(current.index_from[position]), int(current.index_to[position])]
    elif key == "length":
        stored, now = int(index.fp_length[row]), int(current.length[position])
    else:
        stored = list(index.task_lists[int(index.fp_tasks[row])])
        now = list(current.task_lists[int(current.task_code[position])])
    return f"{key} was {stored!r} when labelled, now {now!r}"


def compare(index: Any, current: Any) -> tuple[dict[int, str], list[int]]:
    """``({episode: reason}, episodes to check one by one)`` of the index against the dataset."""
    import numpy as np

    episodes, found, checks, other = _mismatches(index, current)
    rows = np.flatnonzero(index.has_fingerprint)
    positions, _ = current.positions(episodes)
    stale: dict[int, str] = {}
    for i in np.flatnonzero(~found).tolist():
        stale[int(episodes[i])] = f"episode {int(episodes[i])} is no longer in the dataset"
    for key, mask in checks:
        for i in np.flatnonzero(mask & found & ~other).tolist():
            episode = int(episodes[i])
            if episode not in stale:
                stale[episode] = _reason(key, index, int(rows[i]), current, int(positions[i]))
    one_by_one = [int(e) for e in episodes[other & found].tolist()]
    return stale, one_by_one


@accepts_repo_id
def stale_episodes(root: str | Path, *, labels_dir: str | Path | None = None) -> dict[int, str]:
    """Episodes whose stored fingerprint no longer matches the dataset: ``{episode: reason}``.

    Empty when the dataset's metadata is absent (nothing to compare against), when no
    record carries a fingerprint (files other tools wrote), or when the reader cannot
    open the dataset (a warning says so). Cached per process until the sidecar or the
    dataset's metadata files change.

    Raises:
        LabelsNotFoundError: no sidecar yet.
        SidecarError: the sidecar is not one this version reads.
    """
    root = Path(root)
    if not has_dataset_metadata(root):
        return {}
    from strands_robots.dataset.signature import metadata_signature

    store = existing_store(root, labels_dir)
    if is_small(store):
        small = _small_stale(root, store, metadata_signature(root))
        if small is not None:
            return small
    from strands_robots.episode_labels.index import label_index  # numpy

    index = label_index(store)
    if not index.has_fingerprint.any():
        return {}
    signature = metadata_signature(root)
    key = (index.identity, index.journal_ino, index.journal_offset, signature)
    cached = _results.get(str(store.path))
    if cached is not None and cached[0] == key:
        return dict(cached[1])
    current = dataset_columns(root, store.path, signature, read=False)
    if current is None and index.fp_meta is not None and index.fp_meta == metadata_digest_of(root, signature):
        _results[str(store.path)] = (key, {})  # every fingerprint was read from this very metadata
        return {}
    if current is None:
        current = dataset_columns(root, store.path, signature)
    if current is None:
        return {}
    stale, one_by_one = compare(index, current)
    if one_by_one:  # fingerprints the columns do not hold: the record-by-record rule
        dataset = open_dataset_for_checks(root)
        if dataset is not None:
            fingerprinter = fingerprinter_of(dataset)

            def collect(document: dict[str, Any]) -> dict[int, str]:
                found = {}
                for episode in one_by_one:
                    record = document["episodes"].get(str(episode)) or {}
                    reason = fingerprinter.stale_reason(episode, record.get("fingerprint"))
                    if reason:
                        found[episode] = reason
                return found

            stale.update(store.query(collect))
    stale = dict(sorted(stale.items()))
    _results[str(store.path)] = (key, stale)
    return dict(stale)


def plain_record(columns: dict[str, Any], position: int) -> dict[str, Any]:
    """The fingerprint dict of row ``position`` of the JSON cache's columns (the stored form,
    as ``DatasetFingerprints.record`` gives it)."""
    fingerprint: dict[str, Any] = {"length": columns["length"][position]}
    if columns["has_range"]:
        fingerprint["index_range"] = [columns["index_from"][position], columns["index_to"][position]]
        code = columns["task_code"][position]
        if code >= 0:
            fingerprint["tasks"] = list(columns["task_lists"][code])
    if columns["content"][position]:
        fingerprint["content"] = columns["content"][position]
    if META_KEY in columns:
        fingerprint[META_KEY] = columns[META_KEY]
    return fingerprint


def plain_records(columns: dict[str, Any], positions: list[int]) -> list[dict[str, Any]]:
    """:func:`plain_record` of each of ``positions`` (the columns looked up once, not per row)."""
    lengths, contents, meta = columns["length"], columns["content"], columns.get(META_KEY)
    if not columns["has_range"]:
        out = [{"length": lengths[p]} for p in positions]
    else:
        starts, ends, codes, task_lists = (
            columns["index_from"],
            columns["index_to"],
            columns["task_code"],
            columns["task_lists"],
        )
        if meta is not None and all(codes[p] >= 0 and contents[p] for p in positions):  # the usual v3.0 case
            return [
                {
                    "length": lengths[p],
                    "index_range": [starts[p], ends[p]],
                    "tasks": list(task_lists[codes[p]]),
                    "content": contents[p],
                    META_KEY: meta,
                }
                for p in positions
            ]
        out = [
            {"length": lengths[p], "index_range": [starts[p], ends[p]], "tasks": list(task_lists[codes[p]])}
            if codes[p] >= 0
            else {"length": lengths[p], "index_range": [starts[p], ends[p]]}
            for p in positions
        ]
    for fingerprint, p in zip(out, positions, strict=True):
        if contents[p]:
            fingerprint["content"] = contents[p]
        if meta is not None:
            fingerprint[META_KEY] = meta
    return out


def record_reason(stored: Any, current: dict[str, Any]) -> str | None:
    """Why ``stored`` (a record's fingerprint) does not match ``current`` (the dataset's), or None.

    The rule of :func:`compare`, record by record: key by key in
    :data:`strands_robots.fingerprint.REASON_ORDER` (as :meth:`Fingerprinter.stale_reason`),
    the first mismatch named.
    """
    if not fingerprint_row(stored, TaskCodes())[0]:  # not a fingerprint: never stale
        return None
    for key, value in reason_order(stored):
        if key in current and current[key] != value:
            return f"{key} was {value!r} when labelled, now {current[key]!r}"
    return None


def _small_stale(root: Path, store: Any, signature: tuple[Any, ...]) -> dict[int, str] | None:
    """:func:`stale_episodes` of a small sidecar against the JSON cache, in plain Python;
    None when there is no such cache for the dataset's current metadata."""
    columns, _ = plain_dataset_columns(root, store.path, signature, read=False)
    if columns is None:
        digest = metadata_digest_of(root, signature)  # hashed before the sidecar's lock is taken
        if store.query(lambda document: read_from(document, digest)):
            return {}  # every fingerprint was read from this very metadata: nothing to read
        columns, _ = plain_dataset_columns(root, store.path, signature)
    if columns is None:
        return None
    try:
        positions = plain_positions(columns)
    except (KeyError, TypeError):
        return None

    def collect(document: dict[str, Any]) -> dict[int, str]:
        stale = {}
        for key, record in document["episodes"].items():
            stored = record.get("fingerprint")
            if not stored:
                continue
            episode = int(key)
            position = positions.get(episode)
            if position is None:
                stale[episode] = f"episode {episode} is no longer in the dataset"
                continue
            current = plain_record(columns, position)
            if stored == current:  # the common case: nothing differs, so no key can
                continue
            reason = record_reason(stored, current)
            if reason:
                stale[episode] = reason
        return stale

    return dict(sorted(store.query(collect).items()))

"""The reader of a dataset's fingerprint columns: what stored fingerprints are compared with.

For every episode (sorted by ``episode_index``): its ``length`` in frames; for v3.0 its
global ``index_range`` ``[from, to)`` and its ``tasks``; and ``content``, the digest of its
stored ``observation.state`` mean (v3.0 ``stats/observation.state/mean`` columns of
``meta/episodes/*/*.parquet``, v2.1 ``meta/episodes_stats.jsonl``; the mean differs between
episodes of equal length). Read once per opened dataset by the dataset reader (pyarrow) and
held as numpy columns; task lists are coded as small integers into ``task_lists``.
:class:`Fingerprinter` hands out one episode's fingerprint in its stored form.
"""

from __future__ import annotations

import hashlib
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from strands_robots.dataset.cache import cached_dataset_if_present
from strands_robots.dataset.keys import STATE_KEY
from strands_robots.dataset.stats import REWRITE_STATS, check_unique_columns, stats_line
from strands_robots.dataset.text import json_object_lines
from strands_robots.errors import DatasetError, LabelsError, UncheckedLabelsWarning
from strands_robots.fingerprint.rule import IDENTITY_KEYS

#: Fixed width of a content digest (16 hex characters).
CONTENT_WIDTH = 16
#: The feature whose stored mean the content digest hashes.
FEATURE = STATE_KEY


@dataclass
class DatasetFingerprints:
    """Columns of equal length, sorted by ``episode``.

    Attributes:
        episode: ``episode_index`` values (int64).
        length: Frames per episode (int64).
        has_range: Whether fingerprints carry ``index_range`` (v3.0 datasets).
        index_from: Global index of the first frame (int64; ``has_range`` only).
        index_to: One past the last frame (int64; ``has_range`` only).
        task_code: Position in ``task_lists`` of the episode's tasks, ``-1`` when it has
            none (int32; ``has_range`` datasets only, as the fingerprint records tasks for v3.0).
        task_lists: The distinct task lists.
        content: Content digest as 16 ASCII bytes, ``b""`` when the episode has no
            statistics (``S16``).
        meta: The digest of the metadata files the columns were read from
            (:func:`strands_robots.fingerprint.digest.metadata_digest`), ``""`` when not
            known; the records carry it as ``meta`` (``docs/sidecar-format.md``).
    """

    episode: np.ndarray
    length: np.ndarray
    has_range: bool
    index_from: np.ndarray
    index_to: np.ndarray
    task_code: np.ndarray
    task_lists: list[tuple[str, ...]] = field(default_factory=list)
    content: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=f"S{CONTENT_WIDTH}"))
    meta: str = ""

    def positions(self, episodes: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, found)`` of ``episodes`` (int64) in the columns."""
        episodes = np.asarray(episodes, dtype=np.int64)
        n = len(self.episode)
        if n == 0:
            return np.zeros(len(episodes), dtype=np.int64), np.zeros(len(episodes), dtype=bool)
        positions = np.searchsorted(self.episode, episodes)
        clipped = np.minimum(positions, n - 1)
        return clipped, (positions < n) & (self.episode[clipped] == episodes)

    def records(self, positions: np.ndarray | list[int]) -> list[dict[str, Any]]:
        """The fingerprint dict (the stored form) of the episode at each row of ``positions``."""
        rows = np.asarray(positions, dtype=np.int64)
        lengths = self.length[rows].tolist()
        if self.has_range:
            starts, ends = self.index_from[rows].tolist(), self.index_to[rows].tolist()
            codes = self.task_code[rows].tolist()
        contents = self.content[rows].tolist() if len(self.content) else [b""] * len(rows)
        task_lists = self.task_lists
        out = []
        for i, length in enumerate(lengths):
            fingerprint: dict[str, Any] = {"length": length}
            if self.has_range:
                fingerprint["index_range"] = [starts[i], ends[i]]
                if codes[i] >= 0:
                    fingerprint["tasks"] = list(task_lists[codes[i]])
            if contents[i]:
                fingerprint["content"] = contents[i].decode("ascii")
            if self.meta:
                fingerprint["meta"] = self.meta
            out.append(fingerprint)
        return out


def _digest(mean: Any) -> str | None:
    if mean is None:
        return None
    values = np.asarray(mean, dtype=np.float32).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)):
        return None
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


def _column_digests(table: Any, column: str, path: Path) -> tuple[np.ndarray, list[str | None]]:
    """Digests of one parquet table's list column, row by row, without a Python list per row.

    Raises:
        DatasetError: A row's mean is not an array of numbers (a struct, ragged lists).
    """
    import pyarrow as pa

    indices = table.column("episode_index").to_numpy().astype(np.int64)
    means = table.column(column).combine_chunks()
    is_list = pa.types.is_list(means.type) or pa.types.is_large_list(means.type)
    values = means.flatten() if is_list else None
    if values is None or not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
        # not a list of numbers (a struct, nested lists): row by row, a bad row refused by name
        return indices, [_checked_digest(path, f"column {column!r}", v) for v in means.to_pylist()]
    # :func:`_digest` per row over one flat array: 10x faster than the row loop above at 10,000
    # episodes and more (docs/performance.md, "What the removals cost, and what stays", the
    # statistics digests row; part of compare_upstream.py's verdicts_meta)
    offsets = means.offsets.to_numpy()
    valid = _valid(means)
    flat = values.to_numpy(zero_copy_only=False).astype(np.float32)
    if values.null_count:
        flat[~_valid(values)] = np.nan
    start = offsets[:-1] - offsets[0]
    stop = offsets[1:] - offsets[0]
    finite = np.isfinite(flat)
    # rows whose values are all finite: a prefix-sum of non-finite counts per row
    bad = np.concatenate([[0], np.cumsum(~finite)])
    good = valid & (stop > start) & (bad[stop] == bad[start])
    sha = hashlib.sha256
    digests: list[str | None] = [
        sha(flat[a:b].tobytes()).hexdigest()[:16] if ok else None
        for a, b, ok in zip(start.tolist(), stop.tolist(), good.tolist(), strict=True)
    ]
    return indices, digests


def episode_content_digests(root: str | Path, feature: str = FEATURE) -> dict[int, str]:
    """``{episode_index: digest}`` of each episode's stored ``feature`` mean.

    Reads only ``episode_index`` and the one statistics column (v3.0) or the stats lines
    (v2.1). Episodes without statistics are absent from the result.
    """
    import pyarrow.parquet as pq

    root = Path(root)
    column = f"stats/{feature}/mean"
    digests: dict[int, str] = {}
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if files:
        for path in files:
            names = pq.read_schema(path).names
            if column not in names:
                continue
            check_unique_columns(path, names, ["episode_index", column])
            table = pq.ParquetFile(path).read(columns=["episode_index", column])
            indices, row_digests = _column_digests(table, column, path)
            for index, digest in zip(indices.tolist(), row_digests, strict=True):
                if digest is not None:
                    digests[index] = digest
        return digests
    stats_file = root / "meta" / "episodes_stats.jsonl"
    if stats_file.is_file():
        for lineno, line in json_object_lines(stats_file, REWRITE_STATS):
            index, stored = stats_line(stats_file, lineno, line, feature)
            digest = _checked_digest(stats_file, f"line {lineno}", stored.get("mean"))
            if digest is not None and index is not None:
                digests[index] = digest
    return digests


def _checked_digest(path: Path, where: str, mean: Any) -> str | None:
    """:func:`_digest` of one stored mean; a mean that is not an array of numbers is refused."""
    try:
        return _digest(mean)
    except (TypeError, ValueError) as exc:  # numpy's refusals of a ragged or non-numeric mean
        remedy = REWRITE_STATS if path.suffix == ".jsonl" else "rewrite the episodes metadata's statistics"
        raise DatasetError(
            f"{path} {where}: a {FEATURE!r} mean is not a rectangular array of numbers ({exc}); {remedy}."
        ) from exc


def _valid(array: Any) -> np.ndarray:
    """Which rows of a pyarrow array are not null (bool), read from its validity bitmap
    (``Array.is_valid`` would import ``pyarrow.compute``: ~45 ms)."""
    bitmap = array.buffers()[0]
    if not array.null_count or bitmap is None:  # no nulls, or all (a null-typed array)
        return np.full(len(array), not array.null_count)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + len(array)].astype(bool)


def _task_codes(tasks: Any, n: int) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """Code a ``tasks`` column (list<string> or string, pyarrow; the reader reads the strings
    dictionary-encoded) as ints into distinct lists, column-wise.

    An episode without tasks (null, or an empty list) is ``-1``; a list holding a null is
    ``("",)``, as fingerprints have recorded it."""
    import pyarrow as pa

    if tasks is None:
        return np.full(n, -1, dtype=np.int32), []
    column = tasks.combine_chunks() if isinstance(tasks, pa.ChunkedArray) else tasks
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        offsets, values = column.offsets.to_numpy().astype(np.int64), column.values
        lengths = np.where(_valid(column), np.diff(offsets), 0)
    else:  # one string per episode
        offsets, values, lengths = np.arange(n + 1, dtype=np.int64), column, _valid(column).astype(np.int64)
    valid = _valid(values)
    if pa.types.is_dictionary(values.type):
        words, value_codes = values.dictionary.to_pylist(), values.indices.to_numpy(zero_copy_only=False)
    else:
        strings = values.to_numpy(zero_copy_only=False).astype(object)
        strings[~valid] = ""
        words, value_codes = np.unique(strings, return_inverse=True)
        words = words.tolist()
    value_codes = np.where(valid, value_codes, -1).astype(np.int64)
    # each episode's codes as one row (padded with -2), a list holding a null as [-1]
    rows = np.full((n, max(int(lengths.max(initial=0)), 1)), -2, dtype=np.int64)
    episode = np.repeat(np.arange(n), lengths)
    position = np.arange(len(episode)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows[episode, position] = value_codes[np.repeat(offsets[:-1], lengths) + position]
    rows[(rows == -1).any(axis=1)] = [-1] + [-2] * (rows.shape[1] - 1)
    if rows.shape[1] == 1:  # one task an episode, the common case: ~20x faster than np.unique over rows
        distinct, codes = np.unique(rows[:, 0], return_inverse=True)
        distinct = distinct[:, None]
    else:
        distinct, codes = np.unique(rows, axis=0, return_inverse=True)
    lists = [tuple("" if c == -1 else words[c] for c in row if c != -2) for row in distinct.tolist()]
    return np.where(lengths > 0, codes.reshape(-1), -1).astype(np.int32), lists


def dataset_fingerprints(dataset: Any) -> DatasetFingerprints:
    """The fingerprint columns of an opened dataset (reads the content statistics once).

    Args:
        dataset: A :class:`strands_robots.dataset.Dataset`.
    """
    table = dataset.episodes
    n = len(table)
    has_range = str(getattr(dataset, "codebase_version", "") or "v3").startswith("v3")
    task_code, task_lists = _task_codes(table.tasks_column if has_range else None, n)
    columns = DatasetFingerprints(
        episode=np.asarray(table.indices, dtype=np.int64),
        length=np.asarray(table.lengths, dtype=np.int64),
        has_range=has_range,
        index_from=np.asarray(table.index_from, dtype=np.int64),
        index_to=np.asarray(table.index_to, dtype=np.int64),
        task_code=task_code,
        task_lists=task_lists,
        content=np.zeros(n, dtype=f"S{CONTENT_WIDTH}"),
    )
    digests = episode_content_digests(dataset.root)
    positions, found = columns.positions(list(digests))
    columns.content[positions[found]] = np.array([d.encode("ascii") for d in digests.values()], dtype="S16")[found]
    return columns


def state_rows_digest(dataset: Any, episode: int, feature: str = FEATURE) -> str | None:
    """16 hex digits of the sha256 of one episode's ``feature`` rows (float32, frame order),
    read from the data files; None when the dataset has no such column.

    What identifies a recording when the episodes metadata holds no statistics to take the
    ``content`` digest from (:mod:`strands_robots.fingerprint.match`)."""
    if feature not in dataset.features:
        return None
    rows = dataset.read_frames(episode, [feature])[feature]
    return hashlib.sha256(np.ascontiguousarray(rows, dtype=np.float32).tobytes()).hexdigest()[:16]


def open_dataset_for_checks(root: str | Path) -> Any | None:
    """Like :func:`strands_robots.dataset.cache.cached_dataset_if_present`, but a dataset the reader refuses (an unknown
    version, broken metadata, broken episode statistics) gives None with a warning: labels
    stay readable.

    The dataset's :class:`Fingerprinter` is built here (and kept: :func:`fingerprinter_of`
    hands it out), so statistics the reader refuses are refused with the same warning."""
    try:
        dataset = cached_dataset_if_present(root)
        if dataset is not None:
            fingerprinter_of(dataset)
        return dataset
    except LabelsError as exc:
        warnings.warn(
            f"the dataset at {root} could not be opened ({exc}); labels were not checked for staleness",
            UncheckedLabelsWarning,
            stacklevel=3,
        )
        return None


class Fingerprinter:
    """Fingerprints of one opened dataset (its fingerprint columns read once)."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset
        self.columns = dataset_fingerprints(dataset)

    def __call__(self, episode: int) -> dict[str, Any]:
        """``{"length", ["index_range", "tasks"], ["content"]}`` of one episode.

        Raises:
            EpisodeNotFoundError: the dataset has no such episode.
        """
        positions, found = self.columns.positions([episode])
        if not found[0]:
            self.dataset.episodes[episode]  # raises the reader's EpisodeNotFoundError
        return self.columns.records(positions)[0]

    def present(self, episodes: list[int]) -> dict[int, dict[str, Any]]:
        """``{episode: fingerprint}`` of those of ``episodes`` the dataset has."""
        positions, found = self.columns.positions(episodes)
        kept = [e for e, ok in zip(episodes, found.tolist(), strict=True) if ok]
        return dict(zip(kept, self.columns.records(positions[found]), strict=True))

    def token(self, episode: int) -> str:
        """16 hex digits of the sha256 of the episode's ``IDENTITY_KEYS`` (what a renumbering keeps)."""
        import json

        fingerprint = self(episode)
        kept = {k: fingerprint[k] for k in IDENTITY_KEYS if k in fingerprint}
        return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


_fingerprinters: weakref.WeakKeyDictionary[Any, Fingerprinter] = weakref.WeakKeyDictionary()


def fingerprinter_of(dataset: Any) -> Fingerprinter:
    """The :class:`Fingerprinter` of an opened dataset, made once per dataset object (the
    reader's cache hands out one object while the metadata is unchanged)."""
    try:
        found = _fingerprinters.get(dataset)
    except TypeError:  # not weak-referenceable: no cache
        return Fingerprinter(dataset)
    if found is None:
        found = _fingerprinters[dataset] = Fingerprinter(dataset)
    return found


def read_columns(root: str | Path) -> DatasetFingerprints | None:
    """The dataset's fingerprint columns naming, as ``meta``, the digest of the metadata they
    were read from (when it did not change while they were read); None without ``meta/``.

    Raises:
        DatasetError: the dataset reader refuses the dataset.
    """
    import dataclasses

    from strands_robots.dataset.cache import metadata_signature
    from strands_robots.fingerprint.digest import metadata_digest

    signature = metadata_signature(root)  # before the read: a change meanwhile leaves the columns untagged
    digest = metadata_digest(root)
    dataset = cached_dataset_if_present(root)
    if dataset is None:
        return None
    columns = fingerprinter_of(dataset).columns
    if digest is None or metadata_signature(root) != signature:
        return columns
    return dataclasses.replace(columns, meta=digest)

"""Per-episode identity of a dataset as columns: what label fingerprints are compared with.

For every episode (sorted by ``episode_index``): its ``length`` in frames; for v3.0 its
global ``index_range`` ``[from, to)`` and its ``tasks``; and ``content``, the digest of its
stored ``observation.state`` mean (:mod:`.stats`). The label stores record these values at
the record level and report a record whose values no longer match as stale (see
``docs/sidecar-format.md``). Held as numpy columns so a million episodes are compared in
milliseconds; task lists are coded as small integers into ``task_lists``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Fixed width of a content digest (16 hex characters, see :mod:`.stats`).
CONTENT_WIDTH = 16


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
            (:func:`strands_robots.dataset.signature.metadata_digest`), ``""`` when not
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

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> DatasetFingerprints:
        """The columns of the plain form (lists; the JSON fingerprint cache's, see
        :data:`strands_robots.dataset.light_fingerprints.COLUMNS`).

        Raises:
            KeyError, TypeError, ValueError: ``plain`` is not of that form.
        """
        return cls(
            episode=np.asarray(plain["episode"], dtype=np.int64),
            length=np.asarray(plain["length"], dtype=np.int64),
            index_from=np.asarray(plain["index_from"], dtype=np.int64),
            index_to=np.asarray(plain["index_to"], dtype=np.int64),
            task_code=np.asarray(plain["task_code"], dtype=np.int32),
            content=np.asarray([c.encode("ascii") for c in plain["content"]], dtype=f"S{CONTENT_WIDTH}"),
            has_range=bool(plain["has_range"]),
            task_lists=[tuple(t) for t in plain["task_lists"]],
            meta=str(plain.get("meta") or ""),
        )

    def to_plain(self) -> dict[str, Any]:
        """The plain form of :meth:`from_plain` (lists of Python values; ``meta`` only when known)."""
        plain = {
            "episode": self.episode.tolist(),
            "length": self.length.tolist(),
            "index_from": self.index_from.tolist(),
            "index_to": self.index_to.tolist(),
            "task_code": self.task_code.tolist(),
            "content": [bytes(c).decode("ascii") for c in self.content.tolist()],
            "has_range": self.has_range,
            "task_lists": [list(t) for t in self.task_lists],
        }
        if self.meta:
            plain["meta"] = self.meta
        return plain

    def positions(self, episodes: np.ndarray | list[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, found)`` of ``episodes`` (int64) in the columns."""
        episodes = np.asarray(episodes, dtype=np.int64)
        n = len(self.episode)
        if n == 0:
            return np.zeros(len(episodes), dtype=np.int64), np.zeros(len(episodes), dtype=bool)
        positions = np.searchsorted(self.episode, episodes)
        clipped = np.minimum(positions, n - 1)
        return clipped, (positions < n) & (self.episode[clipped] == episodes)

    def record(self, position: int) -> dict[str, Any]:
        """The fingerprint dict of the episode at row ``position`` (the stored form)."""
        fingerprint: dict[str, Any] = {"length": int(self.length[position])}
        if self.has_range:
            fingerprint["index_range"] = [int(self.index_from[position]), int(self.index_to[position])]
            code = int(self.task_code[position])
            if code >= 0:
                fingerprint["tasks"] = list(self.task_lists[code])
        content = bytes(self.content[position]) if len(self.content) else b""
        if content:
            fingerprint["content"] = content.decode("ascii")
        if self.meta:
            fingerprint["meta"] = self.meta
        return fingerprint

    def records(self, positions: np.ndarray | list[int]) -> list[dict[str, Any]]:
        """:meth:`record` of each of ``positions`` (the columns read once, not per row)."""
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


def _task_codes(tasks: Any, n: int) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """Code a ``tasks`` column (list<string> or string, pyarrow) as ints into distinct lists."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if tasks is None:
        return np.full(n, -1, dtype=np.int32), []
    column = tasks.combine_chunks() if isinstance(tasks, pa.ChunkedArray) else tasks
    is_list = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
    if is_list:  # an episode's tasks as one string (NUL cannot occur in a task)
        empty = pc.fill_null(pc.equal(pc.list_value_length(column), 0), True)
        joined = pc.binary_join(pc.cast(column, pa.list_(pa.string())), "\x00")
    else:
        joined = pc.cast(column, pa.string())
        empty = pc.is_null(joined)
    encoded = pc.dictionary_encode(pc.fill_null(joined, ""))
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    distinct = encoded.dictionary.to_pylist()
    lists = [tuple(s.split("\x00")) if is_list else (s,) for s in distinct]
    codes[empty.to_numpy(zero_copy_only=False)] = -1
    return codes, lists


def dataset_fingerprints(dataset: Any) -> DatasetFingerprints:
    """The fingerprint columns of an opened dataset (reads the content statistics once).

    Args:
        dataset: A :class:`strands_robots.dataset.Dataset`.
    """
    from strands_robots.dataset.stats import episode_content_digest_columns

    table = dataset.episodes
    n = len(table)
    has_range = str(getattr(dataset, "codebase_version", "") or "v3").startswith("v3")
    if has_range:
        task_code, task_lists = _task_codes(table.tasks_column, n)
    else:
        task_code, task_lists = np.full(n, -1, dtype=np.int32), []
    content = np.zeros(n, dtype=f"S{CONTENT_WIDTH}")
    indices, digests = episode_content_digest_columns(dataset.root)
    if len(indices):
        positions = np.searchsorted(table.indices, indices)
        clipped = np.minimum(positions, max(n - 1, 0))
        found = (positions < n) & (table.indices[clipped] == indices) if n else np.zeros(len(indices), bool)
        content[clipped[found]] = digests[found]
    return DatasetFingerprints(
        episode=np.asarray(table.indices, dtype=np.int64),
        length=np.asarray(table.lengths, dtype=np.int64),
        has_range=has_range,
        index_from=np.asarray(table.index_from, dtype=np.int64),
        index_to=np.asarray(table.index_to, dtype=np.int64),
        task_code=task_code,
        task_lists=task_lists,
        content=content,
    )

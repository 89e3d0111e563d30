"""Episodes metadata (v3.0: every ``meta/episodes/*/*.parquet``; v2.x: ``meta/episodes.jsonl``), held
column-wise, sorted and keyed by the real ``episode_index``; an :class:`Episode` is built only when asked
for (docs/dataset.md, "What open_dataset(root) reads"; ``benchmarks/open_million.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.dataset.info import DatasetInfo
from strands_robots.dataset.problems import abridge
from strands_robots.dataset.stats import check_unique_columns
from strands_robots.dataset.text import json_object_lines
from strands_robots.errors import DatasetError, EpisodeNotFoundError

#: The largest value an int64 holds: uint64 values above it would wrap to negative indices.
INT64_MAX = 2**63 - 1
#: Per-camera columns of the v3.0 episodes parquet: ``videos/<key>/<field>``.
VIDEO_FIELDS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")


@dataclass(frozen=True, slots=True)
class VideoRef:
    """Where one episode's frames of one camera live.

    Attributes:
        path: The mp4 file (absolute).
        from_timestamp: Seconds into the mp4 where the episode starts (0.0 for v2.x, where
            each episode has its own mp4).
        to_timestamp: Seconds into the mp4 where the episode ends (exclusive).
    """

    path: Path
    from_timestamp: float
    to_timestamp: float


@dataclass(frozen=True, slots=True)
class Episode:
    """One episode's metadata.

    Attributes:
        episode_index: The real episode index (never a list position).
        length: Number of frames (> 0).
        tasks: Task strings of the episode.
        data_file: The parquet file holding its rows (absolute).
        index_range: Global frame ``index`` range, half-open ``[from, to)``.
        videos: Camera key -> :class:`VideoRef` for every ``video`` feature.
        data_located: False when the v3.0 episodes metadata has no ``data/chunk_index`` /
            ``data/file_index`` columns (only ``episode_index`` and ``length``): the rows
            may then sit in any data file, and the reader looks in every one of them
            (:func:`data_shards`; ``data_file`` is only the
            first-file guess).
    """

    episode_index: int
    length: int
    tasks: tuple[str, ...]
    data_file: Path
    index_range: tuple[int, int]
    videos: Mapping[str, VideoRef]
    data_located: bool = True


@dataclass(frozen=True)
class VideoColumns:
    """One camera's columns of the episodes table (aligned with ``EpisodeTable.indices``).

    ``valid`` is False for rows whose video columns are null.
    """

    chunk: np.ndarray
    file: np.ndarray
    from_ts: np.ndarray
    to_ts: np.ndarray
    valid: np.ndarray


def data_shards(root: Path) -> list[Path]:
    """Every data parquet under ``root/data``, in path order: the files an episode whose
    metadata names no data file (``Episode.data_located`` False) may sit in."""
    return sorted((Path(root) / "data").glob("**/*.parquet"))


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.flags.writeable = False
    return array


class EpisodeTable(Mapping[int, Episode]):
    """Read-only mapping ``episode_index`` -> :class:`Episode`, stored column-wise.

    Iteration yields the ``episode_index`` values in increasing order. Column arrays
    (``indices``, ``lengths``, ``index_from``, ``index_to``) are exposed read-only for
    vectorised use.
    """

    def __init__(
        self,
        *,
        root: Path,
        info: DatasetInfo,
        indices: np.ndarray,
        lengths: np.ndarray,
        tasks: pa.ChunkedArray | None,
        data_chunk: np.ndarray,
        data_file: np.ndarray,
        index_from: np.ndarray,
        index_to: np.ndarray,
        videos: dict[str, VideoColumns],
        data_located: bool = True,
    ) -> None:
        self._root = root
        #: False when the metadata does not say which data file holds each episode (see :class:`Episode`).
        self.data_located = data_located
        self._info = info
        self.indices = _readonly(indices.astype(np.int64, copy=False))
        self.lengths = _readonly(lengths.astype(np.int64, copy=False))
        #: The ``tasks`` column (one row per episode, in ``indices`` order), if the metadata has one.
        self.tasks_column = tasks
        self.data_chunk = _readonly(data_chunk.astype(np.int64, copy=False))
        self.data_file_index = _readonly(data_file.astype(np.int64, copy=False))
        self.index_from = _readonly(index_from.astype(np.int64, copy=False))
        self.index_to = _readonly(index_to.astype(np.int64, copy=False))
        self.video_columns = MappingProxyType(videos)

    # -- Mapping protocol -------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices.tolist())

    def __contains__(self, key: object) -> bool:
        return self._position(key) is not None

    def __getitem__(self, key: int) -> Episode:
        return self._episode_at(self.position(key))

    def __repr__(self) -> str:
        return f"<EpisodeTable {len(self)} episodes>"

    # -- lookups ------------------------------------------------------------------------
    def position(self, episode_index: int) -> int:
        """Row of ``episode_index`` in the column arrays.

        Raises:
            EpisodeNotFoundError: The dataset has no such episode.
        """
        pos = self._position(episode_index)
        if pos is None:
            raise EpisodeNotFoundError(self._not_found(episode_index))
        return pos

    def _position(self, key: object) -> int | None:
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            return None
        n = self.indices.shape[0]
        pos = int(np.searchsorted(self.indices, key))
        if pos < n and self.indices[pos] == key:
            return pos
        return None

    def _not_found(self, key: object) -> str:
        if len(self) == 0:
            return f"episode {key!r} not found: the dataset at {self._root} has no episodes"
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            return f"episode {key!r} is not an integer episode_index"
        return (
            f"episode {key} not found in {self._root}: it has {len(self)} episodes with episode_index "
            f"{self.span}. Use a real episode_index, not a list position."
        )

    @property
    def span(self) -> str:
        """``first..last`` of the ``episode_index`` values (`` (not contiguous)`` after it when
        there are gaps), or ``none`` for no episodes."""
        if len(self) == 0:
            return "none"
        return f"{int(self.indices[0])}..{int(self.indices[-1])}" + ("" if self.contiguous else " (not contiguous)")

    @property
    def contiguous(self) -> bool:
        """True when the indices are exactly ``0 .. len-1`` (not required, never assumed)."""
        n = len(self)
        return n == 0 or (int(self.indices[0]) == 0 and int(self.indices[-1]) == n - 1)

    # -- paths --------------------------------------------------------------------------
    def data_path_at(self, pos: int) -> Path:
        """Data parquet of row ``pos``."""
        info = self._info
        if info.major == 3:
            rel = info.data_path.format(
                chunk_index=int(self.data_chunk[pos]), file_index=int(self.data_file_index[pos])
            )
        else:
            ep = int(self.indices[pos])
            rel = info.data_path.format(episode_chunk=ep // (info.chunks_size or 1000), episode_index=ep)
        return self._root / rel

    def video_path_at(self, key: str, pos: int) -> Path | None:
        """mp4 of camera ``key`` for row ``pos`` (None when the metadata has no reference)."""
        info = self._info
        if info.major == 3:
            cols = self.video_columns.get(key)
            if cols is None or not cols.valid[pos]:
                return None
            rel = info.video_path.format(
                video_key=key, chunk_index=int(cols.chunk[pos]), file_index=int(cols.file[pos])
            )
        else:
            ep = int(self.indices[pos])
            rel = info.video_path.format(
                episode_chunk=ep // (info.chunks_size or 1000), video_key=key, episode_index=ep
            )
        return self._root / rel

    def _episode_at(self, pos: int) -> Episode:
        length = int(self.lengths[pos])
        videos: dict[str, VideoRef] = {}
        for key in self._info.video_keys:
            path = self.video_path_at(key, pos)
            if path is None:
                continue
            if self._info.major == 3:
                cols = self.video_columns[key]
                start, end = float(cols.from_ts[pos]), float(cols.to_ts[pos])
            else:
                start, end = 0.0, length / float(self._info.fps)
            videos[key] = VideoRef(path=path, from_timestamp=start, to_timestamp=end)
        tasks: tuple[str, ...] = ()
        if self.tasks_column is not None:
            value = self.tasks_column[pos].as_py()
            if isinstance(value, str):
                tasks = (value,)
            elif value:
                tasks = tuple(str(t) for t in value)
        return Episode(
            episode_index=int(self.indices[pos]),
            length=length,
            tasks=tasks,
            data_file=self.data_path_at(pos),
            index_range=(int(self.index_from[pos]), int(self.index_to[pos])),
            videos=MappingProxyType(videos),
            data_located=self.data_located,
        )


# -- loading -------------------------------------------------------------------------------


def _int_column(table: pa.Table, name: str, source: str, *, required: bool = False, nulls: bool = False) -> Any:
    """``name`` as an int64 numpy array (None when absent and not ``required``); with ``nulls``
    (a camera's ``chunk_index``/``file_index``) the pyarrow column, its nulls kept.

    Raises:
        DatasetError: absent and required; not integer; null values (unless ``nulls``); beyond int64.
    """
    if name not in table.column_names:
        if required:
            raise DatasetError(
                f"{source}: the episodes metadata has no {name!r} column (found {table.column_names[:12]}). "
                "Every episode needs episode_index and length."
            )
        return None
    column = table.column(name)
    if not pa.types.is_integer(column.type):
        raise DatasetError(
            f"{source}: column {name!r} is {column.type}, not integer; rewrite the episodes metadata "
            "with integer values."
        )
    if column.null_count and not nulls:
        raise DatasetError(f"{source}: column {name!r} has {column.null_count} null values; fill them.")
    largest = _max(column) if pa.types.is_uint64(column.type) and len(column) else None
    if largest is not None and largest > INT64_MAX:  # it would wrap to a negative index
        raise DatasetError(
            f"{source}: column {name!r} holds {largest}, beyond the int64 range (at most {INT64_MAX}); "
            "rewrite the episodes metadata with values that fit a signed 64-bit integer."
        )
    if nulls:
        return column
    # int64 now, not in EpisodeTable: uint64 minus int64 is float64 in numpy, which rounds the
    # index ranges computed from large lengths
    return column.to_numpy().astype(np.int64, copy=False)


def _check_tasks_type(column: pa.ChunkedArray, source: str) -> None:
    """Refuse a ``tasks`` column that is neither strings nor a variable-size list of strings."""
    kind = column.type
    text = (pa.types.is_string, pa.types.is_large_string, pa.types.is_null, pa.types.is_dictionary)
    if any(test(kind) for test in text):
        return
    if (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and any(test(kind.value_type) for test in text):
        return
    raise DatasetError(
        f"{source}: column 'tasks' is {kind}; rewrite the episodes metadata with tasks as a list of strings "
        "(list<string>, as LeRobot writes it)."
    )


def _float_column(table: pa.Table, name: str, source: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values as float64 with nulls as 0.0, valid mask)`` or None when the column is absent."""
    if name not in table.column_names:
        return None
    column = table.column(name)
    if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
        raise DatasetError(
            f"{source}: column {name!r} is {column.type}, not a number; rewrite the episodes metadata with "
            "timestamps in seconds."
        )
    return _filled(column if column.type == pa.float64() else column.cast(pa.float64()), 0.0)


def _filled(column: pa.ChunkedArray, fill: float) -> tuple[np.ndarray, np.ndarray]:
    """``(values with nulls as fill, valid mask)`` of a numeric column."""
    if not column.null_count:
        return column.to_numpy(), np.ones(len(column), dtype=bool)
    return column.fill_null(fill).to_numpy(), column.is_valid().to_numpy(zero_copy_only=False)


def _max(column: pa.ChunkedArray) -> Any:
    import pyarrow.compute as pc  # ~50 ms to import: only for a uint64 column (its range is checked)

    return pc.max(column).as_py()


def _check_indices(indices: np.ndarray, lengths: np.ndarray, source: str) -> np.ndarray | None:
    """Validate and return the sort order (None when already sorted)."""
    bad = lengths <= 0
    if bool(bad.any()):
        raise DatasetError(
            f"{source}: episodes {abridge(np.sort(indices[bad]).tolist())} have zero or negative length; an "
            "episode has at least one frame. Delete those episodes or repair their length."
        )
    if indices.size and int(indices.min()) < 0:
        raise DatasetError(f"{source}: negative episode_index {int(indices.min())}; indices are >= 0.")
    if indices.size < 2 or bool(np.all(indices[1:] > indices[:-1])):
        return None
    order = np.argsort(indices, kind="stable")
    ordered = indices[order]
    dup = ordered[1:][ordered[1:] == ordered[:-1]]
    if dup.size:
        raise DatasetError(
            f"{source}: episode_index values repeat ({abridge(np.unique(dup).tolist())}); each episode "
            "needs one metadata row. Repair the episodes metadata."
        )
    return order


def _cumulative(lengths: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum(lengths, dtype=np.int64)
    # lengths are > 0, so the running sum only fails to increase where it wrapped past int64
    if ends.size and (int(ends[0]) <= 0 or not bool(np.all(ends[1:] > ends[:-1]))):
        raise DatasetError(
            f"{source}: the episode lengths add up to more than {INT64_MAX} frames, beyond the int64 range of "
            "the global frame index; repair the length values in the episodes metadata."
        )
    return ends - lengths, ends


def _read_columns(path: Path, columns: list[str], dictionary: list[str] | None) -> pa.Table:
    """``columns`` of one parquet file. ``ParquetFile`` does not load ``pyarrow.dataset`` (~50 ms
    of imports); ``read_table`` (which does) handles the nested reads it does not implement."""
    try:
        return pq.ParquetFile(path, read_dictionary=dictionary).read(columns=columns)
    except pa.ArrowNotImplementedError:
        return pq.read_table(path, columns=columns, read_dictionary=dictionary)


def load_episodes_v3(root: Path, info: DatasetInfo) -> EpisodeTable:
    """Read every ``meta/episodes/*/*.parquet`` (only the columns the reader uses).

    Raises:
        DatasetError: No episodes file; ``episode_index`` / ``length`` missing, null, not
            integer, repeated or negative; a zero or negative ``length``.
    """
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if not files:
        raise DatasetError(
            f"{root}: no meta/episodes/*/*.parquet found; a v3.0 dataset needs its episodes metadata "
            "(e.g. meta/episodes/chunk-000/file-000.parquet with episode_index and length)."
        )
    wanted = ["episode_index", "length", "tasks", "data/chunk_index", "data/file_index"]
    wanted += ["dataset_from_index", "dataset_to_index"]
    for key in info.video_keys:
        wanted += [f"videos/{key}/{field}" for field in VIDEO_FIELDS]
    tables = []
    for path in files:
        try:
            schema = pq.read_schema(path)
            check_unique_columns(path, schema.names, wanted)
            names = set(schema.names)
            columns = [c for c in wanted if c in names]
            # task strings repeat across episodes: reading them dictionary-encoded is ~3x faster
            listed = "tasks" in names and pa.types.is_list(schema.field("tasks").type)
            dictionary = ["tasks.list.element"] if listed else None
            tables.append(_read_columns(path, columns, dictionary))
        except (pa.ArrowException, OSError) as exc:
            raise DatasetError(f"{path} cannot be read as parquet ({exc}); restore it.") from exc
    try:
        table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    except pa.ArrowException as exc:
        raise DatasetError(f"{root}/meta/episodes: the files disagree on column types ({exc}).") from exc
    source = f"{root}/meta/episodes"
    return _build_table(root, info, table, source)


def _build_table(root: Path, info: DatasetInfo, table: pa.Table, source: str) -> EpisodeTable:
    indices = _int_column(table, "episode_index", source, required=True)
    lengths = _int_column(table, "length", source, required=True)
    assert indices is not None and lengths is not None
    order = _check_indices(indices, lengths, source)
    if order is not None:
        table = table.take(pa.array(order))
        indices, lengths = indices[order], lengths[order]
    n = indices.shape[0]
    zeros = np.zeros(n, dtype=np.int64)
    data_chunk = _int_column(table, "data/chunk_index", source, required=False)
    data_file = _int_column(table, "data/file_index", source, required=False)
    index_from = _int_column(table, "dataset_from_index", source, required=False)
    index_to = _int_column(table, "dataset_to_index", source, required=False)
    if index_from is None or index_to is None:
        index_from, index_to = _cumulative(lengths, source)
    videos: dict[str, VideoColumns] = {}
    for key in info.video_keys if info.major == 3 else ():
        chunk = _int_column(table, f"videos/{key}/chunk_index", source, nulls=True)
        file_ = _int_column(table, f"videos/{key}/file_index", source, nulls=True)
        start = _float_column(table, f"videos/{key}/from_timestamp", source)
        if chunk is None or file_ is None or start is None:
            continue  # listed as a problem (video_columns_missing)
        end = _float_column(table, f"videos/{key}/to_timestamp", source)
        (chunks, chunk_valid), (files, file_valid) = _filled(chunk, 0), _filled(file_, 0)
        videos[key] = VideoColumns(
            chunk=chunks.astype(np.int64, copy=False),
            file=files.astype(np.int64, copy=False),
            from_ts=start[0],
            to_ts=end[0] if end is not None else start[0] + lengths / float(info.fps),
            valid=start[1] & chunk_valid & file_valid,
        )
    tasks = None
    if "tasks" in table.column_names:
        tasks = table.column("tasks")
        _check_tasks_type(tasks, source)
    return EpisodeTable(
        root=root,
        info=info,
        indices=indices,
        lengths=lengths,
        tasks=tasks,
        data_chunk=zeros if data_chunk is None else data_chunk,
        data_file=zeros if data_file is None else data_file,
        index_from=index_from,
        index_to=index_to,
        videos=videos,
        data_located=info.major != 3 or (data_chunk is not None and data_file is not None),
    )


def _read_jsonl(path: Path) -> pa.Table:
    """The objects of a JSON Lines file as a table: decoded by msgspec (a UTF-8 BOM and blank lines
    allowed); when that fails or a line is not an object, the line reader names the line."""
    try:
        rows = msgspec.json.Decoder().decode_lines(path.read_bytes().removeprefix(b"\xef\xbb\xbf"))
    except msgspec.DecodeError:
        rows = None
    if rows is None or not all(type(row) is dict for row in rows):
        rows = [record for _, record in json_object_lines(path, "repair or remove that line")]
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise DatasetError(f"{path}: inconsistent value types across lines ({exc}).") from exc
    except UnicodeEncodeError as exc:
        raise DatasetError(
            f"{path}: a string holds a \\u escape of a lone surrogate, which is not UTF-8 text ({exc}); "
            "rewrite that text as valid UTF-8."
        ) from exc


def load_episodes_v2(root: Path, info: DatasetInfo) -> EpisodeTable:
    """Read ``meta/episodes.jsonl`` (``{"episode_index", "tasks", "length"}`` per line).

    The global ``index_range`` is the cumulative sum of lengths in ``episode_index`` order
    (what LeRobot v2.1 computes), so opening never reads the per-episode parquet files.

    Raises:
        DatasetError: Missing file or a bad line, and the checks of :func:`load_episodes_v3`.
    """
    path = root / "meta" / "episodes.jsonl"
    if not path.is_file():
        raise DatasetError(f"{root}: no meta/episodes.jsonl; a {info.codebase_version} dataset needs it.")
    table = _read_jsonl(path)
    return _build_table(root, info, table, str(path))

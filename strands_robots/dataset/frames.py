"""``read_frames``: one episode's rows as numpy arrays, read from the one data file that holds it
(or every data file when the metadata names none) with the ``episode_index`` filter pushed down to
pyarrow (docs/dataset.md, "Reading frames").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.dataset.episodes import Episode, data_shards
from strands_robots.dataset.errors import MissingFileError
from strands_robots.dataset.hub import fetch_missing
from strands_robots.errors import DatasetError

if TYPE_CHECKING:
    from strands_robots.dataset.layout import Layout


class Frames(dict[str, np.ndarray]):
    """``column -> array`` (first axis = frames, sorted by ``frame_index``) plus NaN counts.

    Attributes:
        episode_index: The episode the rows belong to.
        nan_counts: Column -> number of NaN values in it (floating columns only; 0 when clean).
    """

    episode_index: int
    nan_counts: dict[str, int]

    @property
    def nan_total(self) -> int:
        """Total NaN values over every returned column."""
        return sum(self.nan_counts.values())


def column_to_numpy(column: pa.ChunkedArray | pa.Array, name: str = "") -> np.ndarray:
    """Convert one parquet column to numpy, first axis = rows.

    Numeric scalars give a 1-D array; fixed-size numeric lists (``observation.state``)
    give ``(rows, n)``; variable numeric lists of one common length also give ``(rows, n)``.
    Null floats become NaN (a null list becomes a row of NaN). Other columns (strings,
    image structs, lists of strings, ragged lists) give a 1-D object array of Python
    values, one per row.
    """
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind) or pa.types.is_large_list(kind):
        if _numeric(kind.value_type):
            return _list_to_2d(array, name)
    elif _numeric(kind):
        if array.null_count and not pa.types.is_floating(kind):
            array = array.cast(pa.float64())
        return array.to_numpy(zero_copy_only=False)
    values = np.empty(len(array), dtype=object)  # one Python value per row, even lists of one length
    values[:] = array.to_pylist()
    return values


def _numeric(kind: pa.DataType) -> bool:
    return pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_boolean(kind)


def _list_to_2d(array: pa.Array, name: str) -> np.ndarray:
    rows = len(array)
    if pa.types.is_fixed_size_list(array.type):
        width = array.type.list_size
    else:
        widths = np.unique(array.value_lengths().drop_null().to_numpy(zero_copy_only=False))
        if widths.size > 1:  # ragged: keep Python lists
            values = np.empty(rows, dtype=object)
            values[:] = array.to_pylist()
            return values
        width = int(widths[0]) if widths.size else 0
    if array.null_count:  # null lists: NaN rows so positions stay aligned with frames
        nan_row = pa.scalar([float("nan")] * width, type=pa.list_(pa.float64()))
        array = array.cast(pa.list_(pa.float64())).fill_null(nan_row)
    values = array.flatten().to_numpy(zero_copy_only=False)
    if values.size != rows * width:
        raise DatasetError(f"column {name!r}: cannot reshape {values.size} values into {rows} x {width}.")
    return values.reshape(rows, width)


def resolve_episode(ds: Layout, episode: int | Episode) -> Episode:
    """Accept an ``episode_index`` or an :class:`Episode` of ``ds``."""
    if isinstance(episode, Episode):
        return episode
    return ds.episodes[episode]


def read_frames(ds: Layout, episode: int | Episode, columns: list[str] | None = None) -> Frames:
    """Read one episode's rows.

    Args:
        ds: An open dataset.
        episode: Its ``episode_index`` (or the :class:`Episode`).
        columns: Column names to return; None returns every column of the data file except
            camera (``image`` / ``video``) features. ``frame_index`` is always read to sort.

    Returns:
        :class:`Frames` (a ``dict[str, numpy.ndarray]``), rows sorted by ``frame_index``:
        scalars as ``(length,)``, vectors as ``(length, n)``, with ``nan_counts``.

    Raises:
        EpisodeNotFoundError: No such episode.
        MissingFileError: The data parquet is missing (a ``FileNotFoundError``).
        DatasetError: An unknown column, or rows loaded != the episode's ``length``.
    """
    ep = resolve_episode(ds, episode)
    layouts = _layouts(ds, ep)
    path = ep.data_file if ep.data_located else ds.root / "data"
    available = list(dict.fromkeys(name for _p, layout in layouts for name in layout.names))
    where = str(path) if ep.data_located else f"the data files under {path}"
    wanted = _wanted(columns, available, set(ds.camera_keys), ep, where)
    helper: list[str] = [c for c in ("episode_index", "frame_index") if c in available and c not in wanted]
    if not ep.data_located:
        table = _read_shard_rows(ds, ep, layouts, wanted + helper)
    else:
        try:
            table = _read_episode_rows(path, layouts[0][1], ep.episode_index, wanted + helper)
        except (pa.ArrowException, OSError) as exc:
            raise DatasetError(f"{path} (episode {ep.episode_index}) cannot be read ({exc}).") from exc
    if table.num_rows != ep.length:
        raise DatasetError(
            f"episode {ep.episode_index}: {table.num_rows} rows in {path} but the episodes metadata says "
            f"length {ep.length}; the dataset is inconsistent (repair the data or the metadata)."
        )
    if "frame_index" in table.column_names:
        order = np.argsort(table.column("frame_index").to_numpy(), kind="stable")
        if not np.array_equal(order, np.arange(order.shape[0])):
            table = table.take(pa.array(order))
    frames = Frames({name: column_to_numpy(table.column(name), name) for name in wanted})
    frames.episode_index = ep.episode_index
    frames.nan_counts = {
        key: int(np.isnan(values).sum()) if np.issubdtype(values.dtype, np.floating) else 0
        for key, values in frames.items()
    }
    return frames


@dataclass(frozen=True)
class _Layout:
    """What the footer of one data file says: column names and per-row-group episode ranges."""

    metadata: pq.FileMetaData
    names: list[str]
    group_min: np.ndarray | None  # episode_index min per row group (None: no statistics)
    group_max: np.ndarray | None


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=64)
def _file_layout(path: str, mtime_ns: int, size: int) -> _Layout:
    """Parse a data file's footer once per (path, mtime, size)."""
    metadata = pq.read_metadata(path)
    names = metadata.schema.to_arrow_schema().names
    group_min = group_max = None
    if "episode_index" in names and metadata.num_row_groups:
        column = names.index("episode_index")
        lows: list[int] = []
        highs: list[int] = []
        for g in range(metadata.num_row_groups):
            stats = metadata.row_group(g).column(column).statistics
            if stats is None or not stats.has_min_max:
                lows = highs = []
                break
            lows.append(stats.min)
            highs.append(stats.max)
        if lows:
            group_min, group_max = np.asarray(lows), np.asarray(highs)
    return _Layout(metadata, names, group_min, group_max)


def _read_episode_rows(path: Path, layout: _Layout, episode: int, columns: list[str]) -> pa.Table:
    """Rows of ``episode``: only the row groups whose statistics admit it, then a row filter."""
    handle = pq.ParquetFile(path, metadata=layout.metadata)
    if layout.group_min is not None and layout.group_max is not None:
        groups = np.flatnonzero((layout.group_min <= episode) & (layout.group_max >= episode)).tolist()
        table = handle.read_row_groups(groups, columns=columns) if groups else handle.schema_arrow.empty_table()
        table = table.select(columns)
    else:
        table = handle.read(columns=columns)
    if "episode_index" in table.column_names:
        import pyarrow.compute as pc  # ~50 ms to import: paid by a frame read, not by importing the reader

        values = table.column("episode_index")
        if len(values) and not (pc.min(values).as_py() == episode == pc.max(values).as_py()):
            table = table.filter(pc.equal(values, episode))
    return table


def _wanted(columns: list[str] | None, available: list[str], skip: set[str], ep: Episode, where: str) -> list[str]:
    """The columns :func:`read_frames` returns (every non-camera column when ``columns`` is None)."""
    if columns is None:
        return [c for c in available if c not in skip]
    wanted = list(dict.fromkeys(columns))
    unknown = [c for c in wanted if c not in available]
    if unknown:
        raise DatasetError(f"{where} has no column(s) {unknown} (episode {ep.episode_index}); available: {available}.")
    return wanted


def _layouts(ds: Layout, ep: Episode) -> list[tuple[Path, _Layout]]:
    """The footers of the data files ``ep``'s rows may sit in: the one the metadata names, or
    every shard when it names none (:func:`_shard_layouts`).

    Raises:
        MissingFileError: the named file is missing (and cannot be fetched from the Hub).
        DatasetError: it is not readable parquet.
    """
    if not ep.data_located:
        return _shard_layouts(ds, ep)
    path = ep.data_file
    if not path.is_file() and not fetch_missing(ds.root, path):
        raise MissingFileError(
            f"data file {path} of episode {ep.episode_index} is missing; restore the dataset's data/ "
            "directory (the episodes metadata points there)."
        )
    try:
        return [(path, _file_layout(str(path), *_stamp(path)))]
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"{path} (episode {ep.episode_index}) cannot be read as parquet ({exc}).") from exc


def _shard_error(ds: Layout, ep: Episode, damaged: list[tuple[Path, str]], total: int) -> DatasetError:
    names = "; ".join(f"{path.relative_to(ds.root)} ({reason})" for path, reason in damaged)
    return DatasetError(
        f"episode {ep.episode_index}: {len(damaged)} of {total} data shard(s) cannot be read: {names}. The episodes "
        "metadata does not say which data file holds the episode, so every one is read; a shard left out would "
        "leave a hole in the frame series that reads as a discontinuity. Restore the damaged file(s) (re-download "
        "the dataset)."
    )


def _shard_layouts(ds: Layout, ep: Episode) -> list[tuple[Path, _Layout]]:
    """The data files (with an ``episode_index`` column) an unlocated episode may sit in.

    A parquet without an ``episode_index`` column holds no frames and is passed over.

    Raises:
        DatasetError: no data parquet at all, or some cannot be read (every one named).
    """
    shards = data_shards(ds.root)
    if not shards:
        raise MissingFileError(
            f"No data parquet under {ds.root / 'data'}: episode {ep.episode_index} has no rows to read; restore the "
            "dataset's data/ directory."
        )
    damaged: list[tuple[Path, str]] = []
    layouts: list[tuple[Path, _Layout]] = []
    for path in shards:
        try:
            layout = _file_layout(str(path), *_stamp(path))
        except (pa.ArrowException, OSError) as exc:
            damaged.append((path, str(exc) or type(exc).__name__))
            continue
        if "episode_index" in layout.names:
            layouts.append((path, layout))
    if damaged:
        raise _shard_error(ds, ep, damaged, len(shards))
    return layouts


def _read_shard_rows(ds: Layout, ep: Episode, layouts: list[tuple[Path, _Layout]], columns: list[str]) -> pa.Table:
    """The rows of ``ep`` in every shard, in shard order (a shard that fails to read refuses the episode)."""
    parts: list[pa.Table] = []
    damaged: list[tuple[Path, str]] = []
    for path, layout in layouts:
        present = [c for c in columns if c in layout.names]
        try:
            part = _read_episode_rows(path, layout, ep.episode_index, present)
        except (pa.ArrowException, OSError) as exc:
            damaged.append((path, str(exc) or type(exc).__name__))
            continue
        if part.num_rows:
            parts.append(part)
    if damaged:
        raise _shard_error(ds, ep, damaged, len(data_shards(ds.root)))
    if not parts:
        return pa.table({c: pa.array([], type=pa.float64()) for c in columns})
    try:
        return pa.concat_tables(parts, promote_options="permissive")
    except pa.ArrowException as exc:
        raise DatasetError(
            f"episode {ep.episode_index}: its rows in the data files disagree on column types ({exc})."
        ) from exc


def data_columns(ds: Layout, episode: int | Episode) -> list[str]:
    """Column names of the data parquet holding ``episode`` (read from its footer, cached).

    A feature ``meta/info.json`` declares may still be absent from the file; ask here
    before :func:`read_frames` refuses an unknown column.

    Raises:
        EpisodeNotFoundError: No such episode.
        MissingFileError: The data parquet is missing (a ``FileNotFoundError``).
        DatasetError: The file is not readable parquet.
    """
    layouts = _layouts(ds, resolve_episode(ds, episode))
    return list(dict.fromkeys(name for _p, layout in layouts for name in layout.names))

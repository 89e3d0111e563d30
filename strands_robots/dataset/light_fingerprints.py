"""A dataset's fingerprint columns read without pyarrow or numpy: the label stores' fast path.

Checking labels for staleness, or recording fingerprints with new labels, needs five values
per episode: ``episode_index``, ``length``, the global ``[from, to)`` index range, the
tasks and the content digest of the stored ``observation.state`` mean
(:mod:`strands_robots.dataset.fingerprints`). The dataset reader gets them through
pyarrow and numpy, which cost about 150 ms and 80 MB to import: more than a whole label
command on a thousand episodes. This module reads the same values with arro3 (a small
Arrow and Parquet library, about 2 ms to import) for v3.0, and with :mod:`json` for v2.x,
into plain lists: the form the JSON fingerprint cache stores (:data:`COLUMNS`).

It reads well-formed metadata only. Whatever the dataset reader would repair, refuse or
warn about gives None (the caller then opens the dataset): a header the reader refuses,
nulls, ``episode_index`` values out of order or repeated, a non-positive ``length``,
integers beyond int64 (the reader's columns would wrap them), files that disagree on any
column the reader reads, a file that is not parquet, repeated column names, task or
statistics columns of another type, ``data/*`` and ``videos/*`` columns the reader
refuses, a tasks file it refuses, v2.x lines with other keys or mixed task types. For
every dataset it answers, it gives exactly what the dataset reader's columns give
(``tests/dataset/test_light_fingerprints.py``; docs/performance.md, "Fingerprints without
pyarrow").
"""

from __future__ import annotations

import hashlib
import json
import math
from array import array
from pathlib import Path
from typing import Any, TypeGuard

from strands_robots.dataset.keys import STATE_KEY

#: The keys of the plain form, each a list with one entry per episode (sorted by
#: ``episode``), besides ``has_range`` (bool) and ``task_lists`` (list of task lists):
#: ``task_code`` indexes ``task_lists`` (-1: no tasks), ``content`` is a 16-hex digest or "".
COLUMNS = ("episode", "length", "index_from", "index_to", "task_code", "content")

_STATS = f"stats/{STATE_KEY}/mean"
_RANGE = ("dataset_from_index", "dataset_to_index")
#: Integer columns the dataset reader refuses when null or of another type.
_DATA = ("data/chunk_index", "data/file_index")
#: Rows per record batch read (fewer, larger chunks than the reader's default of 1,024).
_BATCH = 65_536
#: Largest integer a float32 holds exactly; larger integer statistics are left to numpy.
_EXACT_INT = 2**24
#: One past the largest int64: the dataset reader's columns hold nothing larger.
_INT64 = 2**63


class _Unusual(Exception):
    """Metadata this fast path leaves to the dataset reader."""


def light_fingerprint_columns(root: str | Path) -> dict[str, Any] | None:
    """The fingerprint columns of the dataset at ``root`` in plain lists, or None.

    Args:
        root: Dataset root (holds ``meta/info.json``).

    Returns:
        ``{"episode", "length", "index_from", "index_to", "task_code", "content": list,
        "has_range": bool, "task_lists": list[list[str]]}`` (frames for ``length`` and the
        index range), equal to what :func:`strands_robots.dataset.fingerprints.dataset_fingerprints`
        gives as lists; None when arro3 is not installed or the metadata is not plainly
        well-formed (read it with the dataset reader then). Never raises for bad metadata.
    """
    from strands_robots.dataset.info import load_info_document, parse_info
    from strands_robots.errors import LabelsError

    root = Path(root)
    try:
        info = parse_info(load_info_document(root), root)
        if info.major == 3:
            return _v3(root, info.video_keys)
        return _v2(root)
    except (_Unusual, LabelsError, OSError, ValueError, TypeError, KeyError, OverflowError):
        return None


# -- v3.0: meta/episodes/*/*.parquet --------------------------------------------------------


def _v3(root: Path, video_keys: tuple[str, ...]) -> dict[str, Any]:
    try:
        from arro3.core import list_flatten, list_offsets
        from arro3.io import read_parquet
    except ImportError as exc:  # an optional speed-up: the dataset reader does the same work
        raise _Unusual from exc
    files = sorted((root / "meta" / "episodes").glob("*/*.parquet"))
    if not files:
        raise _Unusual
    _check_tasks_v3(root, read_parquet)
    # every column the dataset reader reads: the files must agree on them exactly (it concatenates)
    wanted: tuple[str, ...] = ("episode_index", "length", "tasks", *_DATA, *_RANGE)
    wanted += tuple(f"videos/{key}/{field}" for key in video_keys for field in _VIDEO_FIELDS)
    columns: dict[str, list[Any]] = {"episode": [], "length": [], "index_from": [], "index_to": []}
    joined: list[str] = []  # an episode's tasks as one string, "" for none
    empty: list[bool] = []
    content: list[str] = []
    schema: list[tuple[str, Any]] | None = None
    for path in files:
        table = _read_parquet(path, read_parquet)
        names = set(table.column_names)
        if len(names) != table.num_columns:
            raise _Unusual  # a repeated column name: the reader's lookup decides
        present = [(name, table.column(name).type) for name in wanted if name in names]
        if schema is None:
            schema = present
        elif present != schema:
            raise _Unusual  # the files disagree: the reader's concatenation decides
        _check_reader_columns(table, names, video_keys)
        n = table.num_rows
        episode = _ints(table, "episode_index")
        length = _ints(table, "length")
        if n and (min(length) <= 0 or min(episode) < 0):
            raise _Unusual
        if all(name in names for name in _RANGE):
            columns["index_from"] += _ints(table, _RANGE[0])
            columns["index_to"] += _ints(table, _RANGE[1])
        columns["episode"] += episode
        columns["length"] += length
        if "tasks" in names:
            rows_joined, rows_empty = _tasks(table.column("tasks"), list_flatten, list_offsets)
            joined += rows_joined
            empty += rows_empty
        else:
            joined += [""] * n
            empty += [True] * n
        if _STATS in names:
            content += _digests(table.column(_STATS), n, list_flatten, list_offsets)
        else:
            content += [""] * n
    assert schema is not None
    range_names = tuple(name for name, _ in schema if name in _RANGE)
    tasks_type = next((kind for name, kind in schema if name == "tasks"), None)
    episodes = columns["episode"]
    if any(b <= a for a, b in zip(episodes, episodes[1:], strict=False)):
        raise _Unusual  # out of order or repeated: the reader sorts or refuses
    if range_names != _RANGE:  # the reader computes them from the lengths
        columns["index_from"], columns["index_to"] = _cumulative(columns["length"])
    task_lists: list[list[str]]
    if tasks_type is None:
        task_code, task_lists = [-1] * len(episodes), []
    else:
        split = tasks_type.is_list(tasks_type) or tasks_type.is_large_list(tasks_type)
        task_code, task_lists = _codes(joined, empty, split=split)
    return {**columns, "task_code": task_code, "content": content, "has_range": True, "task_lists": task_lists}


#: Per-camera columns of the episodes metadata (as the dataset reader reads them).
_VIDEO_FIELDS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")


def _read_parquet(path: Path, read_parquet: Any) -> Any:
    """The table of one parquet file; :class:`_Unusual` when it is not one arro3 reads cleanly.

    arro3 panics (``pyo3_runtime.PanicException``, a ``BaseException``) on a file whose
    footer it cannot read, after printing a Rust backtrace: an empty, truncated or
    overwritten file is told by its magic bytes first (the dataset reader names it).
    """
    with open(path, "rb") as handle:  # a directory: IsADirectoryError, an OSError
        head = handle.read(4)
        size = handle.seek(0, 2)
        if size < 12 or head != b"PAR1":
            raise _Unusual
        handle.seek(size - 8)
        tail = handle.read(8)
    if tail[4:] != b"PAR1" or int.from_bytes(tail[:4], "little") > size - 12:
        raise _Unusual
    try:
        return read_parquet(str(path), batch_size=_BATCH).read_all()
    except Exception as exc:
        raise _Unusual from exc
    except BaseException as exc:
        if type(exc).__name__ == "PanicException":
            raise _Unusual from None
        raise


#: Names of the task-string column of ``meta/tasks.parquet``, as the dataset reader looks
#: for them (:data:`strands_robots.dataset.tasks.TASK_COLUMNS`; that module imports pyarrow).
_TASK_COLUMNS = ("task", "__index_level_0__")


def _check_tasks_v3(root: Path, read_parquet: Any) -> None:
    """Refuse a ``meta/tasks.parquet`` the dataset reader refuses (its rules: a task string
    column, an integer ``task_index`` without nulls or repeats)."""
    path = root / "meta" / "tasks.parquet"
    if not path.is_file():
        return
    table = _read_parquet(path, read_parquet)
    names = table.column_names
    if len(set(names)) != len(names):
        raise _Unusual
    if not any(name in names for name in _TASK_COLUMNS):
        kinds = [table.column(name).type for name in names]
        if sum(1 for kind in kinds if kind.is_string(kind) or kind.is_large_string(kind)) != 1:
            raise _Unusual
    if "task_index" in names:
        column = table.column("task_index")
        if not column.type.is_integer(column.type) or column.null_count:
            raise _Unusual
        indices = [value for chunk in _chunks(column) for value in chunk.to_pylist()]
        if len(set(indices)) != len(indices):
            raise _Unusual


def _check_reader_columns(table: Any, names: set[str], video_keys: tuple[str, ...]) -> None:
    """Refuse what the dataset reader refuses in columns it reads but fingerprints do not use."""
    for name in _DATA:  # integers without nulls
        if name in names:
            column = table.column(name)
            if not column.type.is_integer(column.type) or column.null_count:
                raise _Unusual
    for key in video_keys:
        for field in _VIDEO_FIELDS:
            name = f"videos/{key}/{field}"
            if name not in names:
                continue
            kind = table.column(name).type
            number = kind.is_integer(kind) or (field.endswith("timestamp") and kind.is_floating(kind))
            if not number:
                raise _Unusual  # strings, bools, decimals: the reader refuses or converts them


def _chunks(column: Any) -> list[Any]:
    return list(column.chunks)


def _ints(table: Any, name: str) -> list[int]:
    if name not in table.column_names:
        raise _Unusual
    column = table.column(name)
    if not column.type.is_integer(column.type) or column.null_count:
        raise _Unusual
    int64 = column.type.equals(column.type.int64())
    values: list[int] = []
    for chunk in _chunks(column):
        if int64:
            raw = array("q")
            raw.frombytes(memoryview(chunk.buffer()))
            if len(raw) == len(chunk):  # the chunk's own buffer (not a slice of a larger one)
                values += raw.tolist()
                continue
        values += chunk.to_pylist()
    if values and column.type.is_uint64(column.type) and max(values) >= _INT64:
        raise _Unusual  # the reader's int64 columns would wrap them
    return values


def _tasks(column: Any, list_flatten: Any, list_offsets: Any) -> tuple[list[str], list[bool]]:
    """``(joined, empty)``: an episode's tasks joined by NUL, and whether it has none."""
    kind_type = column.type
    if kind_type.is_string(kind_type) or kind_type.is_large_string(kind_type):
        joined: list[str] = []
        for chunk in _chunks(column):
            joined += chunk.to_pylist()
        empty = [text is None for text in joined]
        return ["" if text is None else text for text in joined], empty
    if not (kind_type.is_list(kind_type) or kind_type.is_large_list(kind_type)):
        raise _Unusual
    value = kind_type.value_type
    if not (value.is_string(value) or value.is_large_string(value)):
        raise _Unusual
    joined, empty = [], []
    for chunk in _chunks(column):
        flat = list_flatten(chunk)
        if flat.null_count:
            raise _Unusual  # a null task string: the reader's join rule decides
        if chunk.null_count:  # no tasks (null) as an empty list: row by row
            for row in chunk.to_pylist():
                joined.append("\x00".join(row) if row else "")
                empty.append(not row)
            continue
        texts = flat.to_pylist()
        offsets = list_offsets(chunk).to_pylist()
        base = offsets[0]
        if all(b - a == 1 for a, b in zip(offsets, offsets[1:], strict=False)):  # one task each (the usual case)
            joined += texts
            empty += [False] * len(texts)
            continue
        for start, stop in zip(offsets, offsets[1:], strict=False):
            joined.append("\x00".join(texts[start - base : stop - base]))
            empty.append(stop == start)
    return joined, empty


def _codes(joined: list[str], empty: list[bool], *, split: bool) -> tuple[list[int], list[list[str]]]:
    """Task codes in order of first appearance (as a dictionary encoding numbers them)."""
    code_of = {text: code for code, text in enumerate(dict.fromkeys(joined))}
    codes = [code_of[text] for text in joined]
    if True in empty:
        codes = [-1 if none else code for code, none in zip(codes, empty, strict=True)]
    task_lists = [text.split("\x00") if split else [text] for text in code_of]
    return codes, task_lists


def _digests(column: Any, n: int, list_flatten: Any, list_offsets: Any) -> list[str]:
    """Per row: 16 hex digits of the sha256 of the float32 mean, "" when empty or not finite."""
    kind = column.type
    if not (kind.is_list(kind) or kind.is_large_list(kind)):
        raise _Unusual
    value = kind.value_type
    if not value.is_floating(value):
        raise _Unusual  # integer statistics: numpy's rounding to float32 decides
    sha = hashlib.sha256
    digests: list[str] = []
    for chunk in _chunks(column):
        flat = list_flatten(chunk)
        if chunk.null_count or flat.null_count:  # a missing mean or value has no digest: row by row
            digests += [_mean_digest(row) if row and None not in row else "" for row in chunk.to_pylist()]
            continue
        offsets = list_offsets(chunk).to_pylist()
        raw = array("f", flat.to_pylist())
        base = offsets[0]
        finite = math.isfinite(sum(raw))
        data = raw.tobytes()
        width = 4 * (offsets[1] - base) if len(offsets) > 1 else 0
        if finite and width and all(b - a == width // 4 for a, b in zip(offsets, offsets[1:], strict=False)):
            digests += [sha(data[i : i + width]).hexdigest()[:16] for i in range(0, len(data), width)]
            continue  # every mean of one width and finite (the usual case)
        for start, stop in zip(offsets, offsets[1:], strict=False):
            a, b = start - base, stop - base
            if b <= a or not (finite or math.isfinite(sum(raw[a:b]))):
                digests.append("")
            else:
                digests.append(sha(data[4 * a : 4 * b]).hexdigest()[:16])
    if len(digests) != n:
        raise _Unusual
    return digests


def _cumulative(lengths: list[int]) -> tuple[list[int], list[int]]:
    starts, ends, total = [], [], 0
    for length in lengths:
        starts.append(total)
        total += length
        ends.append(total)
    if total >= _INT64:
        raise _Unusual  # the reader's int64 sums would wrap
    return starts, ends


# -- v2.x: meta/episodes.jsonl and meta/episodes_stats.jsonl --------------------------------


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise _Unusual
                rows.append(row)
    return rows


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


#: The keys of a plain ``meta/episodes.jsonl`` line (LeRobot v2.x writes exactly these).
_V2_KEYS = frozenset(("episode_index", "tasks", "length"))


def _v2(root: Path) -> dict[str, Any]:
    meta = root / "meta"
    if any((meta / "episodes").glob("*/*.parquet")):
        raise _Unusual  # statistics would come from those files
    _check_tasks_v2(root)
    episodes: list[int] = []
    lengths: list[int] = []
    listed: set[bool] = set()  # whether the tasks are lists: pyarrow refuses lines that mix
    with open(meta / "episodes.jsonl", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            # other keys go through pyarrow's type inference (the reader refuses lines that
            # disagree on a type): a line of any other shape is left to the reader
            if not isinstance(row, dict) or not row.keys() <= _V2_KEYS:
                raise _Unusual
            index, length = row.get("episode_index"), row.get("length")
            if not (_is_int(index) and _is_int(length)) or not (0 <= index < _INT64 and 0 < length < _INT64):
                raise _Unusual  # pyarrow reads larger integers as floats: the reader refuses them
            tasks = row.get("tasks")
            if tasks is not None:
                _check_v2_tasks(tasks, "\\u" in line)
                listed.add(isinstance(tasks, list))
            episodes.append(index)
            lengths.append(length)
    if not episodes or len(listed) > 1:
        raise _Unusual  # no episode_index column at all, or tasks both lists and strings
    if any(b <= a for a, b in zip(episodes, episodes[1:], strict=False)):
        raise _Unusual
    digest_of: dict[int, str] = {}
    stats = meta / "episodes_stats.jsonl"
    if stats.is_file():
        for entry in _jsonl(stats):
            digest = _mean_digest(_stats_mean(entry))
            index = entry.get("episode_index")
            if digest and isinstance(index, int):  # True is episode 1 to the reader too
                if not -_INT64 <= index < _INT64:
                    raise _Unusual  # the reader's int64 column of them overflows
                digest_of[index] = digest
    starts, ends = _cumulative(lengths)
    return {
        "episode": episodes,
        "length": lengths,
        "index_from": starts,
        "index_to": ends,
        "task_code": [-1] * len(episodes),
        "content": [digest_of.get(index, "") for index in episodes],
        "has_range": False,
        "task_lists": [],
    }


def _check_v2_tasks(tasks: Any, escaped: bool) -> None:
    """Refuse an episode's ``tasks`` of a shape the reader's pyarrow table does not hold as given."""
    if isinstance(tasks, str):
        texts = [tasks]
    elif isinstance(tasks, list) and all(task is None or isinstance(task, str) for task in tasks):
        texts = [task for task in tasks if task is not None]
    else:
        raise _Unusual
    if escaped:  # a \u escape may spell a lone surrogate, which pyarrow cannot encode
        try:
            "".join(texts).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _Unusual from exc


def _check_tasks_v2(root: Path) -> None:
    """Refuse a ``meta/tasks.jsonl`` the dataset reader refuses (its rules: each non-blank
    line an object with ``task`` and an integer ``task_index``, none repeated)."""
    path = root / "meta" / "tasks.jsonl"
    if not path.is_file():
        return
    indices = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if not (isinstance(record, dict) and "task" in record and _is_int(record.get("task_index"))):
            raise _Unusual
        indices.append(record["task_index"])
    if len(set(indices)) != len(indices):
        raise _Unusual


def _stats_mean(entry: dict[str, Any]) -> Any:
    """The stored ``observation.state`` mean of one statistics line (None when absent)."""
    stats = entry.get("stats") or {}
    if not isinstance(stats, dict):
        raise _Unusual  # the reader fails on it
    feature = stats.get(STATE_KEY) or {}
    if not isinstance(feature, dict):
        raise _Unusual
    return feature.get("mean")


def _flat_numbers(value: Any, out: list[float]) -> None:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, list):
                raise _Unusual  # nested means: numpy's shape rules (ragged ones fail) decide
            _flat_numbers(item, out)
    elif isinstance(value, float):
        out.append(value)
    elif _is_int(value) and abs(value) <= _EXACT_INT:
        out.append(float(value))
    else:
        raise _Unusual  # bools, strings, huge integers: numpy's conversion decides


def _mean_digest(mean: Any) -> str:
    """The digest of one stored mean (a number or nested lists of numbers), "" when none."""
    if mean is None:
        return ""
    values: list[float] = []
    _flat_numbers(mean, values)
    raw = array("f", values)
    if not raw or not math.isfinite(sum(raw)):
        return ""
    return hashlib.sha256(raw.tobytes()).hexdigest()[:16]

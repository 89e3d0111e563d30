"""Task table: ``task_index`` -> task string.

v3.0 stores it in ``meta/tasks.parquet`` (LeRobot writes the pandas index: a column named
``task``, or ``__index_level_0__`` when the index was unnamed, as in the shared
``so101-record-test-v30``); v2.x in ``meta/tasks.jsonl``. Source: docs/dataset.md.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots.arguments import encodes_utf8
from strands_robots.dataset.text import json_object_lines
from strands_robots.errors import DatasetError

#: Candidate names of the task-string column, in order of preference.
TASK_COLUMNS = ("task", "__index_level_0__")


def _string_column(table: pa.Table, path: Path) -> str:
    for name in TASK_COLUMNS:
        if name in table.column_names:
            return name
    candidates = [f.name for f in table.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    if len(candidates) == 1:
        return candidates[0]
    raise DatasetError(
        f"{path}: no task string column (looked for {list(TASK_COLUMNS)}; found {table.column_names}). "
        "Rewrite meta/tasks.parquet with columns task_index and task."
    )


def _check_unique(tasks: dict[int, str], count: int, path: Path) -> dict[int, str]:
    if len(tasks) != count:
        raise DatasetError(f"{path}: task_index values repeat; each task needs its own task_index.")
    return dict(sorted(tasks.items()))


def load_tasks_v3(root: Path) -> dict[int, str]:
    """Read ``meta/tasks.parquet``; a dataset without one has no tasks (``{}``).

    Raises:
        DatasetError: No task string column, a ``task_index`` that is not integer, or repeated.
    """
    path = root / "meta" / "tasks.parquet"
    if not path.is_file():
        return {}
    try:
        table = pq.ParquetFile(path).read()
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"{path} cannot be read as parquet ({exc}); restore it.") from exc
    text = _string_column(table, path)
    names = table.column(text).to_pylist()
    if "task_index" in table.column_names:
        column = table.column("task_index")
        if not pa.types.is_integer(column.type) or column.null_count:
            raise DatasetError(f"{path}: task_index must be a non-null integer column.")
        indices = column.to_pylist()
    else:
        indices = list(range(len(names)))
    return _check_unique({int(i): str(t) for i, t in zip(indices, names, strict=True)}, len(names), path)


def load_tasks_v2(root: Path) -> dict[int, str]:
    """Read ``meta/tasks.jsonl`` (``{"task_index": 0, "task": "..."}`` per line).

    Raises:
        DatasetError: A line that is not such an object.
    """
    path = root / "meta" / "tasks.jsonl"
    if not path.is_file():
        return {}
    tasks: dict[int, str] = {}
    count = 0
    for lineno, record in json_object_lines(path, "expected {task_index, task}"):
        if "task_index" not in record or "task" not in record:
            raise DatasetError(f"{path} line {lineno}: expected {{task_index, task}}, got keys {sorted(record)}.")
        index, task = record["task_index"], str(record["task"])
        if not isinstance(index, int) or isinstance(index, bool):
            raise DatasetError(f"{path} line {lineno}: task_index {index!r} is not an integer.")
        if not task.isascii() and not encodes_utf8(task):
            raise DatasetError(
                f"{path} line {lineno}: the task holds a \\u escape of a lone surrogate, which is not UTF-8 "
                "text; rewrite that task as valid UTF-8."
            )
        tasks[index] = task
        count += 1
    return _check_unique(tasks, count, path)

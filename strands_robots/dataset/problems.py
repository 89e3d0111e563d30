"""Cross-checks that are reported, not raised: ``Dataset.problems``.

Which checks raise (at :func:`~strands_robots.dataset.open_dataset` or when reading) and
which are only listed here is tabled in docs/dataset.md, "Which checks raise and which are
listed". Non-contiguous ``episode_index`` values are not a problem: episodes are always
looked up by their real index, never by position.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import numpy as np

    from strands_robots.dataset.layout import Layout

#: Problem kinds (stable strings, for filtering).
HEADER = "header"
TOTALS = "totals_mismatch"
VERSION = "version_not_declared"
INDEX_RANGE = "index_range_mismatch"
VIDEO_SPAN = "video_span_mismatch"
VIDEO_COLUMNS = "video_columns_missing"
MISSING_VIDEO = "missing_video"
MISSING_DATA = "missing_data_file"


@dataclass(frozen=True, slots=True)
class Problem:
    """One cross-check finding that does not stop the dataset from opening.

    Attributes:
        kind: One of the module constants (``"missing_video"``, ``"totals_mismatch"``, ...).
        message: A sentence naming what disagrees and what to do about it.
        episodes: The ``episode_index`` values concerned (may be empty; may be abridged to
            the first few for very large datasets, see ``message``).
    """

    kind: str
    message: str
    episodes: tuple[int, ...] = ()

    def __str__(self) -> str:
        return self.message


def abridge(values: Sequence[object] | np.ndarray, limit: int = 8) -> str:
    """``1, 2, 3, ...`` text for messages: at most ``limit`` values, then the count."""
    if len(values) <= limit:
        return ", ".join(str(v) for v in values)
    head = ", ".join(str(v) for v in values[:limit])
    return f"{head}, ... ({len(values)} in all)"


def shown_path(ds: Layout, path: Path) -> str:
    """``path`` as messages name it: relative to the dataset root when inside it."""
    return str(path.relative_to(ds.root)) if path.is_relative_to(ds.root) else str(path)


def find_problems(ds: Layout) -> list[Problem]:
    """Run every listed (non-raising) cross-check on an open dataset.

    Checks header problems found while parsing, header totals against the episodes
    metadata, global index ranges against lengths, video spans against ``length / fps``,
    cameras without video columns, and missing data / video files (one ``stat`` per
    distinct file).
    """
    problems: list[Problem] = list(ds.info.problems)
    problems += _totals(ds)
    problems += _index_ranges(ds)
    problems += _video_columns(ds)
    problems += _missing_files(ds)
    return problems


def _totals(ds: Layout) -> list[Problem]:
    out = []
    table = ds.episodes
    found = {
        "total_episodes": len(table),
        "total_frames": int(table.lengths.sum()),
    }
    if ds.tasks:
        found["total_tasks"] = len(ds.tasks)
    for key, actual in found.items():
        declared = ds.info.totals.get(key)
        if declared is not None and declared != actual:
            out.append(
                Problem(
                    TOTALS,
                    f"meta/info.json says {key} = {declared} but the episodes metadata has {actual}; "
                    f"the episodes metadata wins. Rewrite {key} in the header.",
                )
            )
    return out


def _index_ranges(ds: Layout) -> list[Problem]:
    table = ds.episodes
    bad = (table.index_to - table.index_from) != table.lengths
    if not bool(bad.any()):
        return []
    where = table.indices[bad].tolist()
    return [
        Problem(
            INDEX_RANGE,
            f"episodes {abridge(where)}: dataset_to_index - dataset_from_index differs from length; "
            "frames are read by episode_index, so reading still works. Repair meta/episodes.",
            tuple(where[:1000]),
        )
    ]


def _video_columns(ds: Layout) -> list[Problem]:
    import numpy as np

    out: list[Problem] = []
    if ds.info.major != 3:
        return out
    table = ds.episodes
    frame = 1.0 / float(ds.fps)
    expected = table.lengths / float(ds.fps)
    for key in ds.info.video_keys:
        cols = table.video_columns.get(key)
        if cols is None:
            out.append(
                Problem(
                    VIDEO_COLUMNS,
                    f"camera {key} is declared in info.json but meta/episodes has no videos/{key}/chunk_index, "
                    "file_index and from_timestamp columns: its frames cannot be located.",
                )
            )
            continue
        if not bool(cols.valid.all()):
            where = table.indices[~cols.valid].tolist()
            out.append(
                Problem(
                    VIDEO_COLUMNS,
                    f"camera {key}: episodes {abridge(where)} have null video columns in meta/episodes.",
                    tuple(where[:1000]),
                )
            )
        span = cols.to_ts - cols.from_ts
        bad = cols.valid & (np.abs(span - expected) > frame + 1e-6)
        if bool(bad.any()):
            where = table.indices[bad].tolist()
            out.append(
                Problem(
                    VIDEO_SPAN,
                    f"camera {key}: episodes {abridge(where)} have to_timestamp - from_timestamp differing from "
                    "length / fps by more than one frame; frames near the end may not decode.",
                    tuple(where[:1000]),
                )
            )
    return out


def _file_groups(ds: Layout, key: str | None) -> tuple[list[Path], np.ndarray, np.ndarray]:
    """Distinct files of the data parquet (``key`` None) or of camera ``key``'s mp4.

    Returns ``(paths, group, rows)``: row ``rows[i]`` of the episodes table uses file
    ``paths[group[i]]``. One path is built per distinct file, not per episode (v3).
    """
    import numpy as np

    table = ds.episodes
    n = len(table)
    if ds.info.major != 3:  # a file per episode (a v2 header always has a video_path template)
        paths = [table.data_path_at(pos) if key is None else table.video_path_at(key, pos) for pos in range(n)]
        return cast(list[Path], paths), np.arange(n), np.arange(n)
    from strands_robots.dataset.episodes import data_shards

    if key is None and not table.data_located and (shards := data_shards(ds.root)):
        # the metadata names no data file: the episodes may sit in any of them (read_frames reads them all)
        return shards, np.zeros(n, dtype=np.int64), np.arange(n)
    rows: np.ndarray
    if key is None:
        chunk, file_, rows = table.data_chunk, table.data_file_index, np.arange(n)
    else:
        cols = table.video_columns.get(key)
        if cols is None:
            return [], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        rows = np.flatnonzero(cols.valid)
        chunk, file_ = cols.chunk[rows], cols.file[rows]
    combined = (chunk.astype(np.int64) << 32) + file_.astype(np.int64)
    _, first, group = np.unique(combined, return_index=True, return_inverse=True)
    paths = []
    for g in range(first.shape[0]):
        pos = int(rows[first[g]])
        path = table.data_path_at(pos) if key is None else table.video_path_at(key, pos)
        assert path is not None
        paths.append(path)
    return paths, group.reshape(-1), rows


def file_status(ds: Layout, key: str | None) -> list[tuple[Path, bool, np.ndarray]]:
    """``(path, present, episode_indices)`` per distinct data (``key=None``) or video file.

    ``episode_indices`` (an int64 array) is filled only for missing files (empty for present ones).
    """
    import numpy as np

    table = ds.episodes
    paths, group, rows = _file_groups(ds, key)
    listing: dict[Path, set[str]] = {}
    present = []
    for path in paths:
        parent = path.parent
        if parent not in listing:
            try:
                listing[parent] = set(os.listdir(parent))
            except OSError:
                listing[parent] = set()
        present.append(path.name in listing[parent] and path.is_file())
    missing = np.flatnonzero(~np.asarray(present, dtype=bool)) if paths else np.zeros(0, dtype=np.int64)
    episodes: dict[int, np.ndarray] = {}
    if missing.size:
        mask = np.isin(group, missing)
        groups, members = group[mask], table.indices[rows[mask]]
        order = np.argsort(groups, kind="stable")
        ids, starts = np.unique(groups[order], return_index=True)
        for g, chunk in zip(ids.tolist(), np.split(members[order], starts[1:]), strict=True):
            episodes[g] = chunk
    empty = np.zeros(0, dtype=np.int64)
    return [(path, ok, episodes.get(g, empty)) for g, (path, ok) in enumerate(zip(paths, present, strict=True))]


def _missing_files(ds: Layout) -> list[Problem]:
    import numpy as np

    out = []
    for key in (None, *ds.info.video_keys):
        missing = [(p, eps) for p, ok, eps in file_status(ds, key) if not ok]
        if not missing:
            continue
        episodes = np.sort(np.concatenate([eps for _, eps in missing]))
        files = [shown_path(ds, p) for p, _ in missing]
        if key is None:
            message = (
                f"{len(missing)} data file(s) missing ({abridge(files, 3)}), needed by episodes "
                f"{abridge(episodes)}: read_frames fails for them. Restore the data/ directory."
            )
            kind = MISSING_DATA
        else:
            message = (
                f"camera {key}: {len(missing)} video file(s) missing ({abridge(files, 3)}), needed by episodes "
                f"{abridge(episodes)}: decode_frames fails for them; state can still be read."
            )
            kind = MISSING_VIDEO
        out.append(Problem(kind, message, tuple(episodes[:1000].tolist())))
    return out

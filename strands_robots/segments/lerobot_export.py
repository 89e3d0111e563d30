"""Write approved segmentations into a LeRobot v3.0 dataset as language rows or SARM's columns
(docs/segments.md, "Export (`export-lerobot`)": ``out`` writes a new dataset, ``in_place`` rewrites
the dataset itself and refuses when it changed since the labels were read).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strands_robots.errors import LabelValidationError, SidecarError
from strands_robots.segments import lerobot_language as language
from strands_robots.segments import sarm
from strands_robots.segments.proposals import is_approved
from strands_robots.segments.store import list_segmentations, stale_segmentations
from strands_robots.storage.atomic import atomic_write_bytes
from strands_robots.storage.side_files import SIDECARS  # this project's files, not LeRobot's (left out of out)


class DatasetChangedError(SidecarError):
    """The dataset changed since the labels were read; nothing more was written."""


@dataclass
class ExportReport:
    """What an export wrote."""

    root: str
    target: str
    mode: str
    episodes: list[int] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)
    videos_linked: int = 0
    files_copied: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _stat(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _parquet_bytes(table: Any, episodes: list[int]) -> bytes:
    """``table`` as parquet, one row group per run of an episode (as LeRobot writes it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, compression="snappy") as writer:
        start = 0
        for i in range(1, len(episodes) + 1):
            if i == len(episodes) or episodes[i] != episodes[start]:
                writer.write_table(table.slice(start, i - start))
                start = i
    return sink.getvalue().to_pybytes()


def _set_column(table: Any, name: str, new_of: dict[int, Any], kind: Any, missing: Any) -> Any:
    """``table`` with column ``name`` holding ``new_of[episode]`` on those episodes' rows; the other rows keep
    their value (``missing`` in a column the table did not have, which is appended with type ``kind``)."""
    import pyarrow as pa

    episodes = table.column("episode_index").to_pylist()
    present = name in table.column_names
    old = table.column(name).to_pylist() if present else [missing] * len(episodes)
    new = [new_of[ep] if ep in new_of else old[i] for i, ep in enumerate(episodes)]
    if present:
        return table.set_column(table.column_names.index(name), name, pa.array(new, type=table.schema.field(name).type))
    return table.append_column(name, pa.array(new, type=kind))


def _language_table(path: Path, rows_of: dict[int, list[dict[str, Any]]]) -> tuple[Any, list[int]] | None:
    """The data file with its persistent rows replaced for ``rows_of``'s episodes (None: unchanged)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    episodes = table.column("episode_index").to_pylist()
    has = language.LANGUAGE_PERSISTENT in table.column_names
    if has and not any(ep in rows_of for ep in episodes):
        return None
    table = _set_column(table, language.LANGUAGE_PERSISTENT, rows_of, language.rows_arrow_type(), [])
    if not has:
        table = table.replace_schema_metadata(None)  # its features description no longer matches the columns
    if language.LANGUAGE_EVENTS not in table.column_names:
        table = _set_column(table, language.LANGUAGE_EVENTS, {}, language.rows_arrow_type(timestamp=False), [])
    return table, episodes


def _sarm_table(path: Path, values_of: dict[int, dict[str, list[Any]]], prefix: str) -> Any | None:
    """The ``meta/episodes`` file with SARM's columns set for ``values_of``'s episodes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    if not any(ep in values_of for ep in table.column("episode_index").to_pylist()):
        return None
    types = {
        "subtask_names": pa.list_(pa.string()),
        "subtask_start_times": pa.list_(pa.float64()),
        "subtask_end_times": pa.list_(pa.float64()),
        "subtask_start_frames": pa.list_(pa.int64()),
        "subtask_end_frames": pa.list_(pa.int64()),
    }
    for name, kind in types.items():
        new_of = {ep: values[name] for ep, values in values_of.items()}
        table = _set_column(table, f"{prefix}_{name}", new_of, kind, None)
    return table


def _approved(root: Path, labels_dir: Any, episodes: Any) -> dict[int, dict[str, Any]]:
    records = {r["episode_index"]: r for r in list_segmentations(root, labels_dir=labels_dir) if is_approved(r)}
    missing = sorted(ep for ep in records if ep not in episodes)
    if missing:
        raise LabelValidationError(
            f"approved segmentations of episodes {missing} name no episode of {root}; remap or remove them first "
            "(strands-labels remap)."
        )
    stale = {ep: why for ep, why in stale_segmentations(root, labels_dir=labels_dir).items() if ep in records}
    if stale:
        shown = "; ".join(f"episode {ep}: {why}" for ep, why in sorted(stale.items())[:5])
        raise DatasetChangedError(
            f"the segmentations of {len(stale)} episode(s) were made for other episodes ({shown}); nothing was "
            "written. Remap the labels (strands-labels remap) or review those episodes again."
        )
    return records


def _check_origin(record: dict[str, Any], tool: str, current: list[Any], ours: list[Any]) -> str | None:
    """Why the dataset's annotations of the episode (``current``: rows or SARM spans) are neither
    the ones its proposal was read from by ``tool`` nor ``ours`` (this export's), or None."""
    review = record.get("review") or {}
    origin = (review.get("proposal") or {}).get("origin") or record.get("origin")
    if not origin or origin.get("tool") != tool:
        return None
    digest = language.rows_digest(current)
    if digest in (origin.get("rows"), language.rows_digest(ours)):
        return None
    what = f"{origin['style']} rows" if "style" in origin else f"{origin.get('columns')} SARM columns"
    return f"its {what} are not the ones imported ({len(current)} now)"


def _refuse_changed(problems: list[str]) -> None:
    """Raise :class:`DatasetChangedError` naming the first episodes of ``problems`` (if any)."""
    if problems:
        raise DatasetChangedError(
            "the dataset changed since the labels were read (" + "; ".join(problems[:5]) + "); nothing was "
            "written. Import again (strands-labels segments import-lerobot) and review, or export with --out."
        )


def _copy_tree(root: Path, target: Path, skip: set[Path], report: ExportReport) -> None:
    """Copy ``root`` into ``target`` (videos hard-linked), leaving out ``skip`` and the sidecars."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root)
        dirnames[:] = [d for d in dirnames if not (rel == Path(".") and d.startswith("."))]
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in filenames:
            src = here / name
            if src in skip or (rel == Path(".") and (name in SIDECARS or name.startswith("."))):
                continue
            dst = target / rel / name
            if rel.parts[:1] == ("videos",):
                try:
                    os.link(src, dst)
                    report.videos_linked += 1
                    continue
                except OSError:
                    pass
            shutil.copy2(src, dst)
            report.files_copied += 1


def export_lerobot(
    root: str | Path,
    *,
    out: str | Path | None = None,
    in_place: bool = False,
    style: str = language.SUBTASK_STYLE,
    sarm_prefix: str | None = None,
    labels_dir: str | Path | None = None,
) -> ExportReport:
    """Write the approved segmentations as LeRobot's subtask rows or SARM's columns.

    Args:
        root: A LeRobot v3.0 dataset root (never changed unless ``in_place``).
        out: A new dataset root (must not exist, or be an empty directory).
        in_place: Rewrite ``root`` itself (exactly one of ``out`` and ``in_place``).
        style: The persistent style of the rows written (``subtask``).
        sarm_prefix: ``sparse`` or ``dense``: write SARM's columns instead of rows.
        labels_dir: Where the sidecar lives (default ``root``).

    Returns:
        :class:`ExportReport`: episodes exported, files rewritten, videos linked.

    Raises:
        UnsupportedVersionError: not a v3.0 dataset.
        LabelValidationError: both or neither of ``out``/``in_place``, an ``out`` that is
            not new, an unknown style or prefix, no approved segmentation.
        DatasetChangedError: a segmentation is stale, the dataset's rows changed since
            they were imported, or a data file changed during the export.
    """
    root = Path(root).resolve()
    if (out is None) == (not in_place):
        raise LabelValidationError("pass exactly one of out=NEW_ROOT (CLI: --out) and in_place=True (--in-place).")
    if sarm_prefix is not None:
        sarm.check_prefix(sarm_prefix)
    else:
        language.check_style(style)
    dataset = language.open_v3(root)
    target = root if out is None else Path(out).resolve()
    if out is not None:
        if target == root or root in target.parents:
            raise LabelValidationError(f"out={target} is inside the dataset; choose a directory outside {root}.")
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise LabelValidationError(f"out={target} exists and is not an empty directory; choose a new path.")
    approved = _approved(root, labels_dir, dataset.episodes)
    if not approved:
        raise LabelValidationError(
            f"no approved segmentation in {root}: accept or edit proposals on the segment page "
            "(strands-labels segments page ROOT) or save segmentations first; nothing was written."
        )
    report = ExportReport(str(root), str(target), "in-place" if in_place else "out", sorted(approved))
    fps = float(dataset.fps)
    writes: dict[Path, bytes] = {}  # file of the dataset -> its new bytes (data files first, then metadata)
    stats: dict[Path, tuple[int, int, int]] = {}  # the data files as read (an in-place write checks them)
    if sarm_prefix is None:
        rows = language.read_episodes(root)
        rows_of: dict[int, list[dict[str, Any]]] = {}
        problems = []
        for ep, record in approved.items():
            current = rows[ep].persistent if ep in rows else []
            ours = language.segment_rows(record["segments"], rows[ep].timestamps, style)
            why = in_place and _check_origin(record, language.SOURCE_NAME, language.style_rows(current, style), ours)
            if why:
                problems.append(f"episode {ep}: {why}")
            rows_of[ep] = language.merge_rows(current, ours, style)
        _refuse_changed(problems)
        for path in language.data_files(root):
            stats[path] = _stat(path)
            built = _language_table(path, rows_of)
            if built is not None:
                writes[path] = _parquet_bytes(*built)
        info_path = root / "meta" / "info.json"
        info = json.loads(info_path.read_text())
        features = dict(info.get("features", {}))
        if any(k not in features for k in language.LANGUAGE_FEATURES):
            features.update({k: v for k, v in language.LANGUAGE_FEATURES.items() if k not in features})
            info["features"] = features
            writes[info_path] = (json.dumps(info, indent=4) + "\n").encode()
    else:
        values = {ep: sarm.episode_values(r["segments"], fps) for ep, r in approved.items()}
        if in_place:
            stored = sarm.read_spans(root, sarm_prefix)
            problems = []
            for ep, record in approved.items():
                written = [list(span) for span in zip(*values[ep].values(), strict=True)]
                now = [list(span) for span in stored.get(ep, [])]
                why = _check_origin(record, sarm.source_name(sarm_prefix), now, written)
                if why:
                    problems.append(f"episode {ep}: {why}")
            _refuse_changed(problems)
        for path in sarm.episode_files(root):
            stats[path] = _stat(path)
            table = _sarm_table(path, values, sarm_prefix)
            if table is not None:
                writes[path] = _parquet_bytes(table, table.column("episode_index").to_pylist())
        proportions = sarm.temporal_proportions({ep: r["segments"] for ep, r in approved.items()})
        writes[sarm.proportions_path(root, sarm_prefix)] = (json.dumps(proportions, indent=2) + "\n").encode()
    report.rewritten = sorted(str(path.relative_to(root)) for path in writes)
    if in_place:
        for path, data in writes.items():
            if path in stats and _stat(path) != stats[path]:
                raise DatasetChangedError(
                    f"{path} changed while the export ran; files replaced before it are complete. Run the export again."
                )
            atomic_write_bytes(path, data)
        return report
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        _copy_tree(root, staging, set(writes), report)
        for path, data in writes.items():
            copy = staging / path.relative_to(root)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)
        if target.exists():
            target.rmdir()
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


__all__ = ["DatasetChangedError", "ExportReport", "export_lerobot"]

"""Write approved segmentations into a LeRobot v3.0 dataset as language rows or SARM's columns
(docs/segments.md, "Export (`export-lerobot`)": ``out`` writes a new dataset, ``in_place`` rewrites
the dataset itself and refuses when it changed since the labels were read).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from strands_robots.dataset.keys import INFO_JSON
from strands_robots.errors import LabelValidationError, SidecarError
from strands_robots.segments import lerobot_language as language
from strands_robots.segments import sarm
from strands_robots.segments.proposals import is_approved
from strands_robots.segments.store import list_segmentations, stale_segmentations
from strands_robots.storage.atomic import atomic_write_bytes
from strands_robots.storage.registry import Identity, file_identity
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


def _parquet_bytes(table: Any) -> bytes:
    """``table`` as parquet, one row group per run of an episode (as LeRobot writes it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, compression="snappy") as writer:
        start = 0
        for _, run in itertools.groupby(table.column("episode_index").to_pylist()):
            rows = sum(1 for _ in run)
            writer.write_table(table.slice(start, rows))
            start += rows
    return sink.getvalue().to_pybytes()


def _with_columns(path: Path, new_of: dict[int, dict[str, Any]], columns: dict[str, tuple[Any, Any]]) -> Any | None:
    """The table in ``path`` with each of ``columns`` (name -> (Arrow type, the other rows' value in a new
    column)) holding ``new_of[episode][name]`` on those episodes' rows; other rows keep their value. None when
    the file already has every column and holds none of ``new_of``'s episodes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    episodes = table.column("episode_index").to_pylist()
    added = [name for name in columns if name not in table.column_names]
    if not added and not any(ep in new_of for ep in episodes):
        return None
    for name, (kind, missing) in columns.items():
        present = name in table.column_names
        old = table.column(name).to_pylist() if present else [missing] * len(episodes)
        new = [new_of[ep][name] if name in new_of.get(ep, {}) else old[i] for i, ep in enumerate(episodes)]
        if present:
            table = table.set_column(table.column_names.index(name), name, pa.array(new, type=table[name].type))
        else:
            table = table.append_column(name, pa.array(new, type=kind))
    return table.replace_schema_metadata(None) if added else table  # its features description lacks the new columns


def _approved(root: Path, labels_dir: Any, episodes: Any) -> dict[int, dict[str, Any]]:
    records = {r["episode_index"]: r for r in list_segmentations(root, labels_dir=labels_dir) if is_approved(r)}
    if missing := sorted(ep for ep in records if ep not in episodes):
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


def _refuse_changed(
    approved: dict[int, dict[str, Any]], tool: str, stored: dict[int, Any], ours: dict[int, Any]
) -> None:
    """Raise :class:`DatasetChangedError` when an episode's annotations in the dataset (``stored``: rows or
    SARM spans) are neither the ones its proposal was read from by ``tool`` nor ``ours`` (this export's)."""
    problems = []
    for ep, record in approved.items():
        origin = ((record.get("review") or {}).get("proposal") or {}).get("origin") or record.get("origin")
        current = stored.get(ep, [])
        if not origin or origin.get("tool") != tool:
            continue  # not read from this dataset's annotations of this kind
        if language.rows_digest(current) not in (origin.get("rows"), language.rows_digest(ours[ep])):
            what = f"{origin['style']} rows" if "style" in origin else f"{origin.get('columns')} SARM columns"
            problems.append(f"episode {ep}: its {what} are not the ones imported ({len(current)} now)")
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
                with contextlib.suppress(OSError):  # another file system: copied below
                    os.link(src, dst)
                    report.videos_linked += 1
                    continue
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
    dataset = language.open_v3(root, style, sarm_prefix)
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
    writes: dict[Path, bytes] = {}  # file of the dataset -> its new bytes (data files first, then metadata)
    stats: dict[Path, Identity | None] = {}  # the files as read (an in-place write checks them)
    ours: dict[int, list[Any]]  # per episode, the rows (SARM: the spans) this export writes
    stored: dict[int, list[Any]]  # and the ones the dataset holds
    columns: dict[str, tuple[Any, Any]]  # column -> (Arrow type, the other rows' value in a new column)
    if sarm_prefix is None:
        rows = language.read_episodes(root)
        ours = {ep: language.segment_rows(r["segments"], rows[ep].timestamps, style) for ep, r in approved.items()}
        stored = {ep: language.style_rows(rows[ep].persistent, style) for ep in approved}
        new_of = {
            ep: {language.LANGUAGE_PERSISTENT: language.merge_rows(rows[ep].persistent, ours[ep], style)}
            for ep in approved
        }
        tool, files = language.SOURCE_NAME, language.data_files(root)
        columns = {
            language.LANGUAGE_PERSISTENT: (language.rows_arrow_type(), []),
            language.LANGUAGE_EVENTS: (language.rows_arrow_type(timestamp=False), []),
        }
    else:
        values = {ep: sarm.episode_values(r["segments"], float(dataset.fps)) for ep, r in approved.items()}
        ours = {ep: list(zip(*values[ep], strict=True)) for ep in approved}
        stored = sarm.read_spans(root, sarm_prefix) if in_place else {}
        new_of = {ep: dict(zip(sarm.columns(sarm_prefix), values[ep], strict=True)) for ep in approved}
        tool, files = sarm.source_name(sarm_prefix), sarm.episode_files(root)
        columns = dict(zip(sarm.columns(sarm_prefix), sarm.arrow_types(), strict=True))
    if in_place:
        _refuse_changed(approved, tool, stored, ours)
    for path in files:
        stats[path] = file_identity(path)
        table = _with_columns(path, new_of, columns)
        if table is not None:
            writes[path] = _parquet_bytes(table)
    if sarm_prefix is None:
        info_path = root / INFO_JSON
        info = json.loads(info_path.read_text())
        features = info.get("features", {})
        if any(k not in features for k in language.LANGUAGE_FEATURES):
            info["features"] = features | {k: v for k, v in language.LANGUAGE_FEATURES.items() if k not in features}
            writes[info_path] = (json.dumps(info, indent=4) + "\n").encode()
    else:
        proportions = sarm.temporal_proportions({ep: r["segments"] for ep, r in approved.items()})
        writes[sarm.proportions_path(root, sarm_prefix)] = (json.dumps(proportions, indent=2) + "\n").encode()
    report.rewritten = sorted(str(path.relative_to(root)) for path in writes)
    if in_place:
        for path, data in writes.items():
            if path in stats and file_identity(path) != stats[path]:
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

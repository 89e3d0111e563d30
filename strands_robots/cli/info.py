"""``strands-labels info ROOT``: a dataset summary.

Prints version, fps, episodes, frames, tasks, cameras (with whether each video is
present), state names and any problems found (docs/dataset.md).
:func:`format_summary` returns the same text for other callers (the demo).
"""

import dataclasses
import json
import textwrap
from typing import TYPE_CHECKING, Any

import typer

from strands_robots.cli.common import JsonOpt, RootArg

if TYPE_CHECKING:
    from strands_robots.dataset import Dataset
    from strands_robots.dataset.check import CheckReport
    from strands_robots.dataset.hub import HubDataset


def _camera_line(ds: "Dataset", key: str, status: dict[str, tuple[int, int]]) -> str:
    feature = ds.features[key]
    shape = "x".join(str(v) for v in feature.get("shape", [])) or "?"
    if feature.get("dtype") == "image":
        return f"{key}  image {shape}  (in the data parquet)"
    present, total = status.get(key, (0, 0))
    if total == 0:
        state = "no video reference in meta/episodes"
    elif present == total:
        state = f"video present ({total} file{'s' if total != 1 else ''})"
    elif present == 0:
        state = f"video MISSING ({total} file{'s' if total != 1 else ''})"
    else:
        state = f"video partly present ({present} of {total} files)"
    codec = feature.get("info", {}).get("video.codec") if isinstance(feature.get("info"), dict) else None
    return f"{key}  video {shape}{' ' + codec if codec else ''}  {state}"


#: Per-frame bookkeeping columns every LeRobot dataset has; listed on one line.
BOOKKEEPING = ("timestamp", "frame_index", "episode_index", "index", "task_index")


def _other_features(ds: "Dataset") -> dict[str, dict[str, Any]]:
    """Non-camera features (``action``, ``observation.state``, ``next.success``, ...), in file order."""
    cameras = set(ds.camera_keys)
    out = {}
    for key, feature in ds.features.items():
        if key in cameras or key in BOOKKEEPING or not isinstance(feature, dict):
            continue
        names = list(ds.feature_names(key))
        out[key] = {"dtype": feature.get("dtype"), "shape": feature.get("shape"), "names": names or None}
    return out


def _feature_line(key: str, feature: dict[str, Any]) -> str:
    shape = "x".join(str(v) for v in feature.get("shape") or []) or "?"
    names = feature.get("names")
    described = f"  {len(names)} names" if names else ""
    return f"{key}  {feature.get('dtype')} {shape}{described}"


def summary_dict(ds: "Dataset") -> dict[str, Any]:
    """The summary as plain data (what ``info --json`` prints)."""
    status = ds.video_status()
    cameras = {}
    for key in ds.camera_keys:
        present, total = status.get(key, (0, 0))
        cameras[key] = {
            "dtype": ds.features[key].get("dtype"),
            "shape": ds.features[key].get("shape"),
            "video_files_present": present,
            "video_files": total,
        }
    return {
        "root": str(ds.root),
        "codebase_version": ds.codebase_version,
        "robot_type": ds.robot_type,
        "fps": ds.fps,
        "episodes": len(ds.episodes),
        "episode_index": ds.episodes.span,
        "frames": ds.total_frames,
        "tasks": {str(k): v for k, v in ds.tasks.items()},
        "cameras": cameras,
        "features": _other_features(ds),
        "state_names": list(ds.state_names),
        "problems": [{"kind": p.kind, "message": p.message} for p in ds.problems],
    }


def format_summary(ds: "Dataset") -> str:
    """Human-readable multi-line summary of an open dataset."""
    status = ds.video_status()
    lines = [
        f"dataset   {ds.root}",
        f"version   {ds.codebase_version}" + (f"  robot {ds.robot_type}" if ds.robot_type else ""),
        f"fps       {ds.fps}",
        f"episodes  {len(ds.episodes)}  (episode_index {ds.episodes.span})",
        f"frames    {ds.total_frames}",
        f"tasks     {len(ds.tasks)}",
    ]
    lines += [f"  [{index}] {task}" for index, task in ds.tasks.items()]
    lines.append(f"cameras   {len(ds.camera_keys)}")
    lines += [f"  {_camera_line(ds, key, status)}" for key in ds.camera_keys]
    others = _other_features(ds)
    lines.append(f"features  {len(others)} besides cameras")
    lines += [f"  {_feature_line(key, feature)}" for key, feature in others.items()]
    present = [key for key in BOOKKEEPING if key in ds.features]
    if present:
        lines.append(f"  (and per-frame {', '.join(present)})")
    names = ds.state_names
    if names:
        lines.append(f"state     observation.state: {len(names)} names")
        numbered = ", ".join(f"{i}:{name}" for i, name in enumerate(names))
        lines += textwrap.wrap(numbered, width=100, initial_indent="  ", subsequent_indent="  ")
    else:
        lines.append("state     (observation.state has no declared names)")
    problems = ds.problems
    lines.append(f"problems  {len(problems) if problems else 'none'}")
    lines += [f"  - [{p.kind}] {p.message}" for p in problems]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add ``info`` to ``app``."""

    @app.command("info")
    def info(
        root: RootArg,
        as_json: JsonOpt = False,
        check: bool = typer.Option(
            False,
            "--check",
            help="Also read every data file and decode the first and last frame of every episode of every camera; "
            "list damaged files (exit status 1 when any).",
        ),
    ) -> None:
        """Summarise a LeRobot dataset: version, fps, episodes, frames, tasks, cameras, state, problems."""
        from strands_robots.dataset import open_dataset

        ds = open_dataset(root)
        hub = getattr(root, "hub", None)
        checked = None
        if check:
            from strands_robots.dataset.check import check_files

            checked = check_files(ds)
        if as_json:
            summary = summary_dict(ds)
            if hub is not None:
                summary["hub"] = hub_dict(hub)
            if checked is not None:
                summary["check"] = dataclasses.asdict(checked)  # what was read and every damaged file
            typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        else:
            text = format_summary(ds) + ("" if checked is None else "\n" + format_check(checked))
            typer.echo(text + ("" if hub is None else "\n" + format_hub(hub)))
        if checked is not None and not checked.ok:
            raise typer.Exit(1)


def format_check(report: "CheckReport") -> str:
    """The ``checked`` and ``damaged`` lines of ``info --check``."""
    from strands_robots.dataset.problems import abridge

    videos = f"first and last frame decoded for {report.videos_decoded} of {report.videos} episode video(s)"
    if report.videos_missing:
        videos += f"; {report.videos_missing} missing (listed under problems)"
    lines = [
        f"checked   {report.data_files} data file(s) read whole; {videos}",
        f"damaged   {len(report.damaged)} file(s)" if report.damaged else "damaged   none",
    ]
    for damaged in report.damaged:
        where = "data" if damaged.camera is None else f"video {damaged.camera}"
        lines.append(f"  - {damaged.path} ({where}; episodes {abridge(list(damaged.episodes))}): {damaged.error}")
    return "\n".join(lines)


def hub_dict(hub: "HubDataset") -> dict[str, Any]:
    """Where a repo-id ROOT came from and where its labels go (``info --json``'s ``hub``)."""
    from strands_robots.dataset.hub import DEFAULT_REVISION

    return {
        "repo_id": hub.repo_id,
        "revision": hub.revision or DEFAULT_REVISION,
        "local_copy": str(hub.root),
        "labels_dir": str(hub.labels_dir),
    }


def format_hub(hub: "HubDataset") -> str:
    """The ``hub`` and ``labels`` lines of ``info`` for a repo-id ROOT."""
    from strands_robots.dataset.hub import DEFAULT_REVISION

    return (
        f"hub       {hub.repo_id} @ {hub.revision or DEFAULT_REVISION}  (local copy above; data and videos "
        "are fetched for the episodes a command reads)\n"
        f"labels    {hub.labels_dir}  (default --labels-dir of this repo id and revision)"
    )

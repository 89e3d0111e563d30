"""``write_report``: the PNG plots of a labelled dataset (the files and what each shows:
docs/review.md, "The report"). The review page serves the same figures
(:func:`summary_figure`, :func:`episode_plot`).
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from strands_robots.arguments import int_argument
from strands_robots.dataset.keys import STATE_KEY
from strands_robots.episode_labels import measure_agreement
from strands_robots.episode_labels.document import labels_path, query_document
from strands_robots.errors import DatasetError, LabelsNotFoundError, LabelValidationError, SidecarError, clipped
from strands_robots.report import figures
from strands_robots.report.summary import counts_by_verdict, dispute_timeline, summaries, summarize
from strands_robots.signals import sample_indices
from strands_robots.storage.atomic import atomic_write_bytes, storage_error

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from strands_robots.dataset import Dataset

#: Summary plot name -> file name.
SUMMARY_PLOTS: dict[str, str] = {
    "quality_by_verdict": "quality_by_verdict.png",
    "failure_modes_by_verdict": "failure_modes_by_verdict.png",
    "judge_vs_human": "judge_vs_human.png",
    "disputes_over_time": "disputes_over_time.png",
}
#: Frames marked per episode: the ``sample_frames`` tool's default ``n_frames``.
SAMPLED_FRAMES = 4
#: Longer side of the thumbnails in the episode plots, pixels.
THUMBNAIL_SIDE = 240
#: Default cap of per-episode plots (open disputes are drawn first).
MAX_EPISODE_PLOTS = 100


#: There is no ``episode_labels.json`` to report on (the one "no sidecar yet" error; kept
#: under this name for importers).
NoLabelsError = LabelsNotFoundError


@dataclass
class ReportResult:
    """What :func:`write_report` wrote.

    Attributes:
        out: The output directory.
        files: Every PNG written, summary plots first.
        skipped_episodes: Episodes left out by ``max_episodes``.
        notes: Human-readable remarks (no human grades, missing videos, ...).
    """

    out: Path
    files: list[Path] = field(default_factory=list)
    skipped_episodes: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def summary_figure(
    name: str,
    root: str | Path,
    document: Mapping[str, Any],
    *,
    labels_dir: str | Path | None = None,
    episodes: Iterable[int] | None = None,
    human_labels: dict[Any, dict[str, Any]] | None = None,
) -> tuple[Figure, str]:
    """One summary plot and a note ("" when nothing to remark).

    Args:
        name: A key of :data:`SUMMARY_PLOTS`.
        root: Dataset root.
        document: The sidecar document.
        labels_dir: Directory of the sidecar (default ``root``).
        episodes: Count only these episodes (default every record).
        human_labels: Holdout for ``judge_vs_human`` (default the review grades).

    Raises:
        KeyError: an unknown plot name.
    """
    if name not in SUMMARY_PLOTS:
        raise KeyError(f"unknown plot {name!r}; plots: {', '.join(SUMMARY_PLOTS)}")
    rows = summaries(document, episodes)
    if name.endswith("_by_verdict"):
        field = "quality" if name == "quality_by_verdict" else "failure_mode"
        return figures.verdict_bars(field, counts_by_verdict(rows, field)), ""
    if name == "disputes_over_time":
        return figures.disputes_over_time(dispute_timeline(document)), ""
    try:
        agreement = measure_agreement(root, human_labels, labels_dir=labels_dir)
    except (LabelValidationError, LabelsNotFoundError) as exc:
        note = f"judge_vs_human: {exc}"
        return figures.judge_vs_human(None, str(exc)), note
    return figures.judge_vs_human(agreement), ""


def episode_title(row: Mapping[str, Any]) -> str:
    """``verdict failure · judge says success (dispute open) · quality medium``."""
    parts = [f"verdict {row['verdict'] or 'not recorded'}"]
    if row.get("overruled"):
        parts[-1] += " (overruled by a human)"
    if row.get("opinion"):
        parts.append(f"judge says {row['opinion']}")
    if row.get("dispute"):
        parts[-1] += f" (dispute {row['dispute']})"
    if row.get("quality"):
        parts.append(f"quality {row['quality']}")
    if row.get("failure_mode"):
        parts.append(row["failure_mode"])
    return " · ".join(parts)


def video_problem(dataset: Dataset, episode: int, camera: str) -> str:
    """Why ``camera`` has no images for ``episode`` (``""`` when it has)."""
    if dataset.features[camera].get("dtype") != "video":
        return ""
    ref = dataset.episodes[episode].videos.get(camera)
    if ref is None:
        return f"no video reference for {camera} in the episodes metadata"
    if not Path(ref.path).is_file():
        return f"video missing: {_shown(dataset, Path(ref.path))}"
    return ""


def episode_plot(
    dataset: Dataset,
    episode: int,
    record: Mapping[str, Any] | None,
    *,
    sampled_frames: int = SAMPLED_FRAMES,
    thumbnail_side: int = THUMBNAIL_SIDE,
) -> tuple[Figure, str]:
    """The per-episode plot (state channels, sampled frames marked, their images above) and
    what could not be drawn (``""`` when everything was).

    A damaged data file leaves the state plot empty and a damaged or truncated video
    leaves out the thumbnails; the figure says which file, and the text is returned so
    the report can list it (docs/review.md, "The report").

    Args:
        dataset: The open dataset.
        episode: Real ``episode_index`` of ``dataset``.
        record: Its sidecar record (None: no labels yet).
        sampled_frames: How many evenly spaced frames to mark (``sample_indices``).
        thumbnail_side: Longer side of each thumbnail, pixels.

    Raises:
        EpisodeNotFoundError: ``episode`` is not in ``dataset``.
    """
    meta = dataset.episodes[episode]
    sampled = sample_indices(meta.length, sampled_frames)
    state = None
    damaged: list[str] = []
    if STATE_KEY in dataset.features:
        try:
            state = np.asarray(dataset.read_frames(episode, [STATE_KEY])[STATE_KEY], dtype=np.float64)
        except DatasetError as exc:
            damaged.append(f"state not drawn: {exc}")
    thumbnails = None
    missing = ""
    if dataset.camera_keys:
        camera = dataset.camera_keys[0]
        missing = video_problem(dataset, episode, camera)
        if not missing:
            try:
                thumbnails = dataset.decode_frames(episode, camera, sampled, max_side=thumbnail_side)
            except Exception as exc:  # noqa: BLE001 - PyAV raises its own types for a broken file
                ref = meta.videos.get(camera)
                shown = _shown(dataset, Path(ref.path)) if ref is not None else camera
                damaged.append(f"video damaged: {shown} ({type(exc).__name__}: {exc})")
        else:
            missing = f"{missing} — the state plot is still drawn"
    problem = "; ".join(damaged)
    figure = figures.episode_state(
        episode=episode,
        state=state,
        names=list(dataset.state_names),
        fps=float(dataset.fps),
        sampled=sampled,
        thumbnails=thumbnails,
        title=episode_title(summarize(episode, record)),
        missing_video="; ".join(x for x in (missing, problem) if x),
    )
    return figure, problem


def _shown(dataset: Dataset, path: Path) -> str:
    try:
        return str(path.relative_to(dataset.root))
    except ValueError:
        return path.name


def _episode_order(dataset: Dataset, document: Mapping[str, Any], wanted: Iterable[int] | None) -> list[int]:
    if wanted is not None:
        chosen = [int(e) for e in wanted]
        unknown = [e for e in chosen if e not in dataset.episodes]
        if unknown:
            raise LabelValidationError(
                f"episodes {unknown} are not in {dataset.root}; pass real episode_index values "
                "(see `strands-labels info ROOT`)."
            )
        return chosen
    rows = summaries(document, dataset.episodes)
    return [r["episode"] for r in sorted(rows, key=lambda r: r["dispute"] != "open")]  # open disputes first


def _own_directory(path: Path) -> None:
    """Create a directory the report owns, refusing a symbolic link at its name (a link at
    ``report/`` would send the PNG files outside the labels directory).

    Raises:
        SidecarError: a symbolic link or a file is at ``path``.
        StorageError: it cannot be created (permission, disk full).
    """
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    except OSError as exc:
        raise storage_error(exc, path, "create the directory") from exc
    if os.path.islink(path) or not os.path.isdir(path):
        kind = "a symbolic link" if os.path.islink(path) else "not a directory"
        raise SidecarError(
            f"{clipped(path)} is {kind}; the report writes its PNG files only into a directory of its own. "
            "Remove it, or pass --out DIR to write the report elsewhere."
        )


def write_report(
    root: str | Path,
    out: str | Path | None = None,
    *,
    labels_dir: str | Path | None = None,
    human_labels: dict[Any, dict[str, Any]] | None = None,
    episodes: Iterable[int] | None = None,
    max_episodes: int = MAX_EPISODE_PLOTS,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> ReportResult:
    """Write the report's PNG files.

    A summary plot with nothing to show but an error (``judge_vs_human`` without any
    human grade) is not written; the reason is in ``notes``.

    Args:
        root: Dataset root.
        out: Output directory (created); default ``<labels dir>/report``.
        labels_dir: Directory of the sidecar (default ``root``).
        human_labels: Holdout for the confusion matrices (default: current review grades).
        episodes: Episodes to draw per-episode plots for (default: every episode of the
            dataset, open disputes first, up to ``max_episodes``).
        max_episodes: Cap on per-episode plots when ``episodes`` is None (0: none).
        on_progress: Called as ``on_progress(done, total, what)`` after each file (the CLI's
            progress bar); ``total`` is known before the first call.

    Returns:
        A :class:`ReportResult`.

    Raises:
        NoLabelsError: no ``episode_labels.json`` yet.
        RootNotFoundError: ``root`` or ``labels_dir`` is not an existing directory.
        DatasetError: ``root`` is not a readable dataset.
        LabelValidationError: an episode not in the dataset, a negative ``max_episodes``.
        SidecarError: a symbolic link at ``report/``, ``report/episodes`` or a PNG's name.
    """
    from strands_robots.dataset import open_dataset

    max_episodes = int_argument(
        max_episodes,
        lambda v: LabelValidationError(f"max_episodes must be a non-negative integer, got {v!r}."),
        minimum=0,
    )
    try:
        document = query_document(root, copy.deepcopy, labels_dir)  # a missing root or labels_dir raises as itself
    except LabelsNotFoundError:
        open_dataset(root)  # a folder that is not a dataset is named as such (DatasetError), not as unlabelled
        raise NoLabelsError(
            f"no episode_labels.json at {labels_path(root, labels_dir=labels_dir)}; record verdicts first "
            "(`strands-labels verdicts ROOT FILE`) or pass --labels-dir where the labels live."
        ) from None
    dataset = open_dataset(root)
    base = Path(labels_dir if labels_dir is not None else root)
    out_dir = Path(out) if out is not None else base / "report"
    if out is None:
        _own_directory(out_dir)  # the report's own directory: never through a link planted there
    else:
        out_dir.mkdir(parents=True, exist_ok=True)  # a directory the person named, links and all
    _own_directory(out_dir / "episodes")
    result = ReportResult(out=out_dir)
    in_dataset = list(dataset.episodes)
    order = _episode_order(dataset, document, episodes)
    if episodes is None and len(order) > max_episodes:
        result.skipped_episodes = order[max_episodes:]
        order = order[:max_episodes]
    total = len(SUMMARY_PLOTS) + len(order)
    done = itertools.count(1)
    progress = on_progress or (lambda done, total, what: None)
    for name, filename in SUMMARY_PLOTS.items():
        figure, note = summary_figure(
            name, root, document, labels_dir=labels_dir, episodes=in_dataset, human_labels=human_labels
        )
        path = out_dir / filename
        if note:  # only an error to show: no PNG (and none left from an earlier run)
            result.notes.append(note.replace(f"{name}: ", f"{filename} not written: ", 1))
            path.unlink(missing_ok=True)
        else:
            atomic_write_bytes(path, figures.png_bytes(figure))
            result.files.append(path)
        progress(next(done), total, filename)
    missing_video = []
    for episode in order:
        figure, problem = episode_plot(dataset, episode, document["episodes"].get(str(episode)))
        if problem:
            result.notes.append(f"episode {episode}: {problem} (the rest of its plot is drawn)")
        path = out_dir / "episodes" / f"episode_{episode:06d}.png"
        atomic_write_bytes(path, figures.png_bytes(figure))
        result.files.append(path)
        progress(next(done), total, f"episode {episode}")
        if dataset.camera_keys and video_problem(dataset, episode, dataset.camera_keys[0]):
            missing_video.append(episode)
    if missing_video:
        result.notes.append(
            f"{len(missing_video)} episode plot(s) have no camera images (video missing), e.g. episode {missing_video[0]}"
        )
    if result.skipped_episodes:
        result.notes.append(
            f"{len(result.skipped_episodes)} episodes not drawn (cap {max_episodes}); pass --max-episodes or --episode"
        )
    return result

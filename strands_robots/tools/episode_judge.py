"""The judge agent's four strands tools and ``create_judge_agent`` (docs/judge.md, "The four tools").

The deterministic verdict is authoritative; the judge grades the execution on top of it
and can annotate the verdict (``success_opinion`` -> ``disputes_verdict``), never
overturn it. Each tool returns a fresh ``{"status", "content"}`` envelope and never
raises (:mod:`strands_robots.tools.envelope`); roots go through
:mod:`strands_robots.tools.root_safety`.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from strands_robots.arguments import bool_argument, int_argument
from strands_robots.dataset.cache import cached_dataset
from strands_robots.dataset.frames import data_columns
from strands_robots.dataset.hub import hub_labels_dir_of, local_copy_of
from strands_robots.dataset.keys import STATE_KEY
from strands_robots.episode_labels import FAILURE_MODES, QUALITY_GRADES, annotate_episode, deterministic_verdict
from strands_robots.episode_labels.document import query_document
from strands_robots.episode_labels.judge import judge_block
from strands_robots.errors import (
    DatasetError,
    EpisodeNotFoundError,
    LabelsNotFoundError,
    VerdictNotFoundError,
    quoted,
)
from strands_robots.model_spec import DEFAULT_MAX_REQUESTS, DEFAULT_TIMEOUT_S
from strands_robots.signals import frame_stats, sample_indices
from strands_robots.signals.episode import signal_columns
from strands_robots.signals.frames import STAT_FRAMES, STAT_MAX_SIDE
from strands_robots.storage.episode_index import episode_index
from strands_robots.tools import envelope
from strands_robots.tools.envelope import (
    MISSING_VIDEO_REMEDY,
    MissingVideoError,
    ToolInputError,
    json_block,
    run_tool,
    text_block,
)
from strands_robots.tools.evidence import EvidenceCache, episode_evidence
from strands_robots.tools.images import DEFAULT_MAX_SIDE, image_block
from strands_robots.tools.root_safety import (
    allowed_roots_from_env,
    check_file_inside,
    check_root_and_metadata,
    normalise_allow_list,
)
from strands_robots.tools.schema import FailureModeArg, JsonBool, JsonInt, QualityArg

MAX_SAMPLED_FRAMES = 64  # a model asking for more gets a clear refusal, not a 10 MB answer

#: What ``sample_frames`` adds when images were asked for but the run sends none.
NO_IMAGES_NOTE = (
    " Images are switched off for this run (--no-images): this answer has no image whatever include_images "
    "says; judge from the state and signals."
)

SYSTEM_PROMPT = """\
You are the judge of a robot-learning dataset. Labelling has two stages with one precedence.

1. The deterministic verdict (success, failure) was decided by the benchmark's own predicates \
from simulator state. It is authoritative: you never overturn it, and nothing you write changes it.
2. You grade the EXECUTION on top of it: smoothness, directness, control, hesitation, regrasps.

For each episode you are asked about, in this order:
- call read_predicate_verdict(root, episode) first;
- look at the recording with load_episode(root, episode) and sample_frames(root, episode, ...) \
(observation.state, timestamps and rms_state_jerk always; images per camera when asked);
- then call write_label(root, episode, quality, ...) exactly once.

Grade the execution, not the outcome: quality is about how the robot moved, not about the outcome, \
and the verdict already carries success, so do not re-derive it in the grade. A failed episode executed cleanly up to its failure can be medium or high; a successful \
episode with jerky, hesitant or lucky motion can be low. quality is one of low, medium, high. \
failure_mode is one of jerky_motion, near_miss, camera_occlusion, wrong_but_lucky, drift, collision, \
incomplete, other, or null when nothing went wrong; near_miss and wrong_but_lucky are legal on a \
successful episode (a success worth excluding from training).

Each recorded frame is the state BEFORE its action, so an episode a predicate stopped ends one step \
short of the state that satisfied it: a last frame just shy of the goal is not evidence against the \
verdict. If your own read of success still differs from the verdict, pass success_opinion: it is \
recorded as a dispute for a human to review and the verdict stands. Leave success_opinion null when \
you have no independent evidence.

If a tool answers with an error, follow its remedy; never invent data you did not receive.
"""

#: The name strands-robots 0.5.3 exports for :data:`SYSTEM_PROMPT`.
JUDGE_SYSTEM_PROMPT = SYSTEM_PROMPT


@dataclass
class JudgeToolConfig:
    """What a tool set is bound to (none of it chosen by the model).

    Attributes:
        roots: Resolved allow-list, or None to read ``STRANDS_LABELS_ROOTS`` at each call.
        labels_dir: Directory of the label sidecars (None = the dataset root).
        judge_model: Recorded as the judge block's ``model`` when the model passes "".
        max_side: Longest side of images sent to the model, in pixels.
        written: ``(root, episode) -> judge block`` of every successful ``write_label``
            (the runner checks it to tell a labelled episode from a model that gave up);
            kept only when ``track_writes``.
        track_writes: Fill ``written`` (off for the long-lived module-level tools).
        records: ``episode_index -> record`` (its ``deterministic`` and ``judge`` blocks)
            read instead of the sidecar, or None to read the sidecar. A distributed
            judge's worker gets the records of its batch from the driver, so it never
            opens the sidecar.
        defer_writes: ``write_label`` checks the label and keeps it in ``written``
            without writing it (the caller writes it; ``track_writes`` must be on).
        evidence: Episodes' rows and signals already computed (the offline judge's
            profile pass); ``sample_frames`` answers from an entry computed from the same
            dataset and data file instead of reading and computing again (same payload).
        images: False: ``sample_frames`` returns no image whatever the model asks, and
            its answer says so (``--no-images``).
        committer: A run's :class:`~strands_robots.judges.commit.GroupCommit`:
            ``write_label`` writes through it (durable when it returns, one commit shared
            with concurrent conversations), or None to write alone.
    """

    roots: list[Path] | None = None
    labels_dir: Path | None = None
    judge_model: str = ""
    max_side: int = DEFAULT_MAX_SIDE
    written: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    track_writes: bool = True
    records: dict[int, dict[str, Any]] | None = None
    defer_writes: bool = False
    evidence: EvidenceCache | None = None
    images: bool = True
    committer: Any = None
    tool_seconds: dict[str, float] = field(default_factory=dict)
    tool_calls: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run(self, tool: str, episode: object, body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """:func:`run_tool` plus the time and call count spent in ``tool``."""
        start = time.perf_counter()
        try:
            return run_tool(tool, episode, body)
        finally:
            elapsed = time.perf_counter() - start
            with self._lock:
                self.tool_seconds[tool] = self.tool_seconds.get(tool, 0.0) + elapsed
                self.tool_calls[tool] = self.tool_calls.get(tool, 0) + 1

    def allowed(self) -> list[Path] | None:
        """The allow-list in force for this call (None: no list)."""
        return allowed_roots_from_env() if self.roots is None else self.roots

    def root(self, value: object) -> Path:
        """Resolve a model-chosen root under this configuration's allow-list; its metadata
        files must resolve inside the allowed roots too (see ``tools.root_safety``).

        A repo id (``"lerobot/pusht"``) names its local copy when one is here; nothing is
        downloaded for a model (``dataset.hub.local_copy_of``).
        """
        return check_root_and_metadata(local_copy_of(value), self.allowed())

    def labels_for(self, root: Path) -> Path | None:
        """Where ``root``'s labels live: :attr:`labels_dir`, else for a Hub dataset's copy its
        labels dir keyed by repo id and revision (the download cache is not written), else None."""
        return self.labels_dir if self.labels_dir is not None else hub_labels_dir_of(root)

    def check_episode_files(self, root: Path, meta: Any, cameras: Iterable[str]) -> None:
        """Refuse before reading when the episode's data file or a camera's mp4 resolves outside,
        or a camera's mp4 is missing (``root``: as :meth:`root` returned it).

        Raises:
            UnsafeRootError: a file resolves outside the allowed roots.
            MissingVideoError: a camera's mp4 is not on disk.
        """
        allowed = self.allowed()
        index = getattr(meta, "episode_index", "?")
        check_file_inside(meta.data_file, root, allowed, f"data file of episode {index}")
        videos = getattr(meta, "videos", {}) or {}
        for camera, ref in ((c, videos[c]) for c in cameras if videos.get(c) is not None):
            check_file_inside(ref.path, root, allowed, f"video of camera {quoted(camera)} of episode {index}")
            if not Path(ref.path).is_file():
                raise MissingVideoError(
                    f"the video of camera {quoted(camera)} ({ref.path}) is missing, so episode {index} has no images "
                    "from it.",
                    remedy=MISSING_VIDEO_REMEDY,
                )

    def record_write(self, root: Path, episode: int, judge: dict[str, Any]) -> None:
        """Remember a successful write (thread-safe)."""
        if self.track_writes:
            with self._lock:
                self.written[(str(root), episode)] = judge


@dataclass(frozen=True)
class JudgeTools:
    """The four tools bound to one :class:`JudgeToolConfig` (iterable: ``Agent(tools=list(t))``)."""

    load_episode: Any
    sample_frames: Any
    read_predicate_verdict: Any
    write_label: Any
    config: JudgeToolConfig

    def __iter__(self) -> Iterator[Any]:
        return iter((self.load_episode, self.sample_frames, self.read_predicate_verdict, self.write_label))


def episode_arg(value: object) -> int:
    """Check a model-chosen episode index (the rule of :mod:`strands_robots.storage.episode_index`).

    Raises:
        ToolInputError: not a non-negative integer episode_index.
    """
    return episode_index(value, "episode", ToolInputError)


def _optional_mode(value: object) -> str | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
        return None
    if value not in FAILURE_MODES:
        raise ToolInputError(
            f"failure_mode {quoted(value)} is not in the vocabulary; use one of {', '.join(FAILURE_MODES)}, or null "
            "when nothing went wrong."
        )
    return str(value)


def verdict_and_judge(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The part of a sidecar record the tools read: its ``deterministic`` and ``judge`` blocks
    and the ``fingerprint`` the stale rule checks (None for no record)."""
    return {k: record[k] for k in ("deterministic", "judge", "fingerprint") if k in record} if record else None


def _stored(cfg: JudgeToolConfig, root: Path, episode: int, part: Callable[[Any], Any] = verdict_and_judge) -> Any:
    """``part`` of the episode's record (``cfg.records``, else the sidecar; None without a sidecar)."""
    if cfg.records is not None:
        return part(cfg.records.get(episode))
    try:
        return query_document(root, lambda d: part(d["episodes"].get(str(episode))), cfg.labels_for(root))
    except LabelsNotFoundError:
        return part(None)


def _episode_meta(dataset: Any, episode: int, root: Path) -> Any:
    """The episode's metadata row; a missing episode's error names the dataset."""
    try:
        return dataset.episodes[episode]
    except EpisodeNotFoundError as exc:
        raise EpisodeNotFoundError(f"Episode {episode} not in dataset {root}; it has no frames there: {exc}") from exc


def _require_parquet() -> None:
    """An ImportError now (its envelope's remedy names pyarrow) when the parquet reader is missing."""
    importlib.import_module("pyarrow.parquet")


def _load_episode(cfg: JudgeToolConfig, root: object, episode: object) -> dict[str, Any]:
    path = cfg.root(root)
    index = episode_arg(episode)
    _require_parquet()
    dataset = cached_dataset(path)
    meta = _episode_meta(dataset, index, path)
    record = _stored(cfg, path, index) or {}
    fps = dataset.fps
    features = {
        name: {"dtype": spec.get("dtype"), "shape": list(spec.get("shape") or [])}
        for name, spec in sorted(dataset.features.items())
    }
    cameras = sorted(dataset.camera_keys)
    info = {
        "root": str(path),
        "episode": index,
        "episode_index": index,
        "length": meta.length,
        "total_episodes": len(dataset.episodes),
        "fps": fps,
        "duration_s": round(meta.length / fps, 6) if fps else None,
        "features": features,
        "camera_keys": cameras,
        "state_names": list(dataset.state_names),
        "tasks": list(meta.tasks),
        "has_verdict": "deterministic" in record,
        "has_deterministic_verdict": "deterministic" in record,
        "has_judge_label": "judge" in record,
    }
    summary = (
        f"episode {index}: {meta.length} frames at {fps} fps, {len(cameras)} camera(s) "
        f"({', '.join(cameras) or 'none'}), task {list(meta.tasks)!r}; verdict recorded: "
        f"{'yes' if info['has_verdict'] else 'no'}; judge label: {'yes' if info['has_judge_label'] else 'no'}."
    )
    return envelope.success(text_block(summary), json_block(info))


def _check_state_width(dataset: Any, state: Any, index: int) -> None:
    """A DatasetError when the state's rows are not as wide as ``meta/info.json`` declares."""
    shape = (dataset.features.get(STATE_KEY) or {}).get("shape") or []
    if state is None or not shape or np.asarray(state).ndim != 2:
        return
    declared, width = int(np.prod(shape)), int(np.asarray(state).shape[1])
    if width != declared:
        raise DatasetError(
            f"observation.state of episode {index} has {width} value(s) per frame but meta/info.json declares "
            f"shape {list(shape)} ({declared}); its signals cannot be computed. Fix the data file or the feature's "
            "declared shape."
        )


def _frame_stats(dataset: Any, meta: Any, index: int, timestamps: Any) -> dict[str, Any] | None:
    """Occlusion statistics of ``STAT_FRAMES`` frames per camera (None without cameras); a camera
    that cannot be decoded is listed under ``errors``: the statistics are evidence, not the answer."""
    cameras = sorted(dataset.camera_keys)
    if not cameras or meta.length < 1:
        return None
    picks = sample_indices(meta.length, STAT_FRAMES)
    images: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for cam in cameras:
        try:
            images[cam] = dataset.decode_frames(index, cam, picks, max_side=STAT_MAX_SIDE, timestamps=timestamps)
        except Exception as exc:  # noqa: BLE001 - reported in the payload, never fatal
            errors[cam] = f"{type(exc).__name__}: {exc}"
    stats = frame_stats(images, picks)
    if errors:
        stats["errors"] = errors
    return stats


def _max_state_delta(state: np.ndarray | None) -> float:
    """Largest ``|state[t+1] - state[t]|`` over every dimension and step (non-finite skipped); 0.0 without two
    finite consecutive states, as the other ``strands_robots`` implementation reports it."""
    if state is None or len(state) < 2:
        return 0.0
    values = np.asarray(state, dtype=np.float64).reshape(len(state), -1)
    delta = np.abs(np.diff(values, axis=0))
    finite = delta[np.isfinite(delta)]
    return float(finite.max()) if finite.size else 0.0


def _state_row(state: np.ndarray | None, frame: int) -> list[float | None] | None:
    if state is None:
        return None
    return [round(float(v), 6) if np.isfinite(v) else None for v in np.asarray(state[frame]).reshape(-1)]


def _sample_frames(
    cfg: JudgeToolConfig, root: object, episode: object, n_frames: object, include_images: object
) -> dict[str, Any]:
    path = cfg.root(root)
    index = episode_arg(episode)
    n_frames = int_argument(
        n_frames, lambda v: ToolInputError(f"n_frames must be a positive integer (e.g. 4), got {quoted(v)}."), minimum=1
    )
    include_images = bool_argument(
        include_images, lambda v: ToolInputError(f"include_images must be true or false, got {quoted(v)}.")
    )
    refused_images = include_images and not cfg.images
    include_images = include_images and cfg.images
    _require_parquet()
    dataset = cached_dataset(path)
    if include_images and not dataset.camera_keys:
        raise ToolInputError(
            f"dataset {path} carries no observation.images.* features, so there are no images to decode; call "
            "sample_frames with include_images=false for the state-only answer (record with cameras for a "
            "multimodal judge)."
        )
    meta = _episode_meta(dataset, index, path)
    count = min(int(n_frames), meta.length)
    if include_images and count > MAX_SAMPLED_FRAMES:
        raise ToolInputError(
            f"n_frames {int(n_frames)} with images is more than {MAX_SAMPLED_FRAMES}; ask for fewer frames "
            "(or include_images=false)."
        )
    cameras = sorted(dataset.camera_keys) if include_images else []
    cfg.check_episode_files(path, meta, cameras)  # before any work: every file read below is inside and there
    cached = cfg.evidence.get(dataset, index, meta.data_file) if cfg.evidence is not None else None
    rows: Mapping[str, np.ndarray]
    if cached is not None and cached.rows is not None:
        evidence = cached  # the profile pass read and computed it from this very file
        _check_state_width(dataset, cached.rows.get(STATE_KEY), index)
    else:
        available = set(data_columns(dataset, index))
        columns = [c for c in signal_columns(dataset) if c in available]  # a declared feature may be absent
        rows = dataset.read_frames(index, columns) if columns else {}
        _check_state_width(dataset, rows.get(STATE_KEY), index)
        evidence = episode_evidence(dataset, meta.length, rows, None if cached is None else cached.signals)
    rows = evidence.rows or {}
    state = rows.get(STATE_KEY)
    timestamps = evidence.timestamps
    picks = sample_indices(meta.length, count)
    signals = dict(evidence.signals)  # shared with the cache and the profile: never changed in place
    signals["frame_stats"] = _frame_stats(dataset, meta, index, rows.get("timestamp"))
    frames, samples = [], []
    for f in picks:
        stamp = round(float(timestamps[f]), 6) if timestamps is not None else None
        values = _state_row(state, f)
        samples.append({"frame_index": f, "timestamp": stamp, "state": values})
        row = {"frame_index": f, "timestamp": stamp, STATE_KEY: values}  # the dataset's column names
        frames.append({key: value for key, value in row.items() if value is not None})
    payload = {
        "episode": index,
        "episode_index": index,
        "length": meta.length,
        "fps": dataset.fps,
        "frame_indices": picks,
        "state_names": list(dataset.state_names),
        "samples": samples,
        "frames": frames,
        "max_state_delta": _max_state_delta(state),
        "rms_state_jerk": signals["rms_state_jerk"],
        "rms_state_jerk_unit": "state units per second cubed (RMS of the third difference / dt^3)",
        "signals": signals,
        "cameras": cameras,
    }
    jerk = signals["rms_state_jerk"]
    summary = (
        f"Episode {index}: sampled {len(picks)} of {meta.length} frames {picks}; rms_state_jerk "
        f"{'n/a (fewer than 4 frames or no state)' if jerk is None else f'{jerk:.6g}'}"
        + (
            f"; {len(picks) * len(cameras)} image blocks, position-major, cameras sorted ({', '.join(cameras)}), "
            "each after its label."
            if cameras
            else "."
        )
        + ("" if state is not None else " This episode has no observation.state.")
        + (NO_IMAGES_NOTE if refused_images else "")
    )
    blocks = [text_block(summary), json_block(payload)]
    decoded = {
        cam: dataset.decode_frames(index, cam, picks, max_side=cfg.max_side, timestamps=rows.get("timestamp"))
        for cam in cameras
    }
    for position, f in enumerate(picks):
        for cam in cameras:
            blocks.extend((text_block(f"frame {f}, camera {cam}:"), image_block(decoded[cam][position])))
    return envelope.success(*blocks)


def _read_predicate_verdict(cfg: JudgeToolConfig, root: object, episode: object) -> dict[str, Any]:
    path = cfg.root(root)
    index = episode_arg(episode)
    if cfg.records is None:
        verdict = deterministic_verdict(path, index, labels_dir=cfg.labels_for(path))
    else:
        verdict = dict((_stored(cfg, path, index) or {}).get("deterministic") or {})
        if not verdict:
            raise VerdictNotFoundError(
                f"No deterministic verdict recorded for episode {index}; record it first with "
                "record_deterministic_verdicts (or `strands-labels verdicts ROOT FILE`)."
            )
    # The block itself, as the other strands_robots implementation answers; the extras sit beside it.
    payload = {**verdict, "episode_index": index, "deterministic": verdict}
    stale = _stale_reason(cfg, path, index)
    if stale:
        payload["stale"] = stale
        summary = (
            f"Episode {index} deterministic verdict is STALE, not authoritative: the stored record no longer matches "
            f"the episode ({stale}); the dataset was edited and its labels not carried. Do not label this episode; "
            f"a person must run `strands-labels remap {path} --from OLD_ROOT` first (docs/editing.md). "
            f"Stored: success={verdict.get('success')}, failure={verdict.get('failure', False)}."
        )
    else:
        summary = (
            f"Episode {index} deterministic verdict (authoritative; you annotate it, never overturn it): "
            f"success={verdict.get('success')}, failure={verdict.get('failure', False)}. The last recorded frame is "
            "the state before the final action."
        )
    return envelope.success(text_block(summary), json_block(payload))


def _stale_reason(cfg: JudgeToolConfig, root: Path, episode: int) -> str | None:
    """Why the episode's stored record no longer matches the dataset, or None (the stale rule:
    :func:`strands_robots.fingerprint.stale_records`)."""
    from strands_robots.fingerprint import stale_records

    fingerprint = _stored(cfg, root, episode, lambda record: (record or {}).get("fingerprint"))
    return stale_records(root, {episode: fingerprint}).get(episode)


def _write_label(
    cfg: JudgeToolConfig,
    root: object,
    episode: object,
    quality: object,
    failure_mode: object,
    note: Any,
    success_opinion: Any,
    judge_model: object,
) -> dict[str, Any]:
    path = cfg.root(root)
    index = episode_arg(episode)
    if quality not in QUALITY_GRADES:
        raise ToolInputError(
            f"quality {quoted(quality)} is not one of {', '.join(QUALITY_GRADES)} (it grades the execution, not the outcome)."
        )
    mode = _optional_mode(failure_mode)
    if judge_model is not None and not isinstance(judge_model, str):
        raise ToolInputError(
            f"judge_model must be a string (your model id) or omitted, got {type(judge_model).__name__} "
            f"{quoted(judge_model)}; nothing was written."
        )
    recorded_model = judge_model if judge_model and judge_model.strip() else cfg.judge_model
    fields = {
        "quality": str(quality),
        "failure_mode": mode,
        "note": note if note is not None else "",
        "success_opinion": success_opinion,
        "model": recorded_model,
    }
    if cfg.defer_writes:
        record = dict(_stored(cfg, path, index) or {})
        record["judge"] = judge_block(record, index, **fields)
        if cfg.records is not None:
            cfg.records[index] = record
    elif cfg.committer is not None:  # shared with the run's other conversations: one fsync for many labels
        record = cfg.committer.write(path, cfg.labels_for(path), index, fields)
    else:
        record = annotate_episode(path, index, **fields, labels_dir=cfg.labels_for(path), keep_history=True)
    judge = record["judge"]
    cfg.record_write(path, index, judge)
    text = f"label {'recorded' if cfg.defer_writes else 'written'} for episode {index}: quality={judge['quality']}, failure_mode={judge['failure_mode']}."
    if judge.get("disputes_verdict"):
        text += (
            f" Your success_opinion={judge['success_opinion']} contradicts the deterministic verdict "
            f"(success={record['deterministic']['success']}): the verdict stands unchanged, and the dispute is "
            "recorded (disputes_verdict: true) for a human to review."
        )
    return envelope.success(text_block(text), json_block({"episode_index": index, "judge": judge}))


def make_judge_tools(
    *,
    roots: Iterable[str | os.PathLike[str]] | None = None,
    labels_dir: str | os.PathLike[str] | None = None,
    judge_model: str = "",
    max_side: int = DEFAULT_MAX_SIDE,
) -> JudgeTools:
    """Build the four tools bound to an allow-list and a labels directory.

    Args:
        roots: Directories outside which the tools read and write nothing. None reads
            ``STRANDS_LABELS_ROOTS`` at each call (unset: any dataset root).
        labels_dir: Where the label sidecars live (default: each dataset's root).
        judge_model: Recorded as the judge block's ``model`` when the model passes none.
        max_side: Longest side of images sent to the model, in pixels.

    Returns:
        :class:`JudgeTools` (four strands ``DecoratedFunctionTool`` objects).

    Raises:
        UnsafeRootError: ``roots`` is a bare string or has a NUL byte or ``..``.
    """
    from strands import tool

    cfg = JudgeToolConfig(
        roots=normalise_allow_list(roots),
        labels_dir=None if labels_dir is None else Path(labels_dir),
        judge_model=judge_model,
        max_side=max_side,
    )

    @tool(name="load_episode")
    def load_episode(root: str, episode: JsonInt) -> dict[str, Any]:
        """Describe one episode of a LeRobot dataset before judging it.

        Returns the frame count, fps, duration, features, camera keys, state names and
        task strings of the episode, and whether a deterministic verdict and a judge
        label exist for it yet.

        Args:
            root: Directory of the LeRobot dataset (the one that holds meta/info.json).
            episode: The episode_index to describe (a non-negative integer).
        """
        return cfg.run("load_episode", episode, lambda: _load_episode(cfg, root, episode))

    @tool(name="sample_frames")
    def sample_frames(
        root: str, episode: JsonInt, n_frames: JsonInt = 4, include_images: JsonBool = False
    ) -> dict[str, Any]:
        """Sample evenly spaced frames of one episode to look at its execution.

        Frames round(i*(L-1)/(n-1)) for i = 0..n-1 (ties to even; first and last
        included; one frame means the last one). Always returns samples (frame_index,
        timestamp, state of each sampled frame; state null when the dataset has none)
        and, over the whole episode, max_state_delta (largest per-step state change) and
        rms_state_jerk (RMS of the third
        difference of the state / dt^3: high values ground jerky_motion) plus signals
        (idle_fraction, gripper_swings, nan_frames, duration_s; per state channel windowed
        jerk, kept one-frame steps the action does not explain, drift from the action;
        frozen runs of identical state; frame_stats: dark, flat or partly covered camera frames among 16
        sampled ones). With include_images, one
        image per camera per sampled frame follows, each preceded by a text label
        "frame F, camera K:".

        Args:
            root: Directory of the LeRobot dataset (the one that holds meta/info.json).
            episode: The episode_index to sample (a non-negative integer).
            n_frames: How many frames to sample, at least 1 (clamped to the episode
                length; at most 64 with images).
            include_images: Also return the decoded camera images of the sampled frames
                (all cameras, sorted by key); false gives a state-only answer. An error
                on a dataset with no camera.
        """
        return cfg.run("sample_frames", episode, lambda: _sample_frames(cfg, root, episode, n_frames, include_images))

    @tool(name="read_predicate_verdict")
    def read_predicate_verdict(root: str, episode: JsonInt) -> dict[str, Any]:
        """Read the authoritative deterministic verdict of one episode.

        The verdict (success, failure, steps, cumulative_reward, seed) was decided by the
        benchmark's predicates from simulator state. It is never overturned by the judge:
        call this first, then grade the execution on top of it.

        Args:
            root: Directory of the LeRobot dataset (the one that holds meta/info.json).
            episode: The episode_index whose verdict to read (a non-negative integer).
        """
        return cfg.run("read_predicate_verdict", episode, lambda: _read_predicate_verdict(cfg, root, episode))

    @tool(name="write_label")
    def write_label(
        root: str,
        episode: JsonInt,
        quality: QualityArg,
        failure_mode: FailureModeArg | None = None,
        note: str = "",
        success_opinion: JsonBool | None = None,
        judge_model: str = "",
    ) -> dict[str, Any]:
        """Write the judge label of one episode, once, after reading its verdict and frames.

        The label sits on top of the deterministic verdict and never changes it. A
        success_opinion that contradicts the verdict is recorded as a dispute for a
        human to review; the verdict stands.

        Args:
            root: Directory of the LeRobot dataset (the one that holds meta/info.json).
            episode: The episode_index to label (a non-negative integer).
            quality: Grade of the EXECUTION, not the outcome: one of low, medium, high. A
                failed episode executed cleanly can be medium or high; a jerky or lucky
                success can be low.
            failure_mode: What went wrong in the execution, or null when nothing did: one
                of jerky_motion, near_miss, camera_occlusion, wrong_but_lucky, drift,
                collision, incomplete, other. near_miss and wrong_but_lucky are legal on a
                successful episode.
            note: One or two sentences of evidence for the grade (what you saw, where).
            success_opinion: Your own read of whether the task succeeded, or null when you
                have no independent evidence. It never overturns the verdict.
            judge_model: Your model id, recorded with the label.
        """
        return cfg.run(
            "write_label",
            episode,
            lambda: _write_label(cfg, root, episode, quality, failure_mode, note, success_opinion, judge_model),
        )

    return JudgeTools(load_episode, sample_frames, read_predicate_verdict, write_label, cfg)


_DEFAULT_TOOLS = make_judge_tools()
_DEFAULT_TOOLS.config.track_writes = False  # a long-lived process must not accumulate writes

#: Module-level tools: allow-list from ``STRANDS_LABELS_ROOTS`` at each call.
load_episode = _DEFAULT_TOOLS.load_episode
sample_frames = _DEFAULT_TOOLS.sample_frames
read_predicate_verdict = _DEFAULT_TOOLS.read_predicate_verdict
write_label = _DEFAULT_TOOLS.write_label


def model_name(model: Any) -> str:
    """The name a judge label records for ``model``: the spec string, or the model's ``model_id``."""
    if isinstance(model, str):
        return model
    name = getattr(model, "judge_model_name", None)
    if isinstance(name, str):
        return name
    try:
        config = model.get_config() if model is not None else None
    except Exception:  # noqa: BLE001 - a name is a courtesy, never a reason to fail
        config = None
    if isinstance(config, dict) and isinstance(config.get("model_id"), str):
        return config["model_id"]
    return ""


def create_judge_agent(
    model: Any = None,
    system_prompt: str | None = None,
    *,
    roots: Iterable[str | os.PathLike[str]] | None = None,
    labels_dir: str | os.PathLike[str] | None = None,
    max_side: int = DEFAULT_MAX_SIDE,
    base_url: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    images: bool = True,
    max_requests: int | None = DEFAULT_MAX_REQUESTS,
    breaker: Any = None,
    **agent_kwargs: Any,
) -> Any:
    """A strands ``Agent`` that judges episodes with the four tools.

    Tool calls run one after another (``SequentialToolExecutor``): the doctrine's order
    (verdict, look, write once) is a sequence. Rule source: docs/judge.md, "Doctrine: two
    stages, one precedence".

    Args:
        model: A strands ``Model``, None (strands' default model) or a
            ``PROVIDER:MODEL_ID`` string (bedrock, anthropic, openai, gemini, litellm,
            ollama, llamacpp; see :func:`strands_robots.model_spec.build_model`).
        system_prompt: Replaces :data:`SYSTEM_PROMPT` (keep its doctrine).
        roots: Allow-list of directories the tools may read and write; None reads
            ``STRANDS_LABELS_ROOTS`` at each call.
        labels_dir: Where the label sidecars live (default: each dataset's root).
        max_side: Longest side of images sent to the model, in pixels.
        base_url: Server of a spec's provider, e.g. ``"http://localhost:8000/v1"`` for
            an OpenAI-compatible local server with ``"openai:MODEL"``.
        timeout: Seconds one model request may take (a spec's client; default 120).
        images: False: ``sample_frames`` never returns images (and says so).
        max_requests: Model requests one conversation may make (retries not counted)
            before it ends with ``RequestLimitError``; None: no limit.
        breaker: A run's :class:`~strands_robots.judges.retry.ServerBreaker` (shared by
            its agents), or None.
        **agent_kwargs: Passed to ``strands.Agent`` (``callback_handler``,
            ``retry_strategy``, ``tool_executor`` ...).

    Returns:
        The agent; ``agent.judge_tools`` holds the bound :class:`JudgeTools`. A model
        other than the offline judge is wrapped in
        :class:`~strands_robots.judges.wire.WireModel` (labelled images, each sent once,
        the request limit, the cost in ``agent.model.cost``).

    Raises:
        ModelSpecError: a bad spec or ``base_url``, or a provider whose SDK is missing
            (names the extra).
        UnsafeRootError: a malformed allow-list.
    """
    from strands import Agent
    from strands.tools.executors import SequentialToolExecutor

    from strands_robots.judges.wire import wire_model

    built = wire_model(model, base_url=base_url, timeout=timeout, max_requests=max_requests, breaker=breaker)
    tools = make_judge_tools(roots=roots, labels_dir=labels_dir, judge_model=model_name(model), max_side=max_side)
    tools.config.images = images
    agent_kwargs.setdefault("tool_executor", SequentialToolExecutor())
    agent = Agent(
        model=built,
        tools=list(tools),
        system_prompt=system_prompt if system_prompt is not None else SYSTEM_PROMPT,
        **agent_kwargs,
    )
    agent.judge_tools = tools  # type: ignore[attr-defined]
    return agent

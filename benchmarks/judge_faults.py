"""Fault-injection benchmark of the offline judge, built from real episodes.

    .venv/bin/python benchmarks/judge_faults.py [--out DIR] [--seed 0] [--repeats 3] [--controls N]

Takes real episodes from the shared datasets (``../shared/datasets`` beside the repo,
or ``$STRANDS_LABELS_SHARED/datasets``) and writes NEW LeRobot datasets (v2.1 and
v3.0; with H.264 video, shrunk, where the source has video) into a temp directory (or
``--out``). In each, every episode is either an untouched control (a copy of a source
episode) or a copy carrying one injected fault of known type and severity:

=============  ===================================================================  =================
fault          what is injected (mild / moderate / severe)                          expected label
=============  ===================================================================  =================
jerky          noise (1, 3, 8 x the channel's median frame step) and 0/2/6 spikes   jerky_motion
               on every arm channel (not the grippers)
collision      a state step (4 / 10 / 25 % of the channel range) on two arm          collision
               channels at a random frame, kept to the end; the action has no step
drift          a slow state-vs-action ramp (4 / 10 / 25 % of the channel range       drift
               at the end) on two arm channels with a matching action channel
frozen         the state repeats one row for 4 / 10 / 25 % of the episode (the       other
               action moves on), then jumps back to the true state
idle           a pause inserted (10 / 25 / 50 % of the length): state, action and    (none), below high
               video hold still
incomplete     truncation to 80 / 60 / 35 % of the length                           incomplete
occlusion      a region of the frame covered (a dark flat band over 40-60 % of the  camera_occlusion
               frame from one edge, mild and moderate) or the frame blacked out
               (severe), over 8 / 25 / 50 % of the episode (datasets with video only)
regrasp        1 / 2 / 3 extra cycles of a gripper to the far end of its travel and   near_miss
               back (a held grasp released and taken again; state and action)
=============  ===================================================================  =================

Controls are copies of the source episodes (by default twice as many as faulty
episodes: faults are a third of each dataset). Every episode gets a success verdict (teleoperated demonstrations). Expected quality:
``high`` for controls, ``medium`` for mild and moderate faults, ``low`` for severe
ones. The offline judge runs on each dataset (``run_judge``, the full tool path) and the
script prints per-fault recall by severity, the confusion matrix (expected class vs
judged class), false alarms on controls, agreement with its baseline and Cohen's kappa
for quality and failure_mode. Deterministic for a given ``--seed``. Nothing is written
outside the output directory; no dataset bytes are committed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests/synth.py lives beside the package
    sys.path.insert(0, str(REPO))

from tests.synth import LEROBOT_VIDEO  # noqa: E402
from tests.synth import write_dataset as synth_writer  # noqa: E402

FAULTS = ("jerky", "collision", "drift", "frozen", "idle", "incomplete", "occlusion", "regrasp")
SEVERITIES = ("mild", "moderate", "severe")
EXPECTED_MODE = {
    "control": None,
    "jerky": "jerky_motion",
    "collision": "collision",
    "drift": "drift",
    "frozen": "other",
    "idle": None,
    "incomplete": "incomplete",
    "occlusion": "camera_occlusion",
    "regrasp": "near_miss",
}
EXPECTED_QUALITY = {"control": "high", "mild": "medium", "moderate": "medium", "severe": "low"}
#: Default benchmark: (source dataset, output version, source episodes used: a count, the
#: lowest indices, or a tuple of indices).
#: ``lerobot-written-v30-video`` is the one shared dataset whose every episode has video, so
#: it is written twice (v2.1 and v3.0). Its episode 3 is left out: its arm channels carry
#: white noise ten times that of the other three (frame-step std 2.5-2.8 vs 0.26-0.30 state
#: units on all five arm joints), a genuinely jerky episode, not a clean control, and a
#: fault injected on it carries two faults.
PLAN: tuple[tuple[str, str, int | tuple[int, ...]], ...] = (
    ("g1-inspire-v21", "v2.1", 100),
    ("piper-act-v30-multifile", "v3.0", 55),
    ("lerobot-written-v30-video", "v2.1", (0, 1, 2)),
    ("lerobot-written-v30-video", "v3.0", (0, 1, 2)),
)
VIDEO_SIDE = 96  # longest side of the written video frames
#: Mild and moderate occlusion cover this share of the frame (a band from one edge).
COVER_SHARE = (0.4, 0.6)


@dataclass
class Episode:
    """One episode in memory: what the writer stores."""

    state: np.ndarray  # (L, D) float32
    action: np.ndarray | None  # (L, A) float32
    task: str
    video: dict[str, np.ndarray] = field(default_factory=dict)  # camera -> (L, H, W, 3) uint8
    fault: str = "control"
    severity: str = ""
    source: int = -1

    @property
    def length(self) -> int:
        return int(self.state.shape[0])


@dataclass
class Source:
    """A shared dataset's episodes and channel layout."""

    name: str
    fps: float
    state_names: list[str]
    action_names: list[str]
    episodes: list[Episode]
    cameras: list[str]


def shared_datasets() -> Path:
    """``$STRANDS_LABELS_SHARED/datasets``, else ``../shared/datasets`` beside the repository."""
    env = os.environ.get("STRANDS_LABELS_SHARED")
    base = Path(env) if env else REPO.parent / "shared"
    return base / "datasets"


def load_source(name: str, limit: int | Sequence[int], *, video: bool = True, root: Path | None = None) -> Source:
    """Read the ``limit`` lowest episodes (or the listed ones) of a shared dataset: state, action, shrunk video."""
    from strands_robots.dataset import open_dataset

    path = (root or shared_datasets()) / name
    ds = open_dataset(path)
    status = ds.video_status() if video else {}
    cameras = sorted(k for k, (present, referenced) in status.items() if referenced and present == referenced)
    columns = [c for c in ("observation.state", "action") if c in ds.features]
    episodes = []
    chosen = sorted(ds.episodes)[:limit] if isinstance(limit, int) else [int(i) for i in limit]
    for index in chosen:
        meta = ds.episodes[index]
        rows = ds.read_frames(index, columns)
        frames = {}
        for cam in cameras:
            images = ds.decode_frames(index, cam, list(range(meta.length)), max_side=VIDEO_SIDE)
            frames[cam] = _even(np.stack(images))
        episodes.append(
            Episode(
                np.asarray(rows["observation.state"], dtype=np.float32),
                np.asarray(rows["action"], dtype=np.float32) if "action" in rows else None,
                meta.tasks[0] if meta.tasks else "",
                frames,
                source=index,
            )
        )
    return Source(name, float(ds.fps), list(ds.state_names), list(ds.feature_names("action")), episodes, cameras)


def _even(frames: np.ndarray) -> np.ndarray:
    """Crop to even height and width (yuv420p needs them)."""
    h, w = frames.shape[1] // 2 * 2, frames.shape[2] // 2 * 2
    return np.ascontiguousarray(frames[:, :h, :w])


# ----------------------------------------------------------------------------- faults


def _grippers(names: Sequence[str]) -> list[list[int]]:
    from strands_robots.signals.gripper import gripper_groups

    return list(gripper_groups(names).values())


def _arm(source: Source) -> list[int]:
    grip = {i for g in _grippers(source.state_names) for i in g}
    return [i for i in range(len(source.state_names)) if i not in grip]


def _pairs(source: Source, ep: Episode) -> list[tuple[int, int]]:
    """State/action channel pairs of ``ep``: by name, then by correlation (as the judge's signals pair them)."""
    from strands_robots.signals.motion import correlated_action_channels, match_action_channels

    if ep.action is None:
        return []
    width = len(source.state_names)
    pairs = match_action_channels(source.state_names, source.action_names, width, len(source.action_names))
    grip = [i for g in _grippers(source.state_names) for i in g]
    return sorted(pairs + correlated_action_channels(ep.state, ep.action, pairs, skip=grip))


def _moving(state: np.ndarray, channels: Sequence[int], k: int) -> list[int]:
    """The ``k`` channels of ``channels`` with the largest range (the ones the task moves)."""
    ranges = np.ptp(state[:, channels], axis=0)
    return [channels[i] for i in np.argsort(-ranges)[:k]]


def _range(state: np.ndarray, c: int) -> float:
    lo, hi = np.percentile(state[:, c], [1, 99])
    return float(max(hi - lo, 1e-6))


#: Faults of the operator's motion: with ``demonstration=True`` the action stream carries them too.
OPERATOR_FAULTS = ("jerky", "collision", "drift")


def inject(
    ep: Episode,
    fault: str,
    severity: str,
    source: Source,
    rng: np.random.Generator,
    *,
    demonstration: bool = False,
) -> Episode:
    """A copy of ``ep`` carrying one fault (see the module table).

    ``demonstration=True``: a bad demonstration rather than a bad recording of a good one:
    the change a fault of ``OPERATOR_FAULTS`` makes to a state channel is made to its paired
    action channel too (scaled by the ratio of their ranges), so the commands a policy learns
    from carry the operator's jerk, the knock and the drift. The other faults already corrupt
    what a policy learns (a frozen state beside moving commands, a pause, a truncation, extra
    gripper cycles in both streams); occlusion touches only the video.
    """
    level = SEVERITIES.index(severity)
    state = ep.state.astype(np.float64).copy()
    action = None if ep.action is None else ep.action.astype(np.float64).copy()
    video = {k: v.copy() for k, v in ep.video.items()}
    length = ep.length
    arm = _arm(source)
    pairs = _pairs(source, ep)
    if fault == "jerky":
        for c in arm:
            step = np.median(np.abs(np.diff(state[:, c])))
            step = max(step, 0.002 * _range(state, c))
            state[:, c] += rng.normal(0, (1.0, 3.0, 8.0)[level] * step, length)
        for _ in range((0, 2, 6)[level]):
            c = int(rng.choice(arm))
            f = int(rng.integers(1, length - 1))
            state[f, c] += rng.choice([-1, 1]) * 0.15 * _range(state, c)
    elif fault == "collision":
        f = int(rng.integers(length // 4, 3 * length // 4))
        for c in _moving(state, arm, 2):
            state[f:, c] += rng.choice([-1, 1]) * (0.04, 0.10, 0.25)[level] * _range(state, c)
    elif fault == "drift":
        matched = [i for i, _ in pairs if i in set(arm)] or arm
        ramp = np.linspace(0, 1, length)
        for c in _moving(state, matched, 2):
            state[:, c] += rng.choice([-1, 1]) * (0.04, 0.10, 0.25)[level] * _range(state, c) * ramp
    elif fault == "frozen":
        run = max(3, int(round((0.04, 0.10, 0.25)[level] * length)))
        start = int(rng.integers(length // 5, max(length // 5 + 1, length - run - 2)))
        state[start : start + run] = state[start]
    elif fault == "idle":
        pause = max(2, int(round((0.10, 0.25, 0.50)[level] * length)))
        at = int(rng.integers(length // 4, 3 * length // 4))
        state = np.concatenate([state[:at], np.repeat(state[at : at + 1], pause, 0), state[at:]])
        if action is not None:
            action = np.concatenate([action[:at], np.repeat(action[at : at + 1], pause, 0), action[at:]])
        video = {k: np.concatenate([v[:at], np.repeat(v[at : at + 1], pause, 0), v[at:]]) for k, v in video.items()}
    elif fault == "incomplete":
        keep = max(2, int(round((0.80, 0.60, 0.35)[level] * length)))
        state = state[:keep]
        action = None if action is None else action[:keep]
        video = {k: v[:keep] for k, v in video.items()}
    elif fault == "occlusion":
        # the camera with the most texture: a camera filming a blank wall cannot show a cover
        cam = max(sorted(video), key=lambda k: float(video[k][:: max(1, length // 8)].std()))
        span = max(1, int(round((0.08, 0.25, 0.50)[level] * length)))
        start = int(rng.integers(0, length - span + 1))
        frames = video[cam]
        if level == 2:
            frames[start : start + span] = 0  # blacked out
        else:  # a hand or cloth over part of the lens: a dark, flat region from one edge
            shade = rng.integers(20, 50, size=3).astype(np.uint8)
            height, width = frames.shape[1:3]
            share = float(rng.uniform(*COVER_SHARE))
            edge = int(rng.integers(4))  # 0 top, 1 bottom, 2 left, 3 right
            rows, cols = slice(None), slice(None)
            if edge < 2:
                n = max(1, int(round(share * height)))
                rows = slice(0, n) if edge == 0 else slice(height - n, height)
            else:
                n = max(1, int(round(share * width)))
                cols = slice(0, n) if edge == 2 else slice(width - n, width)
            frames[start : start + span, rows, cols] = shade
    elif fault == "regrasp":
        groups = _grippers(source.state_names)
        group = max(groups, key=lambda g: float(np.ptp(state[:, g]))) if groups else []
        if group:
            cycles = (1, 2, 3)[level]
            lo = np.percentile(state[:, group], 5, axis=0)
            hi = np.percentile(state[:, group], 95, axis=0)
            closure = state[:, group].mean(axis=1)
            middle = float((lo.mean() + hi.mean()) / 2)
            width = max(6, length // 16)
            span = np.arange(width)
            bump = np.sin(np.pi * span / (width - 1)) ** 2  # 0 -> 1 -> 0
            starts = np.linspace(length * 0.1, length * 0.9 - width, cycles).astype(int)
            a_index = {i: j for i, j in pairs}
            for s in starts:
                # to the far end of the gripper's travel and back: a hand that holds lets go and
                # grasps again, an open one closes on nothing and opens again
                far_low = float(closure[s + width // 2]) >= middle
                for c_pos, c in enumerate(group):
                    target = lo[c_pos] if far_low else hi[c_pos]
                    base = state[s : s + width, c]
                    state[s : s + width, c] = base + (target - base) * bump
                    if action is not None and c in a_index:
                        j = a_index[c]
                        base_a = action[s : s + width, j]
                        action[s : s + width, j] = base_a + (target - base_a) * bump
    else:
        raise ValueError(f"unknown fault {fault!r}")
    if demonstration and fault in OPERATOR_FAULTS and action is not None:
        clean = ep.state.astype(np.float64)
        delta = state - clean
        for i, j in pairs:
            with np.errstate(invalid="ignore", divide="ignore"):
                together = np.corrcoef(np.diff(clean[:, i]), np.diff(action[:, j]))[0, 1]
            sign = -1.0 if np.isfinite(together) and together < 0 else 1.0  # a channel commanded in reverse
            action[:, j] += delta[:, i] * sign * _range(action, j) / _range(clean, i)
    return replace(
        ep,
        state=state.astype(np.float32),
        action=None if action is None else action.astype(np.float32),
        video=video,
        fault=fault,
        severity=severity,
    )


def build_episodes(
    source: Source,
    *,
    controls: int | None,
    repeats: int,
    seed: int,
    faults: Sequence[str] = FAULTS,
    severities: Sequence[str] = SEVERITIES,
) -> list[Episode]:
    """Controls, then ``repeats`` episodes per fault and severity, in a seeded shuffled order.

    ``controls=None``: twice as many controls as faulty episodes, so faults are a third of
    the dataset (the judge grades each episode against the rest of its dataset, which must
    be mostly typical).
    """
    rng = np.random.default_rng(seed)
    faults = [f for f in faults if f != "occlusion" or source.cameras]
    if not any(_grippers(source.state_names)):
        faults = [f for f in faults if f != "regrasp"]
    faulty = []
    for fault in faults:
        for severity in severities:
            for _ in range(repeats):
                ep = source.episodes[int(rng.integers(len(source.episodes)))]
                faulty.append(inject(ep, fault, severity, source, rng))
    count = 2 * len(faulty) if controls is None else controls
    out = [replace(source.episodes[i % len(source.episodes)]) for i in range(count)] + faulty
    order = rng.permutation(len(out))
    return [out[i] for i in order]


# ----------------------------------------------------------------------------- writers


def write_dataset(root: Path, source: Source, episodes: Sequence[Episode], version: str) -> Path:
    """Write ``episodes`` as a LeRobot ``version`` ("v2.1" or "v3.0") dataset at ``root``
    (``tests/synth.py``'s writer: one row group per episode, lossy H.264 with a keyframe
    every 2 frames, as LeRobot writes), and the injected faults beside it (``ROOT.truth.json``)."""
    if version not in ("v2.1", "v3.0"):
        raise ValueError(f"version must be v2.1 or v3.0, got {version!r}")
    synth_writer(
        root,
        episodes,
        fps=source.fps,
        layout="v2" if version == "v2.1" else "v3",
        codebase_version=version,
        state_names=source.state_names,
        action_names=source.action_names,
        cameras=source.cameras,
        video_options=LEROBOT_VIDEO,
        robot_type=f"faults-from-{source.name}",
    )
    truth = [
        {"episode": e, "fault": ep.fault, "severity": ep.severity, "source": ep.source} for e, ep in enumerate(episodes)
    ]
    (root.parent / f"{root.name}.truth.json").write_text(json.dumps(truth, indent=1))
    return root


# ----------------------------------------------------------------------------- scoring


def judged_class(judge: dict[str, Any]) -> str:
    """The class a judge block names: its failure_mode, ``idle`` for a mode-less grade below high, else ``none``."""
    if judge.get("failure_mode"):
        return str(judge["failure_mode"])
    return "idle" if judge.get("quality") != "high" else "none"


def expected_class(fault: str) -> str:
    """The class a correct judge names for ``fault``."""
    if fault == "idle":
        return "idle"
    return EXPECTED_MODE[fault] or "none"


def kappa(pairs: Sequence[tuple[str, str]]) -> tuple[float, float, float]:
    """``(agreement, baseline, Cohen's kappa)`` of ``(expected, judged)`` pairs.

    Baseline: agreement of always answering the most common expected class.
    """
    n = len(pairs)
    if not n:
        return float("nan"), float("nan"), float("nan")
    agree = sum(1 for a, b in pairs if a == b) / n
    truth = Counter(a for a, _ in pairs)
    judged = Counter(b for _, b in pairs)
    chance = sum(truth[k] * judged.get(k, 0) for k in truth) / (n * n)
    baseline = truth.most_common(1)[0][1] / n
    k = (agree - chance) / (1 - chance) if chance < 1 else float("nan")
    return agree, baseline, k


def score(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recall per fault and severity, confusion, false alarms, agreement and kappa of judged ``rows``."""
    recall: dict[str, dict[str, list[int]]] = {}
    confusion: dict[str, Counter] = {}
    quality_pairs, mode_pairs = [], []
    for r in rows:
        fault, severity, judge = r["fault"], r["severity"], r["judge"]
        exp = expected_class(fault)
        got = judged_class(judge) if judge else "error"
        confusion.setdefault(fault if fault == "control" else f"{fault}", Counter())[got] += 1
        if fault != "control":
            hit = recall.setdefault(fault, {}).setdefault(severity, [0, 0])
            hit[0] += int(got == exp)
            hit[1] += 1
        quality_pairs.append(
            (
                EXPECTED_QUALITY["control" if fault == "control" else severity],
                judge.get("quality", "error") if judge else "error",
            )
        )
        mode_pairs.append((exp, got))
    controls = [r for r in rows if r["fault"] == "control"]
    alarms = sum(1 for r in controls if not r["judge"] or r["judge"].get("quality") != "high")
    return {
        "recall": {f: {s: (h / n if n else None, n) for s, (h, n) in by.items()} for f, by in recall.items()},
        "confusion": {k: dict(v.most_common()) for k, v in confusion.items()},
        "false_alarms": (alarms, len(controls)),
        "quality": kappa(quality_pairs),
        "failure_mode": kappa(mode_pairs),
    }


def run_benchmark(
    out: Path,
    plan: Sequence[tuple[str, str, int | tuple[int, ...]]] = PLAN,
    *,
    controls: int | None = None,
    repeats: int = 3,
    seed: int = 0,
    shared: Path | None = None,
    verbose: bool = True,
    faults: Sequence[str] = FAULTS,
    severities: Sequence[str] = SEVERITIES,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Build every dataset of ``plan`` under ``out``, judge it offline, and score all episodes."""
    from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
    from strands_robots.judges import run_judge

    rows: list[dict[str, Any]] = []
    for k, (name, version, limit) in enumerate(plan):
        t0 = time.perf_counter()
        source = load_source(name, limit, root=shared)
        episodes = build_episodes(
            source, controls=controls, repeats=repeats, seed=seed + k, faults=faults, severities=severities
        )
        root = write_dataset(out / f"{name}-faults-{version}", source, episodes, version)
        built = time.perf_counter() - t0
        record_deterministic_verdicts(
            root,
            [{"episode": e, "success": True, "steps": ep.length} for e, ep in enumerate(episodes)],
            benchmark="faults",
        )
        report = run_judge(root)
        records = read_labels(root)["episodes"]
        for e, ep in enumerate(episodes):
            judge = records.get(str(e), {}).get("judge")
            rows.append(
                {
                    "dataset": name,
                    "version": version,
                    "episode": e,
                    "fault": ep.fault,
                    "severity": ep.severity,
                    "source": ep.source,
                    "judge": judge,
                }
            )
        if verbose:
            print(
                f"{name} -> {root.name}: {len(episodes)} episodes ({version}, {len(source.cameras)} camera(s)), "
                f"built in {built:.1f} s, judged in {report.seconds:.1f} s, {len(report.failed)} failed"
            )
    return rows, score(rows)


def print_scores(result: dict[str, Any]) -> None:
    """Print the figures of :func:`score`."""
    print("\nrecall (judged class == expected class) by severity:")
    print(f"  {'fault':12s} " + " ".join(f"{s:>14s}" for s in SEVERITIES))
    for fault in FAULTS:
        by = result["recall"].get(fault)
        if not by:
            continue
        cells = [f"{by[s][0]:.2f} ({by[s][1]:3d})" if s in by else "-" for s in SEVERITIES]
        print(f"  {fault:12s} " + " ".join(f"{c:>14s}" for c in cells))
    print("\nconfusion (injected -> judged class):")
    for fault, judged in result["confusion"].items():
        print(f"  {fault:12s} {judged}")
    alarms, n = result["false_alarms"]
    print(f"\nfalse alarms on untouched controls (graded below high): {alarms}/{n} ({alarms / max(n, 1):.1%})")
    for key in ("quality", "failure_mode"):
        agree, base, k = result[key]
        print(f"{key}: agreement {agree:.3f}, baseline {base:.3f}, Cohen's kappa {k:.3f}")


@contextlib.contextmanager
def output_dir(out: Path | None, prefix: str) -> Iterator[Path]:
    """``out`` (created), or a temp directory removed afterwards when ``out`` is None."""
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        yield out
        return
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        yield Path(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="Keep the datasets here (default: a temp dir).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="Episodes per fault and severity per dataset.")
    parser.add_argument(
        "--controls",
        type=int,
        default=None,
        help="Untouched control episodes per dataset (default: twice the faulty ones).",
    )
    parser.add_argument("--json", type=Path, default=None, help="Also write every judged row here.")
    args = parser.parse_args()
    with output_dir(args.out, "judge-faults-") as out:
        rows, result = run_benchmark(out, controls=args.controls, repeats=args.repeats, seed=args.seed)
        print_scores(result)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

"""Training value of the filter: a behaviour-cloning policy trained on all, filtered and clean episodes.

    .venv/bin/python benchmarks/training_value.py [--seeds 0 1 2] [--shares 0.1 0.25 0.4]
        [--datasets g1-inspire-v21 ...] [--per-fault] [--labels FILE|ROOT] [--out DIR]

From real shared episodes (``../shared/datasets`` beside the repo, or
``$STRANDS_LABELS_SHARED/datasets``; read only) it writes, per dataset, fault share and
seed, a NEW LeRobot training dataset (state and action, no video) into a temp directory
(or ``--out``):

1. **Split.** Per task, a fifth of the source episodes (at least one when the task has two
   or more) is held out for evaluation, untouched; the others are the training sources.
   No episode is in both. A dataset with fewer than ``MIN_TRAIN`` training sources gets
   copies of them (``lerobot-written-v30-video`` has three usable episodes).
2. **Faults.** ``share`` of the training episodes carry one fault of
   ``benchmarks/judge_faults.py``'s generator (``inject(..., demonstration=True)``: jerky,
   collision, drift, frozen, idle, incomplete, regrasp; moderate or severe), with the
   action stream corrupted as a bad demonstration's would be; the rest are untouched.
   ``--per-fault``: also, at 25 %, one dataset per fault type with only that type.
3. **Lists.** ``all`` (every training episode); ``medium`` and ``high``: the list
   ``strands-labels filter --min-quality medium|high`` returns
   (:func:`strands_robots.episode_labels.filter_episodes` with the command's defaults)
   after the offline judge (``run_judge``) labelled the training dataset, or the labels
   given by ``--labels``; ``oracle``: the untouched training episodes.
4. **Policy.** The same seeded MLP for every list (:class:`Policy`): ``observation.state``
   and its last ``HISTORY`` frame-to-frame changes -> the next ``CHUNK`` actions, numpy,
   CPU, a fixed number of Adam steps.
5. **Score.** On the held-out episodes: action MSE (each action channel in units of its
   standard deviation over the clean training sources, so every list is scored in the same
   units) and the 95th percentile of the per-step error (mean squared error of one step's
   chunk), and per list pair the share of the all-vs-oracle gap the filter recovers,
   ``(all - filtered) / (all - oracle)``.

``--labels FILE|ROOT`` scores other labels instead of the offline judge's: FILE is one
``episode_labels.json`` (run one dataset, share and seed with it), ROOT a directory holding
one labels directory per training dataset, named as this script names the datasets it
writes (``--out DIR`` keeps them, with the names, for a judge to label).

Deterministic for given seeds. Nothing is written outside the output directory; no dataset
bytes are committed. The results are in ``docs/judge.md`` ("Training value").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    # small matrices on a shared machine: BLAS threads only contend (28 s instead of 1 s for 300 steps)
    os.environ.setdefault(_threads, "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO, REPO / "benchmarks"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import judge_faults as jf  # noqa: E402  (the one fault generator)

#: (shared dataset, source episodes: a count of the lowest indices, or a tuple of indices).
#: ``lerobot-written-v30-video``'s episode 3 is left out as in the fault benchmark (a jerky episode).
PLAN: tuple[tuple[str, int | tuple[int, ...]], ...] = (
    ("g1-inspire-v21", 100),
    ("piper-act-v30-multifile", 55),
    ("lerobot-written-v30-video", (0, 1, 2)),
)
TRAIN_FAULTS = ("jerky", "collision", "drift", "frozen", "idle", "incomplete", "regrasp")
FAULT_SEVERITIES = ("moderate", "severe")
HELD_OUT_SHARE = 0.2
MIN_TRAIN = 24
HISTORY = 2  # frame-to-frame state changes given with the current state
CHUNK = 4  # actions predicted per step
HIDDEN = 64
STEPS = 800
BATCH = 128
LEARNING_RATE = 2e-3
LISTS = ("all", "medium", "high", "oracle")


# ----------------------------------------------------------------------------- datasets


def split_by_task(
    tasks: Sequence[str], rng: np.random.Generator, share: float = HELD_OUT_SHARE
) -> tuple[list[int], list[int]]:
    """``(train, held_out)`` positions of ``tasks``: per task, ``round(share * n)`` episodes held out
    (at least one when the task has two or more, none when it has one); no position in both."""
    train: list[int] = []
    held: list[int] = []
    for task in sorted(set(tasks)):
        members = [k for k, t in enumerate(tasks) if t == task]
        order = [members[i] for i in rng.permutation(len(members))]
        count = 0 if len(members) < 2 else max(1, int(round(share * len(members))))
        held += order[:count]
        train += order[count:]
    return sorted(train), sorted(held)


def faulty_positions(count: int, share: float, rng: np.random.Generator) -> list[int]:
    """``round(share * count)`` distinct positions of ``count`` training episodes, seeded."""
    return sorted(int(i) for i in rng.permutation(count)[: int(round(share * count))])


def build_training(
    source: jf.Source,
    train: Sequence[int],
    share: float,
    rng: np.random.Generator,
    faults: Sequence[str] = TRAIN_FAULTS,
) -> list[jf.Episode]:
    """The training episodes: copies of the training sources (at least ``MIN_TRAIN``), ``share``
    of them carrying one fault (types in turn, moderate or severe) as a bad demonstration."""
    usable = [f for f in faults if f != "regrasp" or any(jf._grippers(source.state_names))]
    count = max(len(train), MIN_TRAIN)
    episodes = [replace(source.episodes[train[i % len(train)]]) for i in range(count)]
    for n, k in enumerate(faulty_positions(count, share, rng)):
        fault = usable[n % len(usable)]
        severity = FAULT_SEVERITIES[int(rng.integers(len(FAULT_SEVERITIES)))]
        episodes[k] = jf.inject(episodes[k], fault, severity, source, rng, demonstration=True)
    return episodes


# ----------------------------------------------------------------------------- policy


def features(state: np.ndarray, history: int = HISTORY) -> np.ndarray:
    """``(L, D * (1 + history))``: the state and its last ``history`` frame-to-frame changes
    (``state[t] - state[t-1]``, ..., zero before the first frame)."""
    state = np.asarray(state, dtype=np.float64)
    change = np.diff(state, axis=0, prepend=state[:1])
    parts = [state] + [
        np.concatenate([np.zeros((lag, state.shape[1])), change[: len(change) - lag]]) for lag in range(history)
    ]
    return np.concatenate(parts, axis=1)


def targets(action: np.ndarray, chunk: int = CHUNK) -> np.ndarray:
    """``(L - chunk + 1, A * chunk)``: the actions of frames ``t .. t + chunk - 1`` per step ``t``."""
    action = np.asarray(action, dtype=np.float64)
    steps = len(action) - chunk + 1
    return np.concatenate([action[k : k + steps] for k in range(chunk)], axis=1)


def samples(episodes: Sequence[jf.Episode]) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and chunked targets of every step of ``episodes`` that has a whole chunk ahead."""
    xs, ys = [], []
    for ep in episodes:
        if ep.action is None or ep.length < CHUNK:
            continue
        y = targets(ep.action)
        xs.append(features(ep.state)[: len(y)])
        ys.append(y)
    return np.concatenate(xs), np.concatenate(ys)


@dataclass
class Policy:
    """A two-hidden-layer ReLU MLP trained with Adam on normalised inputs and targets."""

    weights: list[np.ndarray]
    x_mean: np.ndarray
    x_std: np.ndarray
    y_mean: np.ndarray
    y_std: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, seed: int, steps: int = STEPS) -> Policy:
        """Train on ``x -> y`` (seeded initialisation and batches)."""
        rng = np.random.default_rng(seed)
        x_mean, x_std = x.mean(0), x.std(0) + 1e-6
        y_mean, y_std = y.mean(0), y.std(0) + 1e-6
        xn, yn = (x - x_mean) / x_std, (y - y_mean) / y_std
        sizes = [x.shape[1], HIDDEN, HIDDEN, y.shape[1]]
        weights: list[np.ndarray] = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=True):
            weights += [rng.normal(0, math.sqrt(2.0 / a), (a, b)), np.zeros(b)]
        m = [np.zeros_like(w) for w in weights]
        v = [np.zeros_like(w) for w in weights]
        for t in range(1, steps + 1):
            pick = rng.integers(0, len(xn), BATCH)
            grads = _gradients(weights, xn[pick], yn[pick])
            for k, g in enumerate(grads):
                m[k] = 0.9 * m[k] + 0.1 * g
                v[k] = 0.999 * v[k] + 0.001 * g * g
                weights[k] -= LEARNING_RATE * (m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
        return cls(weights, x_mean, x_std, y_mean, y_std)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Chunked actions for inputs ``x``."""
        h = (x - self.x_mean) / self.x_std
        w = self.weights
        for k in range(0, len(w) - 2, 2):
            h = np.maximum(h @ w[k] + w[k + 1], 0.0)
        return (h @ w[-2] + w[-1]) * self.y_std + self.y_mean


def _gradients(w: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Gradients of the mean squared error of the MLP ``w`` on one batch."""
    activations = [x]
    h = x
    for k in range(0, len(w) - 2, 2):
        h = np.maximum(h @ w[k] + w[k + 1], 0.0)
        activations.append(h)
    out = h @ w[-2] + w[-1]
    delta = 2.0 * (out - y) / y.size
    grads: list[np.ndarray] = [np.zeros(0)] * len(w)
    for k in range(len(w) - 2, -1, -2):
        a = activations[k // 2]
        grads[k], grads[k + 1] = a.T @ delta, delta.sum(0)
        if k:
            delta = (delta @ w[k].T) * (a > 0)
    return grads


def step_errors(policy: Policy, episodes: Sequence[jf.Episode], scale: np.ndarray) -> np.ndarray:
    """Per step of ``episodes``: the mean squared error of the predicted chunk, each action
    channel divided by ``scale`` (its clean standard deviation)."""
    x, y = samples(episodes)
    error = (policy.predict(x) - y) / np.tile(scale, CHUNK)
    return np.mean(error**2, axis=1)


def gap_recovered(all_: float, filtered: float, oracle: float) -> float | None:
    """``(all - filtered) / (all - oracle)``: 1 when the filtered list trains as well as the clean
    one, 0 when as badly as all episodes; None when all and oracle do not differ."""
    gap = all_ - oracle
    return None if gap == 0 or not math.isfinite(gap) else (all_ - filtered) / gap


# ----------------------------------------------------------------------------- lists


def filtered_lists(root: Path, labels_dir: Path | None) -> dict[str, list[int]]:
    """``strands-labels filter --min-quality medium|high`` on ``root`` (the command's defaults)."""
    from strands_robots.episode_labels import filter_episodes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            q: [int(e) for e in filter_episodes(root, min_quality=q, labels_dir=labels_dir)] for q in ("medium", "high")
        }


def labels_for(labels: Path | None, name: str) -> Path | None:
    """The labels directory of the training dataset ``name`` under ``--labels`` (None: judge offline)."""
    if labels is None:
        return None
    if labels.is_file():
        return labels.parent
    return labels / name if (labels / name).is_dir() else labels


def run_one(
    out: Path,
    source: jf.Source,
    *,
    share: float,
    seed: int,
    faults: Sequence[str] = TRAIN_FAULTS,
    tag: str = "mixed",
    labels: Path | None = None,
) -> dict[str, Any]:
    """Build one training dataset, get the lists, train one policy per list and score them."""
    from strands_robots.episode_labels import record_deterministic_verdicts
    from strands_robots.judges import run_judge

    rng = np.random.default_rng(seed)
    tasks = [ep.task for ep in source.episodes]
    train, held = split_by_task(tasks, rng)
    episodes = build_training(source, train, share, rng, faults)
    name = f"{source.name}-{tag}-{int(round(share * 100))}-s{seed}"
    root = jf.write_dataset(out / name, source, episodes, "v3.0")
    labels_dir = labels_for(labels, name)
    if labels_dir is None:
        record_deterministic_verdicts(
            root, [{"episode": e, "success": True} for e in range(len(episodes))], benchmark="training_value"
        )
        run_judge(root)
    lists = filtered_lists(root, labels_dir)
    lists["all"] = list(range(len(episodes)))
    lists["oracle"] = [e for e, ep in enumerate(episodes) if ep.fault == "control"]
    clean = [source.episodes[i] for i in train]
    scale = np.concatenate([ep.action for ep in clean]).std(0) + 1e-6
    evaluation = [source.episodes[i] for i in held]
    result: dict[str, Any] = {
        "dataset": source.name,
        "share": share,
        "seed": seed,
        "faults": tag,
        "train_episodes": len(episodes),
        "held_out": [source.episodes[i].source for i in held],
        "faulty": {str(e): f"{ep.fault}/{ep.severity}" for e, ep in enumerate(episodes) if ep.fault != "control"},
    }
    for key in LISTS:
        chosen = [episodes[e] for e in lists[key]]
        if not chosen:
            result[key] = {"episodes": 0, "mse": None, "p95": None}
            continue
        x, y = samples(chosen)
        policy = Policy.fit(x, y, seed)
        errors = step_errors(policy, evaluation, scale)
        kept_faulty = sum(1 for ep in chosen if ep.fault != "control")
        result[key] = {
            "episodes": len(chosen),
            "faulty_kept": kept_faulty,
            "mse": float(errors.mean()),
            "p95": float(np.percentile(errors, 95)),
        }
    for key in ("medium", "high"):
        for metric in ("mse", "p95"):
            values = [result[k][metric] for k in ("all", key, "oracle")]
            result[key][f"recovered_{metric}"] = None if None in values else gap_recovered(*values)
    return result


# ----------------------------------------------------------------------------- report


def _spread(values: Sequence[float | None]) -> str:
    known = [v for v in values if v is not None and math.isfinite(v)]
    if not known:
        return "n/a"
    if len(known) == 1:
        return f"{known[0]:.2f}"
    return f"{np.mean(known):.2f} ({min(known):.2f}..{max(known):.2f})"


def table(results: Sequence[dict[str, Any]], by: str = "share") -> str:
    """A markdown table: per dataset and ``by`` (share or fault type), the mean over seeds of
    MSE and p95 per list, and the share of the gap recovered (mean, min..max over seeds)."""
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["dataset"], r[by]), []).append(r)
    head = (
        f"| dataset | {by} | seeds | MSE all / medium / high / oracle | p95 all / medium / high / oracle "
        "| faulty kept (medium, high, of) | gap recovered MSE: medium; high | gap recovered p95: medium; high |"
    )
    lines = [head, "|" + "---|" * 8]
    for (dataset, key), rows in groups.items():

        def mean(k: str, metric: str, rows: list[dict[str, Any]] = rows) -> str:
            values = [r[k][metric] for r in rows if r[k][metric] is not None]
            return f"{np.mean(values):.3f}" if values else "-"

        kept = (
            f"{np.mean([r['medium']['faulty_kept'] for r in rows]):.1f}, "
            f"{np.mean([r['high']['faulty_kept'] for r in rows]):.1f} of "
            f"{np.mean([len(r['faulty']) for r in rows]):.1f}"
        )
        label = f"{key:.0%}" if isinstance(key, float) else str(key)
        lines.append(
            f"| {dataset} | {label} | {len(rows)} | "
            + " / ".join(mean(k, "mse") for k in LISTS)
            + " | "
            + " / ".join(mean(k, "p95") for k in LISTS)
            + f" | {kept} | "
            + "; ".join(_spread([r[k]["recovered_mse"] for r in rows]) for k in ("medium", "high"))
            + " | "
            + "; ".join(_spread([r[k]["recovered_p95"] for r in rows]) for k in ("medium", "high"))
            + " |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--shares", type=float, nargs="*", default=[0.1, 0.25, 0.4], help="Fault shares (none: --per-fault only)."
    )
    parser.add_argument("--datasets", nargs="+", default=[name for name, _ in PLAN])
    parser.add_argument("--per-fault", action="store_true", help="Also one dataset per fault type at 25 %%.")
    parser.add_argument("--labels", type=Path, default=None, help="Score these labels instead of the offline judge's.")
    parser.add_argument("--out", type=Path, default=None, help="Keep the datasets here (default: a temp dir).")
    parser.add_argument("--json", type=Path, default=None, help="Also write every result row here.")
    args = parser.parse_args(argv)
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    plan = [(name, limit) for name, limit in PLAN if name in args.datasets]
    results: list[dict[str, Any]] = []
    with jf.output_dir(args.out, "training-value-") as out:
        for name, limit in plan:
            source = jf.load_source(name, limit, video=False)
            runs: list[tuple[float, Sequence[str], str]] = [(s, TRAIN_FAULTS, "mixed") for s in args.shares]
            if args.per_fault:
                runs += [
                    (0.25, (f,), f) for f in TRAIN_FAULTS if f != "regrasp" or any(jf._grippers(source.state_names))
                ]
            for share, faults, tag in runs:
                for seed in args.seeds:
                    t0 = time.perf_counter()
                    r = run_one(out, source, share=share, seed=seed, faults=faults, tag=tag, labels=args.labels)
                    results.append(r)
                    print(
                        f"{name} {tag} {share:.0%} seed {seed}: "
                        + ", ".join(
                            f"{k} {r[k]['episodes']} ep mse {r[k]['mse']:.3f}" for k in LISTS if r[k]["mse"] is not None
                        )
                        + f" ({time.perf_counter() - t0:.1f} s)",
                        flush=True,
                    )
        mixed = [r for r in results if r["faults"] == "mixed"]
        print("\nTraining value by fault share (mean over seeds; gap recovered: mean (min..max)):\n")
        print(table(mixed, "share"))
        per_fault = [r for r in results if r["faults"] != "mixed"]
        if per_fault:
            print("\nBy fault type at 25 %:\n")
            print(table(per_fault, "faults"))
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""This package against strands-robots 0.5.3, side by side in one run, on the same sidecars.

Each measurement runs in a fresh process of the implementation's own interpreter (the two
ship a ``strands_robots`` package, so each lives in its own venv) and prints the wall time
of the operation and the process's peak RSS (``VmHWM``). Both implementations run on
identical copies of the same generated files, alternately, ``--repeat`` times; the table
gives medians. Operations:

- ``import``: ``import strands_robots.episode_labels`` (time includes interpreter start-up
  is excluded: measured inside the child around the import).
- ``filter``: a cold ``filter_episodes`` (first call in the process, no index file) on a
  sidecar another tool wrote (``json.dump(indent=2, sort_keys=True)``).
- ``filter_meta``: the same with LeRobot ``meta/`` beside the sidecar, on a sidecar this
  package recorded (so its records carry dataset fingerprints and are checked for staleness),
  after an untimed ``stale_episodes`` in the same directory (whatever it leaves beside the
  sidecar: the fingerprint cache in earlier versions, the label index file of a sidecar of
  8 MB or more now; 0.5.3 makes no such check).
- ``filter_meta_cold``: the same without that first call.
- ``msgspec``: the floor for ``filter``: a typed msgspec decode of the same bytes into
  structs holding only what the filter needs, and the filter loop.
- ``read``: ``read_labels``.
- ``annotate1``: one ``annotate_episode`` in a process (start to exit, so a fold at exit counts).
- ``verdicts`` / ``verdicts_meta``: ``record_deterministic_verdicts`` of every episode in one
  call, on a new sidecar, without and with ``meta/``.
- ``annotate_loop``: ``--loop`` ``annotate_episode`` calls in one process on a 1,000-episode
  sidecar, per call, after one untimed first call (which parses the file). ``fsync`` is the
  floor: one fsynced small append per call. The loop's child measures that floor itself, in
  blocks of ``--block`` appends alternating with blocks of ``--block`` calls (ABBA), and
  both rows give the medians of the per-call block means: a floor measured in another
  process minutes apart is only as good as the disk's and the CPU's steadiness between
  them. Without ``annotate_loop`` in ``--ops``, ``fsync`` runs in a child of its own. The
  annotate_loop row says which mode the store wrote in (journal or write-through).

Usage::

    .venv/bin/python benchmarks/compare_upstream.py --upstream /work/venv-upstream/bin/python \\
        [--sizes 1000,100000,1000000] [--repeat 3] [--ops filter,read,...]

The upstream interpreter needs ``pip install strands-robots==0.5.3`` in its own venv.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = r"""
import json, os, statistics, sys, time
op, root, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
FLOOR_LINE = b'{"op":"put","key":"%d","record":{"judge":{"quality":"high"}}}\n'
extra_out = {}
t0 = time.perf_counter()
if op == "msgspec":
    import msgspec
    from typing import Literal
    class J(msgspec.Struct):
        quality: Literal["low", "medium", "high"]
        disputes_verdict: bool = False
    class D(msgspec.Struct):
        success: bool
    class R(msgspec.Struct):
        deterministic: D | None = None
        judge: J | None = None
    class Doc(msgspec.Struct):
        episodes: dict[str, R]
    rank = {"low": 0, "medium": 1, "high": 2}
    with open(os.path.join(root, "episode_labels.json"), "rb") as f:
        doc = msgspec.json.decode(f.read(), type=Doc)
    result = sorted(int(k) for k, r in doc.episodes.items()
                    if r.judge is not None and r.deterministic is not None and r.deterministic.success
                    and rank[r.judge.quality] >= 1)
elif op == "fsync":
    path = os.path.join(root, "fsync.bin")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    t0 = time.perf_counter()
    for i in range(extra["loop"]):
        os.write(fd, FLOOR_LINE % i)
        os.fdatasync(fd)
    os.close(fd)
    result = extra["loop"]
else:
    import strands_robots.episode_labels as el
    t_import = time.perf_counter()
    if op == "import":
        result = 0
    elif op in ("filter", "filter_meta", "filter_meta_cold"):
        result = len(el.filter_episodes(root))
    elif op == "prime":
        result = len(el.stale_episodes(root))
    elif op == "read":
        result = len(el.read_labels(root)["episodes"])
    elif op == "annotate1":
        result = el.annotate_episode(root, extra["episode"], quality="high", note="one", model="bench")["episode_index"]
    elif op in ("verdicts", "verdicts_meta"):
        n = extra["n"]
        verdicts = [{"episode": i, "success": i % 3 != 0, "failure": i % 3 == 0, "steps": 300,
                     "cumulative_reward": 1.0, "seed": i} for i in range(n)]
        t_import = time.perf_counter()
        result = len(el.record_deterministic_verdicts(root, verdicts, benchmark="bench")["episodes"])
    elif op == "annotate_loop":
        # One untimed first call (it parses the canonical file and starts the journal), then
        # blocks of calls alternating with blocks of the fsync floor in this same process
        # (ABBA order), so disk and CPU drift hit both alike; medians of the per-call block means.
        n, loop, block = extra["n"], extra["loop"], extra["block"]
        first = time.perf_counter()
        el.annotate_episode(root, n - 1, quality="high", note="first", model="bench")
        first = time.perf_counter() - first
        fd = os.open(os.path.join(root, "fsync.bin"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        calls, floors, done = [], [], 0
        while done < loop:
            k = min(block, loop - done)
            for part in ((0, 1) if len(calls) % 2 == 0 else (1, 0)):
                t = time.perf_counter()
                if part == 0:
                    for i in range(done, done + k):
                        el.annotate_episode(root, i % n, quality="high", note="loop", model="bench")
                    calls.append((time.perf_counter() - t) / k)
                else:
                    for i in range(done, done + k):
                        os.write(fd, FLOOR_LINE % i)
                        os.fdatasync(fd)
                    floors.append((time.perf_counter() - t) / k)
            done += k
        os.close(fd)
        journal = any(os.path.exists(os.path.join(root, *name)) for name in (  # this layout and the earlier one
            (".strands-labels", "episode_labels.json.journal"), (".episode_labels.json.journal",)))
        canonical = os.path.getsize(os.path.join(root, "episode_labels.json"))
        result = loop
        extra_out = {"per_call": statistics.median(calls), "floor": statistics.median(floors), "first": first,
                     "mode": "journal" if journal else "write-through", "canonical_bytes": canonical}
    else:
        raise SystemExit(f"unknown op {op}")
    if op != "import":
        t0 = t_import
elapsed = time.perf_counter() - t0
hwm_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"seconds": elapsed, "rss_mb": hwm_kb / 1024, "result": result, **extra_out}))
"""

QUALITIES = ("low", "medium", "high")
MODES = (None, "jerky_motion", "near_miss", "drift")


def foreign_sidecar(path: Path, n: int) -> None:
    """A sidecar as strands-robots 0.5.3 writes it: every episode judged, no fingerprints."""
    rnd = random.Random(0)
    episodes = {}
    for i in range(n):
        success = rnd.random() < 0.7
        opinion = None if rnd.random() < 0.8 else (not success)
        episodes[str(i)] = {
            "episode_index": i,
            "deterministic": {
                "success": success,
                "failure": not success,
                "steps": 300,
                "cumulative_reward": float(success),
                "seed": i,
            },
            "judge": {
                "quality": rnd.choice(QUALITIES),
                "failure_mode": rnd.choice(MODES),
                "note": "sampled four frames; the grasp is clean and the approach is steady",
                "success_opinion": opinion,
                "disputes_verdict": opinion is not None and opinion != success,
                "model": "judge-vlm",
                "labeled_at": 1796033549.0 + i,
            },
        }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"schema_version": 1, "benchmark": "bench", "episodes": episodes}, handle, indent=2, sort_keys=True)
        handle.write("\n")


def fingerprinted_sidecar(root: Path, source: Path, ours: str) -> None:
    """Add the fingerprints this package records (with ``meta/``) to the records of ``source``:
    those ``record_deterministic_verdicts`` writes for the same verdicts (the caches and the
    journal it leaves are not copied to the measured directories, see :func:`scratch_copy`)."""
    script = r"""
import json, sys
from pathlib import Path
import strands_robots.episode_labels as el
root, source = Path(sys.argv[1]), Path(sys.argv[2])
document = json.loads(source.read_text())
fields = ("success", "failure", "steps", "cumulative_reward", "seed")
verdicts = [{"episode": int(key), **{f: record["deterministic"][f] for f in fields}}
            for key, record in document["episodes"].items()]
recorded = el.record_deterministic_verdicts(root, verdicts, benchmark="bench")["episodes"]
for key, record in document["episodes"].items():
    record["fingerprint"] = recorded[key]["fingerprint"]
el.flush(root)
with open(root / "episode_labels.json", "w", encoding="utf-8") as handle:
    json.dump(document, handle, indent=2, sort_keys=True)
    handle.write("\n")
"""
    subprocess.run([ours, "-c", script, str(root), str(source)], check=True)


#: Operations that need no generated sidecar (they write their own) or no ``meta/``.
NO_SIDECAR = ("verdicts", "verdicts_meta")
WITH_META = ("filter_meta", "filter_meta_cold", "verdicts_meta")


def prepare(work: Path, n: int, ours: str, ops: list[str]) -> dict[str, Path]:
    """Generated inputs for size ``n`` that ``ops`` need (cached across runs in ``work``)."""
    from open_million import write_dataset

    base = work / f"n{n}"
    plain = base / "plain"
    meta = base / "meta"
    with_meta = any(op in WITH_META for op in ops)
    plain.mkdir(parents=True, exist_ok=True)
    if not with_meta and all(op in NO_SIDECAR for op in ops):
        return {"plain": plain, "meta": meta}  # the operations write their own sidecar
    if not (plain / "episode_labels.json").exists():
        plain.mkdir(parents=True, exist_ok=True)
        foreign_sidecar(plain / "episode_labels.json", n)
    if with_meta and not (meta / "episode_labels.json").exists():
        write_dataset(meta, n, files=max(1, min(10, n // 100_000)))
        fingerprinted_sidecar(meta, plain / "episode_labels.json", ours)
    return {"plain": plain, "meta": meta}


def scratch_copy(source: Path, dest: Path, *, sidecar: bool = True) -> Path:
    """A fresh copy of ``source`` (``meta/`` hard-linked: read-only) with or without its sidecar."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if (source / "meta").exists():
        shutil.copytree(source / "meta", dest / "meta", copy_function=os.link)
    if sidecar:
        shutil.copyfile(source / "episode_labels.json", dest / "episode_labels.json")
    return dest


def run(python: str, op: str, root: Path, extra: dict) -> dict:
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
    start = time.perf_counter()
    out = subprocess.run(
        [python, "-c", CHILD, op, str(root), json.dumps(extra)], capture_output=True, text=True, env=env, cwd=root
    )
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{python} {op} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = wall
    return result


def measure(
    op: str, n: int, inputs: dict[str, Path], scratch: Path, pythons: dict[str, str], loop: int, block: int
) -> dict:
    """One measurement of ``op`` per implementation, each on its own fresh copy."""
    results = {}
    for name, python in pythons.items():
        where = scratch / name
        if op in ("filter", "read", "annotate1", "msgspec", "import"):
            root = scratch_copy(inputs["plain"], where)
        elif op in ("filter_meta", "filter_meta_cold"):
            root = scratch_copy(inputs["meta"], where)
            if op == "filter_meta" and name != "0.5.3":
                run(python, "prime", root, {})  # the cache our writer leaves (untimed)
        elif op == "verdicts":
            root = scratch_copy(inputs["plain"], where, sidecar=False)
        elif op == "verdicts_meta":
            root = scratch_copy(inputs["meta"], where, sidecar=False)
        elif op in ("annotate_loop", "fsync"):
            root = scratch_copy(inputs["plain"], where)
        else:
            raise SystemExit(f"unknown op {op}")
        extra = {"n": n, "episode": n // 2, "loop": loop, "block": block}
        results[name] = run(python, op, root, extra)
        if op == "annotate1":
            # what the process left for other tools: the canonical file must hold the annotation
            document = json.loads((root / "episode_labels.json").read_text())
            assert document["episodes"][str(n // 2)]["judge"]["note"] == "one", (name, "annotation not in the file")
        if op in ("fsync", "msgspec"):
            break  # a floor, measured with our interpreter
    return results


def compile_package(python: str) -> None:
    """Write the bytecode of ``python``'s ``strands_robots`` package, as installing a wheel does.

    An editable install has none, and with ``PYTHONDONTWRITEBYTECODE`` set (as on this
    project's machine) every child would compile each module it imports from source.
    """
    code = "import compileall, os, strands_robots; compileall.compile_dir(os.path.dirname(strands_robots.__file__), quiet=1)"
    subprocess.run([python, "-c", code], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", default="/work/venv-upstream/bin/python", help="python of the 0.5.3 venv")
    parser.add_argument("--ours", default=sys.executable)
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME=PYTHON",
        help="another build of this package measured in the same run (e.g. the code before a change), "
        "printed as an extra row per operation against 0.5.3",
    )
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--ops",
        default="import,filter,msgspec,filter_meta,filter_meta_cold,read,annotate1,verdicts,verdicts_meta,"
        "annotate_loop,fsync",
    )
    parser.add_argument("--loop", type=int, default=2000, help="calls of annotate_loop / fsync")
    parser.add_argument("--block", type=int, default=10, help="calls per annotate_loop block (floor blocks between)")
    parser.add_argument("--work", type=Path, default=HERE / "_work" / "compare")
    args = parser.parse_args()
    args.work = args.work.resolve()  # the children run inside the scratch directories
    pythons = {"ours": args.ours, "0.5.3": args.upstream}
    also = dict(item.split("=", 1) for item in args.also)
    pythons.update(also)
    ops = args.ops.split(",")
    for python in pythons.values():
        compile_package(python)
    print(f"load average at start: {os.getloadavg()[0]:.1f}; cpus: {os.cpu_count()}; repeat {args.repeat}, medians")
    print(
        f"{'op':<14}{'episodes':>10} | {'ours s':>8} {'ours MB':>8} | {'0.5.3 s':>8} {'0.5.3 MB':>8} | ratio t  ratio mem"
    )
    loop_floor: dict[str, float] = {}  # the fsync floor measured between annotate_loop blocks
    for n in (int(s) for s in args.sizes.split(",")):
        inputs = prepare(args.work, n, args.ours, ops)
        for op in ops:
            if op in ("import", "annotate_loop", "fsync") and n != int(args.sizes.split(",")[0]):
                continue  # independent of the sidecar size: measured once, at the first size
            samples: dict[str, list[dict]] = {}
            for _ in range(args.repeat):
                for name, result in measure(
                    op, n, inputs, args.work / "scratch", pythons, args.loop, args.block
                ).items():
                    samples.setdefault(name, []).append(result)
            med = {
                name: (
                    statistics.median(r["seconds"] for r in rs),
                    statistics.median(r["rss_mb"] for r in rs),
                    rs[0]["result"],
                )
                for name, rs in samples.items()
            }
            per = args.loop if op in ("annotate_loop", "fsync") else 1
            unit = 1e3 / per if per > 1 else 1.0
            if op == "annotate_loop":
                loop_med = {name: statistics.median(r["per_call"] for r in rs) for name, rs in samples.items()}
                loop_floor = {name: statistics.median(r["floor"] for r in rs) for name, rs in samples.items()}
                first = samples["ours"][0]
                ours, theirs = loop_med["ours"], loop_med["0.5.3"]
                print(
                    f"{op + ' ms/call':<14}{n:>10,} | {ours * 1e3:8.3f} {med['ours'][1]:8.0f} | {theirs * 1e3:8.3f} "
                    f"{med['0.5.3'][1]:8.0f} | {ours / theirs:6.2f}x  ({first['mode']} mode: canonical file "
                    f"{first['canonical_bytes']:,} B; first call, untimed: {first['first'] * 1e3:.1f} ms)"
                )
                for name in also:
                    print(
                        f"{'  ' + name:<14}{n:>10,} | {loop_med[name] * 1e3:8.3f} {med[name][1]:8.0f} | {'':>8} {'':>8} | "
                        f"{loop_med[name] / theirs:6.2f}x  (floor in its child: {loop_floor[name] * 1e3:.3f} ms, "
                        f"{loop_med[name] / loop_floor[name]:.2f}x it)"
                    )
                sys.stdout.flush()
                continue
            if op == "fsync" and loop_floor:
                floor = loop_floor["ours"]
                print(
                    f"{'fsync (floor)':<14}{n:>10,} | {floor * 1e3:8.3f} {'':>8} |  (between the annotate_loop blocks; "
                    f"annotate_loop is {loop_med['ours'] / floor:.2f}x it; 0.5.3's run: {loop_floor['0.5.3'] * 1e3:.3f} ms)"
                )
                continue
            if op in ("msgspec", "fsync"):
                s, mb, _ = med["ours"]
                label = f"{op} (floor)"
                print(f"{label:<14}{n:>10,} | {s * unit:8.3f} {mb:8.0f} |")
                continue
            (s1, m1, r1), (s2, m2, r2) = med["ours"], med["0.5.3"]
            note = "" if r1 == r2 else f"  (results differ: {r1} vs {r2})"
            if per > 1:
                print(
                    f"{op + ' ms/call':<14}{n:>10,} | {s1 * unit:8.3f} {m1:8.0f} | {s2 * unit:8.3f} {m2:8.0f} | {s1 / s2:6.2f}x"
                )
            else:
                print(
                    f"{op:<14}{n:>10,} | {s1:8.3f} {m1:8.0f} | {s2:8.3f} {m2:8.0f} | {s1 / s2:6.2f}x {m1 / m2:8.2f}x{note}"
                )
            for name in also:
                s3, m3, r3 = med[name]
                note = "" if r3 == r2 else f"  (results differ: {r3} vs {r2})"
                label = f"  {name}"
                if per > 1:
                    print(f"{label:<14}{n:>10,} | {s3 * unit:8.3f} {m3:8.0f} | {'':>8} {'':>8} | {s3 / s2:6.2f}x")
                else:
                    print(
                        f"{label:<14}{n:>10,} | {s3:8.3f} {m3:8.0f} | {'':>8} {'':>8} | {s3 / s2:6.2f}x {m3 / m2:8.2f}x{note}"
                    )
            sys.stdout.flush()
    shutil.rmtree(args.work / "scratch", ignore_errors=True)


if __name__ == "__main__":
    main()

"""A small, fast run of the fault-injection benchmark (``benchmarks/judge_faults.py``).

Real episodes from the shared ``lerobot-written-v30-video`` dataset (its 3 clean episodes,
two cameras) become new v2.1 and v3.0 datasets with every fault type injected at moderate
and severe strength next to 32 untouched controls each; the offline judge must name every
severe fault, most moderate ones, and leave the controls alone. The full benchmark, with its figures for every
type and severity, is in ``docs/judge.md``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _benchmark():
    spec = importlib.util.spec_from_file_location("judge_faults", REPO / "benchmarks" / "judge_faults.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["judge_faults"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _benchmark()


def test_fault_benchmark_small(tmp_path, bench):
    shared = bench.shared_datasets()
    if not (shared / "lerobot-written-v30-video" / "meta" / "info.json").is_file():
        pytest.skip("the shared datasets are not present")
    rows, result = bench.run_benchmark(
        tmp_path,
        [("lerobot-written-v30-video", "v2.1", (0, 1, 2)), ("lerobot-written-v30-video", "v3.0", (0, 1, 2))],
        controls=32,
        repeats=2,
        seed=0,
        verbose=False,
        severities=("moderate", "severe"),
    )
    assert len(rows) == 2 * (32 + 2 * 2 * len(bench.FAULTS))
    truth = json.loads((tmp_path / "lerobot-written-v30-video-faults-v3.0.truth.json").read_text())
    assert sum(1 for t in truth if t["fault"] == "control") == 32
    info = json.loads((tmp_path / "lerobot-written-v30-video-faults-v2.1" / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v2.1" and "observation.images.front" in info["features"]
    recall = result["recall"]
    for fault in bench.FAULTS:  # every type named on every severe fault (4 per type)
        assert recall[fault]["severe"] == (1.0, 4), (fault, result["confusion"])
    moderate = {f: by["moderate"][0] for f, by in recall.items()}
    assert all(v >= 0.75 for f, v in moderate.items() if f != "incomplete"), moderate
    assert moderate["incomplete"] >= 0.5, moderate  # 60 % of a 120-frame pick is 72 frames, the other pick's length
    assert result["false_alarms"] == (0, 64)
    agree, base, kappa = result["failure_mode"]
    assert 0.0 <= base <= agree <= 1.0 and kappa >= 0.9
    assert result["quality"][2] >= 0.6


def test_kappa_worked_example(bench):
    # 4 pairs, 3 agree; expected a a b b, judged a a b a: chance = (2*3 + 2*1) / 16 = 0.5
    agree, base, kappa = bench.kappa([("a", "a"), ("a", "a"), ("b", "b"), ("b", "a")])
    assert (agree, base) == (0.75, 0.5) and kappa == pytest.approx(0.5)
    assert bench.judged_class({"quality": "medium", "failure_mode": None}) == "idle"
    assert bench.judged_class({"quality": "high", "failure_mode": None}) == "none"

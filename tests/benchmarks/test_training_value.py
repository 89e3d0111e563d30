"""The pieces of ``benchmarks/training_value.py`` (the full run is a benchmark, not a test).

Worked examples: the share of the gap recovered, the split (no episode in both lists, a
fifth per task held out), the bad demonstration (the fault's change reaches the paired
action channel, scaled and signed), the history features and the chunked targets, and an
MLP that learns a linear map.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tv():
    _load("judge_faults")
    return _load("training_value")


def test_gap_recovered_worked_example(tv):
    # all 0.30, oracle 0.10: a filtered list at 0.15 recovers (0.30 - 0.15) / (0.30 - 0.10) = 0.75
    assert tv.gap_recovered(0.30, 0.15, 0.10) == pytest.approx(0.75)
    assert tv.gap_recovered(0.30, 0.30, 0.10) == pytest.approx(0.0)
    assert tv.gap_recovered(0.30, 0.10, 0.10) == pytest.approx(1.0)
    assert tv.gap_recovered(0.30, 0.35, 0.10) == pytest.approx(-0.25)  # worse than training on everything
    assert tv.gap_recovered(0.2, 0.1, 0.2) is None  # no gap to recover


def test_split_by_task_holds_out_a_fifth_per_task_and_never_both(tv):
    tasks = ["pick"] * 10 + ["push"] * 5 + ["alone"]
    train, held = tv.split_by_task(tasks, np.random.default_rng(0))
    assert not set(train) & set(held)
    assert sorted(train + held) == list(range(16))
    assert sum(1 for k in held if tasks[k] == "pick") == 2
    assert sum(1 for k in held if tasks[k] == "push") == 1
    assert 15 in train  # a task with one episode is never held out
    assert tv.faulty_positions(40, 0.25, np.random.default_rng(1)) == sorted(
        set(tv.faulty_positions(40, 0.25, np.random.default_rng(1)))
    )
    assert len(tv.faulty_positions(40, 0.25, np.random.default_rng(1))) == 10


def _source(jf, sign: float = 1.0):
    frames = 120
    t = np.linspace(0, 1, frames)
    state = np.stack([np.sin(3 * t), np.cos(2 * t), 0.5 * t, np.where(t > 0.5, 1.0, 0.0)], axis=1).astype(np.float32)
    action = np.stack([10 * state[:, 0], sign * 5 * state[:, 1], state[:, 2], state[:, 3]], axis=1).astype(np.float32)
    names = ["shoulder.pos", "elbow.pos", "wrist.pos", "gripper.pos"]
    action_names = ["a_shoulder", "a_elbow", "a_wrist", "gripper.pos"]
    episode = jf.Episode(state, action, "pick")
    return jf.Source("synthetic", 30.0, names, action_names, [episode], [])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_demonstration_fault_reaches_the_paired_action_channels(tv, sign):
    jf = sys.modules["judge_faults"]
    source = _source(jf, sign)
    clean = source.episodes[0]
    pairs = dict(jf._pairs(source, clean))
    bad = jf.inject(clean, "drift", "severe", source, np.random.default_rng(3), demonstration=True)
    state_change = bad.state.astype(np.float64) - clean.state
    action_change = bad.action.astype(np.float64) - clean.action
    drifted = [c for c in range(4) if np.abs(state_change[:, c]).max() > 1e-6]
    assert drifted and all(c in pairs for c in drifted)
    for c in drifted:
        j = pairs[c]
        ratio = jf._range(clean.action.astype(np.float64), j) / jf._range(clean.state.astype(np.float64), c)
        expected = state_change[:, c] * ratio * (sign if j == 1 else 1.0)
        np.testing.assert_allclose(action_change[:, j], expected, rtol=1e-4, atol=1e-4)
    # a bad recording of a good demonstration (the default) leaves the commands alone
    recorded = jf.inject(clean, "drift", "severe", source, np.random.default_rng(3))
    np.testing.assert_array_equal(recorded.action, clean.action)
    # a recording fault is never copied into the commands
    frozen = jf.inject(clean, "frozen", "severe", source, np.random.default_rng(3), demonstration=True)
    np.testing.assert_array_equal(frozen.action, clean.action)


def test_features_and_chunked_targets(tv):
    state = np.array([[0.0], [1.0], [3.0], [6.0]])
    x = tv.features(state, history=2)
    # state, its last change, the change before it (zero before the start)
    np.testing.assert_array_equal(x, [[0, 0, 0], [1, 1, 0], [3, 2, 1], [6, 3, 2]])
    action = np.arange(10.0).reshape(5, 2)
    y = tv.targets(action, chunk=2)
    np.testing.assert_array_equal(y, [[0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6, 7], [6, 7, 8, 9]])


POLICY_CHECK = """
import sys
sys.path.insert(0, {benchmarks!r})
import training_value as tv  # before numpy: it pins BLAS to one thread
import numpy as np
rng = np.random.default_rng(0)
x = rng.normal(size=(2000, 3))
y = x @ np.array([[1.0, -2.0], [0.5, 0.0], [0.0, 3.0]])
policy = tv.Policy.fit(x, y, seed=0, steps=1500)
again = tv.Policy.fit(x, y, seed=0, steps=1500)
print(float(np.mean((policy.predict(x) - y) ** 2) / np.mean(y**2)))
print(bool(np.array_equal(again.predict(x[:5]), policy.predict(x[:5]))))
"""


def test_policy_learns_a_linear_map():
    # in a fresh process: the script pins BLAS to one thread before numpy loads (this process's
    # numpy is already loaded, and a threaded BLAS on a busy 2-core machine is 20x slower)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", POLICY_CHECK.format(benchmarks=str(REPO / "benchmarks"))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    error, same = done.stdout.split()
    assert float(error) < 0.02
    assert same == "True"  # seeded: the same weights

"""The offline judge end to end on a synthetic dataset with planted execution faults."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots.dataset import open_dataset
from strands_robots.episode_labels import read_labels, record_deterministic_verdicts
from strands_robots.judges import DatasetProfile, HeuristicJudgeModel, run_judge
from strands_robots.signals import episode_signals
from strands_robots.signals.episode import signal_columns, signals_of
from strands_robots.tools.episode_judge import create_judge_agent
from tests.synth import make_v3_dataset

N = 12
LENGTH = 90
NAMES = ["joint_0.pos", "joint_1.pos", "joint_2.pos", "gripper.pos"]
JITTERY, REGRASP, BROKEN = 3, 7, 9


def _closed(t, start, end, ramp=0.1):  # closes in 0.1 of the episode (0.3 s)
    smooth = lambda x: x * x * (3 - 2 * x)  # noqa: E731
    return smooth(np.clip((t - start) / ramp, 0, 1)) - smooth(np.clip((t - end) / ramp, 0, 1))


def trajectory(e: int) -> np.ndarray:
    """A minimum-jerk reach and one grasp; the planted episodes break one thing each."""
    rng = np.random.default_rng(e)
    t = np.linspace(0, 1, LENGTH)
    s = 10 * t**3 - 15 * t**4 + 6 * t**5
    joints = np.outer(s, rng.normal(0, 0.5, 3)) + rng.normal(0, 0.001, (LENGTH, 3))
    shut = _closed(t, 0.4, 0.85)
    if e == JITTERY:
        joints += rng.normal(0, 0.05, joints.shape)
    if e == REGRASP:
        shut = _closed(t, 0.2, 0.3) + _closed(t, 0.4, 0.5) + _closed(t, 0.6, 0.85)
    state = np.concatenate([joints, (1 - 0.9 * shut + rng.normal(0, 0.003, LENGTH))[:, None]], axis=1)
    if e == BROKEN:
        state[40:42, 1] = np.nan
    return state.astype(np.float32)


def replace_states(root, make_state) -> None:
    """Overwrite ``observation.state`` in every data file (rows may be stored shuffled)."""
    for path in sorted((root / "data").rglob("*.parquet")):
        parquet = pq.ParquetFile(path)
        groups = []
        for g in range(parquet.num_row_groups):
            table = parquet.read_row_group(g)
            episodes = table.column("episode_index").to_numpy()
            frames = table.column("frame_index").to_numpy()
            state = np.stack([make_state(int(e))[f] for e, f in zip(episodes, frames, strict=True)])
            column = pa.FixedSizeListArray.from_arrays(pa.array(state.reshape(-1)), state.shape[1])
            groups.append(
                table.set_column(table.schema.get_field_index("observation.state"), "observation.state", column)
            )
        with pq.ParquetWriter(path, groups[0].schema) as writer:
            for table in groups:
                writer.write_table(table)


@pytest.fixture
def faulty_dataset(tmp_path):
    root = make_v3_dataset(
        tmp_path / "faulty", [LENGTH] * N, state_dim=4, state_names=NAMES, episodes_per_file=5, shuffle_rows=True
    )
    replace_states(root, trajectory)
    verdicts = [{"episode": e, "success": e != BROKEN, "steps": LENGTH} for e in range(N)]
    record_deterministic_verdicts(root, verdicts, benchmark="synthetic")
    return root


def test_profile_reads_each_file_once_and_agrees_with_the_reader(faulty_dataset):
    ds = open_dataset(faulty_dataset)
    profile = DatasetProfile.from_dataset(faulty_dataset, workers=2)
    assert sorted(profile.signals) == list(range(N)) and profile.comparable
    for e in (0, JITTERY, BROKEN, 11):
        rows = ds.read_frames(e, signal_columns(ds))
        assert set(rows) == {"observation.state", "action", "timestamp"}
        assert profile.signals[e] == signals_of(ds, rows)
        assert profile.signals[e] == episode_signals(
            rows["observation.state"], rows["timestamp"], 30, NAMES, rows["action"], ds.feature_names("action")
        )
    assert profile.signals[BROKEN]["nan_frames"] == 2
    assert profile.gripper_swings_median == 2


def test_offline_judge_finds_the_planted_faults(faulty_dataset):
    report = run_judge(faulty_dataset, workers=2)
    assert len(report.labelled) == N and not report.failed
    judged = {e: r["judge"] for e, r in ((int(k), v) for k, v in read_labels(faulty_dataset)["episodes"].items())}
    assert (judged[JITTERY]["quality"], judged[JITTERY]["failure_mode"]) == ("low", "jerky_motion")
    assert judged[REGRASP]["failure_mode"] == "near_miss" and judged[REGRASP]["quality"] in ("low", "medium")
    assert "gripper opened/closed 6 times vs dataset median 2" in judged[REGRASP]["note"]
    assert (judged[BROKEN]["quality"], judged[BROKEN]["failure_mode"]) == ("low", "other")
    clean = [e for e in range(N) if e not in (JITTERY, REGRASP, BROKEN)]
    assert [judged[e]["quality"] for e in clean] == ["high"] * len(clean)
    assert all(j["model"] == "heuristic-v1" and j["success_opinion"] is None for j in judged.values())
    expected = {q: sum(1 for j in judged.values() if j["quality"] == q) for q in ("low", "medium", "high")}
    assert report.quality_counts() == expected and expected["high"] == len(clean)


def test_heuristic_model_runs_in_a_plain_judge_agent(faulty_dataset):
    """Not only through the runner: any create_judge_agent caller can use it, several episodes at once."""
    agent = create_judge_agent(HeuristicJudgeModel(), roots=[faulty_dataset], callback_handler=None)
    reply = agent(f'Label episodes 0, {JITTERY} and 42 of the dataset at "{faulty_dataset}". Sample 3 frames each.')
    text = str(reply)
    assert "episode 0: high (None)" in text and f"episode {JITTERY}: low (jerky_motion)" in text
    assert "episode 42: not labelled" in text  # no verdict: nothing written
    assert agent.judge_tools.config.tool_calls == {
        "read_predicate_verdict": 3,
        "load_episode": 2,
        "sample_frames": 2,
        "write_label": 2,
    }


def test_driving_the_tools_directly_plans_what_the_agent_loop_plans(faulty_dataset):
    """run_judge drives the same tools without the event loop: same calls, same labels."""
    model = HeuristicJudgeModel()
    agent = create_judge_agent(model, roots=[faulty_dataset], callback_handler=None)
    prompt = f'Label episode {JITTERY} of the dataset at "{faulty_dataset}". Sample 3 frames each.'
    agent(prompt)
    via_agent = agent.judge_tools.config.written.pop((str(faulty_dataset), JITTERY))
    direct = create_judge_agent(model, roots=[faulty_dataset], callback_handler=None)
    messages = model.drive(direct.judge_tools, prompt)
    via_drive = direct.judge_tools.config.written.pop((str(faulty_dataset), JITTERY))
    keep = ("quality", "failure_mode", "note", "success_opinion", "model")
    assert {k: via_drive[k] for k in keep} == {k: via_agent[k] for k in keep}
    assert (
        direct.judge_tools.config.tool_calls
        == agent.judge_tools.config.tool_calls
        == {
            "read_predicate_verdict": 1,
            "load_episode": 1,
            "sample_frames": 1,
            "write_label": 1,
        }
    )
    assert messages[-1]["content"][0]["text"] == f"episode {JITTERY}: low (jerky_motion)"
    assert model.can_drive() and not type("Sub", (HeuristicJudgeModel,), {"next_events": lambda s, m: []})().can_drive()


def test_a_state_narrower_than_declared_is_a_per_episode_error(tmp_path):
    root = make_v3_dataset(tmp_path / "narrow", [LENGTH] * 3, state_dim=4, state_names=NAMES, episodes_per_file=1)
    replace_states(root, lambda e: trajectory(e)[:, :3] if e == 1 else trajectory(e))
    record_deterministic_verdicts(root, [{"episode": e, "success": True, "steps": LENGTH} for e in range(3)])
    report = run_judge(root)
    assert [r.episode for r in report.labelled] == [0, 2]
    assert [r.episode for r in report.failed] == [1]
    assert "observation.state of episode 1 has 3 value(s) per frame but meta/info.json declares shape [4]" in (
        report.failed[0].error
    )

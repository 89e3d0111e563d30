"""The four judge tools answer as strands-robots 0.5.3's do, plus our extra fields.

Payload fields, frame positions, clamping, the camera-less and state-less answers,
the verdict block, the message phrases and the system prompt's doctrine
(``docs/compatibility.md``, ``docs/judge.md``).
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots.episode_labels import record_deterministic_verdicts
from strands_robots.tools import episode_judge
from strands_robots.tools.episode_judge import (
    JUDGE_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    load_episode,
    read_predicate_verdict,
    sample_frames,
    write_label,
)
from tests.synth import make_v3_dataset, synth_state


def _text(result):
    return "\n".join(b["text"] for b in result["content"] if "text" in b)


def _json(result):
    return next(b["json"] for b in result["content"] if "json" in b)


@pytest.fixture
def plain(tmp_path):
    """Two camera-less episodes of 10 and 6 frames, 2 state dims, verdicts recorded."""
    root = make_v3_dataset(tmp_path / "plain", [10, 6], state_dim=2, cameras=(), fps=50)
    record_deterministic_verdicts(
        root,
        [
            {"episode": 0, "success": True, "failure": False, "steps": 10},
            {"episode": 1, "success": False, "failure": True, "steps": 6, "cumulative_reward": -1.5, "seed": 9},
        ],
        benchmark="reach",
    )
    return root


def test_load_episode_carries_the_upstream_fields_and_ours(plain):
    result = load_episode(str(plain), 1)
    assert result["status"] == "success", _text(result)
    payload = _json(result)
    assert payload["episode"] == payload["episode_index"] == 1
    assert payload["length"] == 6
    assert payload["total_episodes"] == 2
    assert payload["fps"] == 50
    assert payload["camera_keys"] == []
    assert payload["state_names"] == ["joint_0.pos", "joint_1.pos"]
    assert payload["has_deterministic_verdict"] is payload["has_verdict"] is True
    assert payload["has_judge_label"] is False
    assert payload["duration_s"] == pytest.approx(6 / 50)  # ours, beside upstream's


def test_an_unknown_episode_is_not_in_the_dataset_and_has_no_frames(plain):
    for tool in (load_episode, sample_frames):
        result = tool(str(plain), 9)
        assert result["status"] == "error"
        text = _text(result)
        assert "Episode 9 not in dataset" in text and "has no frames" in text
        assert "episode_index 0..1" in text  # what the dataset does have


def test_a_missing_root_is_not_an_existing_directory(tmp_path):
    for tool in (load_episode, sample_frames, read_predicate_verdict):
        result = tool(str(tmp_path / "nowhere"), 0)
        assert result["status"] == "error"
        assert "not an existing directory" in _text(result)


@pytest.mark.parametrize(
    ("length", "n", "expected"),
    [(10, 3, [0, 4, 9]), (10, 4, [0, 3, 6, 9]), (6, 5, [0, 1, 2, 4, 5]), (6, 100, [0, 1, 2, 3, 4, 5])],
)
def test_sample_frames_positions_are_round_half_even_and_clamped(tmp_path, length, n, expected):
    root = make_v3_dataset(tmp_path / "ds", [length], state_dim=2, cameras=())
    payload = _json(sample_frames(str(root), 0, n_frames=n))
    assert [s["frame_index"] for s in payload["samples"]] == expected
    assert payload["frame_indices"] == expected
    assert expected == [round(i * (length - 1) / (len(expected) - 1)) for i in range(len(expected))]


def test_samples_hold_frame_index_timestamp_and_state(plain):
    payload = _json(sample_frames(str(plain), 1, n_frames=3))
    assert payload["episode"] == 1 and payload["length"] == 6
    assert payload["samples"] == [
        {
            "frame_index": f,
            "timestamp": pytest.approx(f / 50, abs=1e-6),
            "state": [pytest.approx(float(synth_state(1, f, c)), abs=1e-6) for c in (0, 1)],
        }
        for f in (0, 2, 5)  # round(2.5) = 2
    ]
    # our own per-frame form, beside it
    assert [row["observation.state"] for row in payload["frames"]] == [s["state"] for s in payload["samples"]]
    # synth state moves exactly 1.0 per frame on every channel
    assert payload["max_state_delta"] == pytest.approx(1.0)


def test_max_state_delta_is_the_largest_step_over_the_whole_episode(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [8], state_dim=2, cameras=())
    data = next((root / "data").rglob("*.parquet"))
    table = pq.read_table(data)
    state = np.asarray(table.column("observation.state").to_pylist(), dtype=np.float32)
    state[5, 1] += 3.25  # a jump into frame 5 and back out of it
    column = table.schema.get_field_index("observation.state")
    field = table.schema.field(column)
    table = table.set_column(column, field, pa.array(state.tolist(), type=field.type))
    pq.write_table(table, data)
    payload = _json(sample_frames(str(root), 0, n_frames=2))
    assert payload["max_state_delta"] == pytest.approx(1.0 + 3.25)
    assert [s["frame_index"] for s in payload["samples"]] == [0, 7]  # the jump is not sampled, yet counted


def test_a_declared_but_absent_state_column_gives_state_none(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [5], state_dim=2, cameras=())
    data = next((root / "data").rglob("*.parquet"))
    pq.write_table(pq.read_table(data).drop_columns(["observation.state"]), data)
    result = sample_frames(str(root), 0, n_frames=2)
    assert result["status"] == "success", _text(result)
    payload = _json(result)
    assert [s["state"] for s in payload["samples"]] == [None, None]
    assert [s["frame_index"] for s in payload["samples"]] == [0, 4]
    assert payload["max_state_delta"] == 0.0
    assert payload["rms_state_jerk"] is None
    assert "no observation.state" in _text(result)


def test_images_on_a_camera_less_dataset_are_an_error_naming_the_gap(plain):
    result = sample_frames(str(plain), 0, include_images=True)
    assert result["status"] == "error"
    text = _text(result)
    assert "no observation.images" in text
    assert "include_images=false" in text  # the remedy
    assert sample_frames(str(plain), 0, include_images=False)["status"] == "success"


def test_read_predicate_verdict_returns_the_block_itself(plain):
    payload = _json(read_predicate_verdict(str(plain), 1))
    assert payload["success"] is False and payload["failure"] is True
    assert payload["steps"] == 6 and payload["cumulative_reward"] == -1.5 and payload["seed"] == 9
    # extras beside the block, not around it
    assert payload["episode_index"] == 1
    assert payload["deterministic"] == {
        k: payload[k] for k in ("success", "failure", "steps", "cumulative_reward", "seed")
    }


def test_write_label_without_a_verdict_says_no_deterministic_verdict_recorded(plain):
    result = write_label(str(plain), 7, "high")
    assert result["status"] == "error"
    assert "No deterministic verdict recorded" in _text(result)


def test_a_missing_parquet_reader_names_pyarrow_and_the_lerobot_extra(plain, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    for tool in (load_episode, sample_frames):
        result = tool(str(plain), 0)
        assert result["status"] == "error"
        assert "pyarrow" in _text(result) and "lerobot extra" in _text(result)
    assert read_predicate_verdict(str(plain), 0)["status"] == "success"  # needs no parquet


def test_the_system_prompt_states_the_doctrine_under_both_names():
    assert JUDGE_SYSTEM_PROMPT is SYSTEM_PROMPT
    for phrase in (
        "authoritative",
        "never overturn",
        "not about the outcome",
        "failed episode",
        "can be medium or high",
        "successful episode",
        "can be low",
    ):
        assert phrase in JUDGE_SYSTEM_PROMPT, phrase
    for tool in ("read_predicate_verdict", "load_episode", "sample_frames", "write_label"):
        assert tool in JUDGE_SYSTEM_PROMPT
    spec = episode_judge.write_label.tool_spec["inputSchema"]["json"]["properties"]["quality"]
    assert "not the outcome" in spec["description"]

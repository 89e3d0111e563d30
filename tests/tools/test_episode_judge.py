"""The four judge tools: envelopes, root safety, docstrings.

See docs/judge.md, "The four tools", "Tool schemas" and "Root safety".
"""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest
from PIL import Image

from strands_robots.dataset import open_dataset
from strands_robots.episode_labels import flush, labels_path, read_labels
from strands_robots.signals import rms_state_jerk
from strands_robots.tools import episode_judge
from strands_robots.tools.episode_judge import (
    load_episode,
    make_judge_tools,
    read_predicate_verdict,
    sample_frames,
    write_label,
)

CAMERA = "observation.images.cam_high"
TOOLS = (load_episode, sample_frames, read_predicate_verdict, write_label)


def _text(result):
    return "\n".join(b["text"] for b in result["content"] if "text" in b)


def _json(result):
    return next(b["json"] for b in result["content"] if "json" in b)


def assert_error(result, tool, episode, *needles):
    assert result["status"] == "error", result
    text = _text(result)
    assert text.startswith(f"{tool} failed for episode {episode}: ")
    assert "Remedy: " in text
    for needle in needles:
        assert needle in text, (needle, text)


# --- docstrings reach the schema the model sees ---------------------------------------


def test_every_parameter_is_described_in_the_tool_spec():
    for t in TOOLS:
        spec = t.tool_spec
        assert len(spec["description"]) > 40
        properties = spec["inputSchema"]["json"]["properties"]
        assert properties, spec["name"]
        for name, prop in properties.items():
            assert prop.get("description") and prop["description"] != f"Parameter {name}", (spec["name"], name)


def test_quality_description_says_execution_not_outcome():
    quality = write_label.tool_spec["inputSchema"]["json"]["properties"]["quality"]["description"]
    assert "EXECUTION, not the outcome" in quality
    assert "low, medium, high" in quality
    assert write_label.tool_spec["inputSchema"]["json"]["required"] == ["root", "episode", "quality"]


# --- success answers --------------------------------------------------------------------


def test_load_episode_describes_the_episode(toy_with_verdicts):
    result = load_episode(str(toy_with_verdicts), 1)
    assert result["status"] == "success"
    info = _json(result)
    assert info["length"] == 90 and info["fps"] == 30 and info["duration_s"] == 3.0
    assert info["camera_keys"] == [CAMERA]
    assert len(info["state_names"]) == 26 and info["state_names"][0] == "kLeftShoulderPitch"
    assert info["tasks"] == ["Pick up the yellow bottle on the table."]
    assert info["has_verdict"] is True and info["has_judge_label"] is False
    assert info["features"]["observation.state"] == {"dtype": "float32", "shape": [26]}


def test_sample_frames_state_only(toy_with_verdicts):
    result = sample_frames(str(toy_with_verdicts), 2, n_frames=4)
    assert result["status"] == "success"
    payload = _json(result)
    assert payload["frame_indices"] == [0, 30, 59, 89]
    assert [f["frame_index"] for f in payload["frames"]] == [0, 30, 59, 89]
    rows = open_dataset(toy_with_verdicts).read_frames(2, ["observation.state", "timestamp"])
    assert payload["frames"][2]["timestamp"] == pytest.approx(float(rows["timestamp"][59]))
    assert payload["frames"][3]["observation.state"] == pytest.approx(rows["observation.state"][89].tolist(), abs=1e-6)
    expected = rms_state_jerk(rows["observation.state"], rows["timestamp"], 30)
    assert payload["rms_state_jerk"] == pytest.approx(expected)
    assert payload["signals"]["gripper_swings"] is not None
    assert not any("image" in b for b in result["content"])


def test_sample_frames_with_images_labels_every_image(toy_with_verdicts):
    tools = make_judge_tools(max_side=64)
    result = tools.sample_frames(str(toy_with_verdicts), 0, n_frames=3, include_images=True)
    assert result["status"] == "success"
    assert result["content"][0]["text"].startswith("Episode 0: sampled 3 of 90 frames [0, 44, 89];")
    assert result["content"][0]["text"].endswith(
        f"; 3 image blocks, position-major, cameras sorted ({CAMERA}), each after its label."
    )
    blocks = result["content"][2:]
    assert len(blocks) == 6
    for k, frame in enumerate([0, 44, 89]):  # round(89/2) = round(44.5) = 44 (ties to even, as upstream)
        assert blocks[2 * k] == {"text": f"frame {frame}, camera {CAMERA}:"}
        image = blocks[2 * k + 1]["image"]
        assert image["format"] == "jpeg"
        data = image["source"]["bytes"]
        assert data[:2] == b"\xff\xd8"
        decoded = Image.open(io.BytesIO(data))
        assert max(decoded.size) == 64


def test_sample_frames_n1_gives_the_last_frame(toy_with_verdicts):
    payload = _json(sample_frames(str(toy_with_verdicts), 0, n_frames=1))
    assert payload["frame_indices"] == [89]


def test_read_predicate_verdict(toy_with_verdicts):
    result = read_predicate_verdict(str(toy_with_verdicts), 2)
    assert result["status"] == "success"
    assert _json(result)["deterministic"]["success"] is False
    assert "never overturn" in _text(result)


def test_write_label_dispute_leaves_the_verdict_byte_identical(toy_with_verdicts):
    root = toy_with_verdicts
    flush(root)
    before = json.loads(labels_path(root).read_bytes())["episodes"]["0"]["deterministic"]
    result = write_label(str(root), 0, "medium", "near_miss", "bottle slipped", False, "judge-vlm")
    assert result["status"] == "success"
    assert "verdict stands" in _text(result) and "disputes_verdict: true" in _text(result)
    judge = _json(result)["judge"]
    assert judge["disputes_verdict"] is True and judge["model"] == "judge-vlm"
    flush(root)
    after = json.loads(labels_path(root).read_bytes())["episodes"]["0"]
    assert json.dumps(after["deterministic"], sort_keys=True).encode() == json.dumps(before, sort_keys=True).encode()
    assert after["judge"]["quality"] == "medium"
    # a second write keeps the replaced block
    write_label(str(root), 0, "high")
    record = read_labels(root)["episodes"]["0"]
    assert record["judge"]["quality"] == "high" and record["judge"]["disputes_verdict"] is False
    assert [h["quality"] for h in record["judge_history"]] == ["medium"]


def test_write_label_records_the_bound_model_name(toy_with_verdicts):
    tools = make_judge_tools(judge_model="bound-model")
    tools.write_label(str(toy_with_verdicts), 1, "high", failure_mode="none")
    judge = read_labels(toy_with_verdicts)["episodes"]["1"]["judge"]
    assert judge["model"] == "bound-model" and judge["failure_mode"] is None
    assert tools.config.written[(str(toy_with_verdicts.resolve()), 1)]["quality"] == "high"


# --- error envelopes --------------------------------------------------------------------


def test_unknown_episode(toy_with_verdicts):
    root = str(toy_with_verdicts)
    assert_error(load_episode(root, 99), "load_episode", 99, "episode 99 not found")
    assert_error(sample_frames(root, 99), "sample_frames", 99, "episode 99 not found")
    assert_error(read_predicate_verdict(root, 99), "read_predicate_verdict", 99, "No deterministic verdict")
    assert_error(write_label(root, 99, "high"), "write_label", 99, "No deterministic verdict")
    assert_error(
        load_episode(root, -1), "load_episode", -1, "episode must be a non-negative integer episode_index, got -1."
    )
    assert_error(load_episode(root, True), "load_episode", True, "non-negative integer")


def test_no_verdict(toy_dataset):
    root = str(toy_dataset)
    assert_error(read_predicate_verdict(root, 0), "read_predicate_verdict", 0, "Record deterministic verdicts first")
    assert_error(write_label(root, 0, "high"), "write_label", 0, "Record deterministic verdicts first")
    assert load_episode(root, 0)["status"] == "success"
    assert not labels_path(toy_dataset).exists()


def test_missing_mp4(toy_with_verdicts):
    for mp4 in (toy_with_verdicts / "videos").rglob("*.mp4"):
        mp4.unlink()
    root = str(toy_with_verdicts)
    assert_error(
        sample_frames(root, 0, include_images=True),
        "sample_frames",
        0,
        f"camera {CAMERA!r}",
        "is missing",
        "include_images=false",
    )
    assert sample_frames(root, 0, include_images=False)["status"] == "success"


@pytest.mark.parametrize(
    ("make_root", "needle"),
    [
        (lambda tmp, toy: str(tmp / "not_a_dataset"), "meta/info.json"),
        (lambda tmp, toy: str(tmp / "does-not-exist"), "does not exist"),
        (lambda tmp, toy: f"{toy}/../{toy.name}", "'..' component"),
        (lambda tmp, toy: f"{toy}\x00", "NUL"),
        (lambda tmp, toy: "/etc", "system directory"),
        (lambda tmp, toy: "/", "system directory"),
        (lambda tmp, toy: "", "empty"),
        (lambda tmp, toy: 42, "path string"),
    ],
)
def test_bad_roots(toy_with_verdicts, tmp_path, make_root, needle):
    (tmp_path / "not_a_dataset").mkdir()
    root = make_root(tmp_path, toy_with_verdicts)
    for t, args in (
        (load_episode, (root, 0)),
        (sample_frames, (root, 0)),
        (read_predicate_verdict, (root, 0)),
        (write_label, (root, 0, "high")),
    ):
        assert_error(t(*args), t.tool_name, 0, needle)
    assert "judge" not in read_labels(toy_with_verdicts)["episodes"]["0"]


def test_out_of_vocabulary_values(toy_with_verdicts):
    root = str(toy_with_verdicts)
    assert_error(write_label(root, 0, "excellent"), "write_label", 0, "low, medium, high", "execution")
    assert_error(write_label(root, 0, "high", "wobbly"), "write_label", 0, "jerky_motion", "near_miss")
    assert_error(write_label(root, 0, "high", None, "", "yes"), "write_label", 0, "success_opinion")
    assert_error(sample_frames(root, 0, n_frames=0), "sample_frames", 0, "positive integer")
    assert_error(sample_frames(root, 0, n_frames=1000, include_images=True), "sample_frames", 0, "ask for fewer")
    assert "judge" not in read_labels(toy_with_verdicts)["episodes"]["0"]


def test_unexpected_exceptions_become_envelopes(toy_with_verdicts, monkeypatch):
    def boom(root):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(episode_judge, "cached_dataset", boom)
    result = load_episode(str(toy_with_verdicts), 0)
    assert_error(result, "load_episode", 0, "RuntimeError: disk on fire", "unexpected")


def test_every_call_returns_a_fresh_dict(toy_with_verdicts):
    root = str(toy_with_verdicts)
    for call in (lambda: load_episode(root, 0), lambda: load_episode(root, 99)):
        first = call()
        first["toolUseId"] = "mutated"
        first["content"].append({"text": "mutated"})
        second = call()
        assert "toolUseId" not in second and second["content"][-1] != {"text": "mutated"}


# --- allow-list -------------------------------------------------------------------------


def test_bound_allow_list(toy_with_verdicts, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    outside = make_judge_tools(roots=[other])
    assert_error(outside.load_episode(str(toy_with_verdicts), 0), "load_episode", 0, "outside the allowed roots")
    inside = make_judge_tools(roots=[toy_with_verdicts.parent])
    assert inside.load_episode(str(toy_with_verdicts), 0)["status"] == "success"
    # a symlink inside the allow-list pointing outside it is judged by its target
    link = other / "link"
    link.symlink_to(toy_with_verdicts, target_is_directory=True)
    assert_error(make_judge_tools(roots=[other]).load_episode(str(link), 0), "load_episode", 0, "outside")


def test_module_tools_read_the_environment_allow_list(toy_with_verdicts, tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("STRANDS_LABELS_ROOTS", str(other))
    assert_error(load_episode(str(toy_with_verdicts), 0), "load_episode", 0, "STRANDS_LABELS_ROOTS")
    monkeypatch.setenv("STRANDS_LABELS_ROOTS", os.pathsep.join([str(other), str(toy_with_verdicts)]))
    assert load_episode(str(toy_with_verdicts), 0)["status"] == "success"


def test_numpy_episode_index_is_accepted(toy_with_verdicts):
    assert load_episode(str(toy_with_verdicts), np.int64(2))["status"] == "success"

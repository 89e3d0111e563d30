"""``create_judge_agent`` end to end with a scripted model (docs/judge.md, "Running it")."""

from __future__ import annotations

import json
import sys

import pytest
from strands.tools.executors import SequentialToolExecutor

from strands_robots.episode_labels import flush, labels_path, read_labels
from strands_robots.model_spec import ModelSpecError
from strands_robots.tools.episode_judge import SYSTEM_PROMPT, create_judge_agent
from tests.judges.judge_fakes import ScriptedModel, tool_results

CAMERA = "observation.images.cam_high"


def test_scripted_model_drives_the_agent_end_to_end(toy_with_verdicts):
    root = str(toy_with_verdicts)
    flush(toy_with_verdicts)
    before = json.loads(labels_path(toy_with_verdicts).read_bytes())["episodes"]["1"]["deterministic"]
    model = ScriptedModel(
        [
            ("tool", "read_predicate_verdict", {"root": root, "episode": 1}),
            ("tool", "load_episode", {"root": root, "episode": 1}),
            ("tool", "sample_frames", {"root": root, "episode": 1, "n_frames": 2, "include_images": True}),
            (
                "tool",
                "write_label",
                {
                    "root": root,
                    "episode": 1,
                    "quality": "medium",
                    "failure_mode": "near_miss",
                    "note": "the bottle slips in the last frames",
                    "success_opinion": False,
                },
            ),
            ("text", "Episode 1 labelled."),
        ]
    )
    agent = create_judge_agent(model, roots=[toy_with_verdicts.parent], callback_handler=None)
    assert isinstance(agent.tool_executor, SequentialToolExecutor)
    assert "never overturn" in agent.system_prompt and "not the outcome" in agent.system_prompt
    assert sorted(agent.tool_names) == ["load_episode", "read_predicate_verdict", "sample_frames", "write_label"]

    reply = agent(f"Label episode 1 of the dataset at {root}. Sample 2 frames, with images.")
    assert "Episode 1 labelled." in str(reply)
    assert model.calls == 5

    # the model received the verdict before it looked at anything
    verdict = tool_results(model.seen[1])[0]
    assert verdict["status"] == "success"
    assert next(b["json"] for b in verdict["content"] if "json" in b)["deterministic"]["success"] is True

    # it received the images, each preceded by its label
    sampled = tool_results(model.seen[3])[2]
    assert sampled["status"] == "success"
    blocks = sampled["content"]
    labels = [(i, b["text"]) for i, b in enumerate(blocks) if "text" in b and b["text"].startswith("frame ")]
    assert [text for _, text in labels] == [f"frame 0, camera {CAMERA}:", f"frame 89, camera {CAMERA}:"]
    for i, _ in labels:
        assert blocks[i + 1]["image"]["format"] == "jpeg"
    assert sum(1 for b in blocks if "image" in b) == 2

    # the disputing opinion is recorded; the verdict is byte-identical
    written = tool_results(model.seen[4])[3]
    assert written["status"] == "success" and "verdict stands" in written["content"][0]["text"]
    flush(toy_with_verdicts)
    record = json.loads(labels_path(toy_with_verdicts).read_bytes())["episodes"]["1"]
    assert json.dumps(record["deterministic"], sort_keys=True) == json.dumps(before, sort_keys=True)
    assert record["judge"]["disputes_verdict"] is True
    assert record["judge"]["success_opinion"] is False
    assert record["judge"]["model"] == "scripted-test-model"  # filled from the model's config


def test_agent_tools_refuse_roots_outside_the_allow_list(toy_with_verdicts, tmp_path):
    root = str(toy_with_verdicts)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    model = ScriptedModel(
        [("tool", "write_label", {"root": root, "episode": 0, "quality": "high"}), ("text", "gave up")]
    )
    agent = create_judge_agent(model, roots=[elsewhere], callback_handler=None)
    agent("Label episode 0.")
    result = tool_results(model.seen[1])[0]
    assert result["status"] == "error" and "outside the allowed roots" in result["content"][0]["text"]
    assert "judge" not in read_labels(toy_with_verdicts)["episodes"]["0"]


def test_bedrock_without_credentials_is_one_clear_error(monkeypatch, tmp_path):
    from strands_robots.model_spec import ModelCredentialsError

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(ModelCredentialsError, match="aws configure") as info:
        create_judge_agent("bedrock:us.example.model-v1:0", callback_handler=None)
    assert "\n" not in str(info.value) and "offline judge" in str(info.value)


def test_model_argument_forms(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")  # dummy credentials: nothing is called
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example")
    with pytest.raises(ModelSpecError, match="PROVIDER:MODEL_ID"):
        create_judge_agent("not-a-spec")
    monkeypatch.setitem(sys.modules, "strands.models.ollama", None)  # as without the ollama SDK
    with pytest.raises(ModelSpecError, match=r"strands-robots-labels\[ollama\]"):
        create_judge_agent("ollama:llava:13b")
    agent = create_judge_agent("bedrock:us.example.model-v1:0", callback_handler=None)
    assert agent.model.get_config()["model_id"] == "us.example.model-v1:0"
    assert agent.judge_tools.config.judge_model == "bedrock:us.example.model-v1:0"
    default = create_judge_agent(callback_handler=None)  # strands' default model (never called here)
    assert type(default.model).__name__ == "BedrockModel"
    custom = create_judge_agent(ScriptedModel([]), system_prompt="custom", callback_handler=None)
    assert custom.system_prompt == "custom"
    assert SYSTEM_PROMPT.count("write_label") >= 1

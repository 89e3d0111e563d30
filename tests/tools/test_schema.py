"""The tool schemas a model reads are strict, and strands enforces them (``docs/judge.md``).

Driven through a real strands ``Agent`` with a scripted model: strands validates the
model's arguments against the schema before a tool runs, so a lax schema would turn
``episode: true`` into episode 1 and ``include_images: "yes"`` into ``True``.
"""

from __future__ import annotations

import pytest

from strands_robots.episode_labels import FAILURE_MODES, QUALITY_GRADES, read_labels
from strands_robots.tools.episode_judge import create_judge_agent, make_judge_tools
from tests.judges.judge_fakes import ScriptedModel, tool_results


def _properties(tool):
    return tool.tool_spec["inputSchema"]["json"]["properties"]


def test_the_vocabularies_are_enums_in_the_schema():
    tools = make_judge_tools(roots=[])
    write = _properties(tools.write_label)
    assert write["quality"]["enum"] == list(QUALITY_GRADES)
    assert write["failure_mode"]["enum"] == list(FAILURE_MODES)
    assert write["success_opinion"]["type"] == "boolean"
    assert write["episode"]["type"] == "integer"
    sample = _properties(tools.sample_frames)
    assert sample["include_images"] == {**sample["include_images"], "type": "boolean", "default": False}
    assert sample["n_frames"]["type"] == "integer" and sample["n_frames"]["default"] == 4
    for tool in tools:
        assert tool.tool_spec["inputSchema"]["json"]["required"][:2] == ["root", "episode"]


def _run(root, calls):
    """Run the agent over ``calls`` (one tool call per model turn); the tool results in order."""
    model = ScriptedModel([("tool", name, args) for name, args in calls] + [("text", "done")])
    agent = create_judge_agent(model, roots=[root.parent], callback_handler=None)
    agent("Judge the episodes.")
    return tool_results(model.seen[-1])


@pytest.mark.parametrize(
    ("name", "args", "field"),
    [
        ("write_label", {"episode": True, "quality": "high"}, "episode"),
        ("write_label", {"episode": 1.0, "quality": "high"}, "episode"),
        ("write_label", {"episode": "1", "quality": "high"}, "episode"),
        ("write_label", {"episode": 1, "quality": "High"}, "quality"),
        ("write_label", {"episode": 1, "quality": "excellent"}, "quality"),
        ("write_label", {"episode": 1, "quality": "low", "failure_mode": "wobble"}, "failure_mode"),
        ("write_label", {"episode": 1, "quality": "low", "success_opinion": "yes"}, "success_opinion"),
        ("write_label", {"episode": 1, "quality": "low", "success_opinion": 1}, "success_opinion"),
        ("sample_frames", {"episode": 1, "include_images": "yes"}, "include_images"),
        ("sample_frames", {"episode": 1, "include_images": 1}, "include_images"),
        ("sample_frames", {"episode": 1, "n_frames": True}, "n_frames"),
        ("load_episode", {"episode": False}, "episode"),
        ("read_predicate_verdict", {"episode": "0"}, "episode"),
    ],
)
def test_an_argument_outside_the_schema_is_refused_before_the_tool_runs(toy_with_verdicts, name, args, field):
    root = toy_with_verdicts
    before = read_labels(root)
    (result,) = _run(root, [(name, {"root": str(root), **args})])
    assert result["status"] == "error"
    text = result["content"][0]["text"]
    assert "Validation failed" in text and field in text
    assert read_labels(root) == before  # nothing written


def test_arguments_inside_the_schema_still_work(toy_with_verdicts):
    root = toy_with_verdicts
    results = _run(
        root,
        [
            ("sample_frames", {"root": str(root), "episode": 1, "n_frames": 3, "include_images": False}),
            (
                "write_label",
                {
                    "root": str(root),
                    "episode": 1,
                    "quality": "low",
                    "failure_mode": None,
                    "success_opinion": None,
                    "note": "hesitates twice",
                },
            ),
            ("write_label", {"root": str(root), "episode": 2, "quality": "medium", "failure_mode": "near_miss"}),
        ],
    )
    assert [r["status"] for r in results] == ["success", "success", "success"]
    sampled = next(b["json"] for b in results[0]["content"] if "json" in b)
    assert [s["frame_index"] for s in sampled["samples"]] == [0, 44, 89]
    episodes = read_labels(root)["episodes"]
    assert episodes["1"]["judge"]["quality"] == "low" and episodes["1"]["judge"]["failure_mode"] is None
    assert episodes["2"]["judge"]["failure_mode"] == "near_miss"
    assert episodes["1"]["judge"]["success_opinion"] is None

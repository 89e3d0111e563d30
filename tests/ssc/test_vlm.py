"""The L3 layer: App. F prompts, the tolerant JSON extractor, and a scripted strands model."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from strands_robots.errors import LabelValidationError
from strands_robots.model_spec import ModelSpecError
from strands_robots.ssc import build_chain
from strands_robots.ssc.cascade import L3Request
from strands_robots.ssc.scene_graph import configuration
from strands_robots.ssc.vlm import (
    SYSTEM_PROMPT,
    ModelReplyError,
    VLMResolver,
    compose_prompt,
    extract_json,
    grid_png,
    window_frames,
)
from tests.ssc.ssc_fakes import FakeModel, act, ev, sub


# ----------------------------------------------------------------------------- extractor
@pytest.mark.parametrize(
    "reply, expected",
    [
        ('{"arm": "left", "confidence": "high"}', {"arm": "left", "confidence": "high"}),
        ('```json\n{"arm": "right"}\n```', {"arm": "right"}),
        ('```\n{"same_object": true}\n```\nHope this helps.', {"same_object": True}),
        (
            'Looking at the frames, the left gripper closes.\n{"arm": "left", "reasoning": "close"} Done.',
            {"arm": "left", "reasoning": "close"},
        ),
        ('{"arm": "coop", "confidence": "medium"', {"arm": "coop", "confidence": "medium"}),
        ('{"arm": "coop", "reasoning": "both hands on the tr', {"arm": "coop", "reasoning": "both hands on the tr"}),
        ('{"same_object": false, "confidence": "low",}', {"same_object": False, "confidence": "low"}),
        (
            'Answer: {"arm": "right", "reasoning": "uses {braces} inside"}',
            {"arm": "right", "reasoning": "uses {braces} inside"},
        ),
        ('```json\n{"arm": "left", "confidence": "high",\n', {"arm": "left", "confidence": "high"}),
        ('{"result": {"arm": "left"}', {"result": {"arm": "left"}}),
    ],
)
def test_extract_json_tolerates_malformed_replies(reply, expected):
    assert extract_json(reply) == expected


@pytest.mark.parametrize("reply", ["", "I cannot tell which arm.", "[1, 2, 3]", "```json\n```"])
def test_extract_json_refuses_replies_without_an_object(reply):
    with pytest.raises(ModelReplyError, match="no JSON object"):
        extract_json(reply)


# ------------------------------------------------------------------------------- prompts
def _request(**kw) -> L3Request:
    base = dict(
        kind="arm_assignment",
        branch=None,
        task_name="turning on radio",
        st_idx=2,
        start=100,
        end=200,
        action_description="picking up radio",
        conditions=" from coffee table",
        object_name="radio",
        object_list=("radio", "coffee table"),
        other_arm_context=" Left arm is currently holding bowl.",
    )
    base.update(kw)
    return L3Request(**base)


def test_arm_assignment_prompt_follows_appendix_f():
    assert compose_prompt(_request()) == (
        "In these frames from task 'turning on radio':\n"
        "Now robot is picking up radio from coffee table. Left arm is currently holding bowl.\n"
        "Which arm performs this action --- left, right, or coop?\n"
        "IMPORTANT: Only these objects exist in the scene: radio, coffee table. "
        "Do NOT identify or reference objects not in this list.\n"
        "Respond in JSON format:\n"
        '{"arm": "left" | "right" | "coop" | "unsure", "confidence": "high" | "medium" | "low", '
        '"reasoning": "brief explanation"}'
    )


def test_same_object_prompt_branches():
    a = compose_prompt(_request(kind="same_object", branch="a", object_name="box"))
    assert (
        "Both arms are picking up radio.\nAre they co-grasping the SAME physical box, or are they each holding a DIFFERENT box instance?"
        in a
    )
    b = compose_prompt(_request(kind="same_object", branch="b", acting_arm="right", object_name="candle"))
    assert "Right arm is picking up radio. Left arm already holds a candle.\n" in b
    assert "Is the right arm picking the EXACT SAME physical candle that the left arm holds, or a DIFFERENT one?" in b
    c = compose_prompt(_request(kind="same_object", branch="c", object_name="box"))
    assert (
        "Both arms are reportedly holding a 'box'.\nAre they holding the SAME physical 'box' cooperatively, or TWO DIFFERENT 'box' instances?"
        in c
    )
    for text in (a, b, c):
        assert text.endswith(
            '{"same_object": true | false, "confidence": "high" | "medium" | "low", "reasoning": "brief explanation"}'
        )


def test_window_frames_and_grid():
    assert window_frames(100, 200) == [100, 149, 199]
    assert window_frames(5, 6) == [5]
    tile = np.zeros((48, 64, 3), dtype=np.uint8)
    png = grid_png([[tile, tile, tile], [tile, tile, tile]], tile_height=32)
    img = Image.open(io.BytesIO(png))
    assert img.size == (3 * 43, 64)  # two cameras x three frames: the paper's 6-image grid


# ------------------------------------------------------------- L3 through a strands model
def test_l3_path_driven_by_a_scripted_strands_model():
    model = FakeModel(['Sure.\n```json\n{"same_object": true, "confidence": "high", "reasoning": "one tray"}\n```'])
    tile = np.full((32, 32, 3), 200, dtype=np.uint8)
    windows = []

    def frames(start, end):
        windows.append((start, end))
        return grid_png([[tile] * len(window_frames(start, end))])

    resolver = VLMResolver(model, frames=frames)
    subtasks = [
        sub(0, 100, 200, act("pick_up", "tray")),
        sub(1, 200, 300, act("place_on", "tray", ("on", "table"))),
    ]
    events = [ev(140, "left", "close"), ev(150, "right", "close"), ev(250, "left", "open")]
    chain = build_chain(subtasks, events, task_name="carry the tray", resolver=resolver, annotation_fields=())
    assert resolver.calls == 1 and resolver.failures == []
    call = model.calls[0]
    assert call["system_prompt"] == SYSTEM_PROMPT
    content = call["messages"][-1]["content"]
    assert content[0]["text"].startswith("In these frames from task 'carry the tray':\nBoth arms are picking up tray.")
    assert content[1]["image"]["format"] == "png" and content[1]["image"]["source"]["bytes"][:4] == b"\x89PNG"
    assert windows == [(100, 200)]
    assert [a.arm for e in chain.subtasks for a in e.actions] == ["coop", "coop"]
    assert configuration(chain.subtasks[0].scene_graph) == "S"
    assert chain.subtasks[0].pending_queries[0].resolved_by == "L3"
    assert chain.subtasks[0].pending_queries[0].confidence == "high"
    assert resolver.transcript[0]["answer"]["same_object"] is True


def test_l3_unparseable_reply_is_a_recorded_failure_and_the_query_stays_pending():
    model = FakeModel(["I think it is the left arm, probably."])
    resolver = VLMResolver(model)
    chain = build_chain([sub(0, 0, 50, act("press", "button_1"))], [], resolver=resolver)
    (entry,) = chain.subtasks
    assert entry.pending_queries[0].status == "pending"
    assert any("the model gave no usable answer" in a for a in entry.pending_queries[0].attempts)
    assert len(resolver.failures) == 1 and "no JSON object" in resolver.failures[0]


def test_l3_arm_answer_outside_the_schema_is_not_used():
    resolver = VLMResolver(FakeModel(['{"arm": "both"}']))
    subtasks = [sub(0, 0, 50, act("pick_up", "cup_1", arm="left")), sub(1, 50, 100, act("press", "button_1"))]
    chain = build_chain(subtasks, [ev(20, "left", "close")], resolver=resolver)
    entry = chain.subtasks[1]
    assert entry.pending_queries[0].status == "pending"
    assert any("arm='both'" in a for a in entry.pending_queries[0].attempts)
    # the free-arm heuristic fills the arm, flagged low-confidence (gap g2), the query stays pending
    assert (entry.actions[0].arm, entry.actions[0].arm_source, entry.actions[0].arm_confidence) == (
        "right",
        "heuristic",
        "low",
    )


def test_resolver_needs_a_model_and_a_valid_spec():
    with pytest.raises(LabelValidationError, match="needs a model"):
        VLMResolver(None)
    with pytest.raises(ModelSpecError, match="unknown provider"):
        VLMResolver("nosuch:model")


def test_dataset_frames_builds_the_camera_grid(shared_dataset):
    from strands_robots.dataset import open_dataset
    from strands_robots.ssc.vlm import dataset_frames

    ds = open_dataset(shared_dataset("lerobot-written-v30-video"))
    png = dataset_frames(ds, 2)(0, 60)
    img = Image.open(io.BytesIO(png))
    # rows: front (96x128) and wrist (64x64) cameras; columns: frames 0, 29, 59 at 224 px high
    assert img.size == (3 * 299, 2 * 224)
    # the wrist camera is a flat colour (60e + f) % 256: frame 0 of episode 2 is 120
    wrist_first = np.asarray(img)[224 + 112, 112]
    assert abs(int(wrist_first.mean()) - 120) <= 6

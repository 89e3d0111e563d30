"""Inputs of the chain: BEHAVIOR-1K skill_annotation, the project's segmentations, the verb tables."""

from __future__ import annotations

import json

import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.ssc import build_chain, check_chain, load_behavior_annotation, read_behavior_annotation
from strands_robots.ssc.behavior import parse_skill_text
from strands_robots.ssc.cascade import spatial_prefix_arm
from strands_robots.ssc.records import StructuredSubtaskChain, from_dict, to_dict
from strands_robots.ssc.scene_graph import configuration
from strands_robots.ssc.verbs import TEMPLATE_VERBS, VERBS, UnknownVerbError, check_tables, lookup_verb
from tests.ssc.ssc_fakes import act, build_entry, ev, state, sub

RADIO = {
    "task_name": "turning on radio",
    "data_folder": "",
    "meta_data": {"task_duration": 1776, "valid_duration": [0, 1776]},
    "skill_annotation": [
        {
            "skill_idx": 0,
            "skill_id": [1],
            "skill_description": ["move to"],
            "object_id": [["radio_89"]],
            "manipulating_object_id": [],
            "memory_prefix": [],
            "spatial_prefix": [],
            "frame_duration": [0, 265],
            "mp_ef": [],
            "skill_type": ["navigation"],
        },
        {
            "skill_idx": 1,
            "skill_id": [2],
            "skill_description": ["pick up from"],
            "object_id": [["radio_89", "coffee_table_koagbh_0"]],
            "manipulating_object_id": ["radio_89"],
            "memory_prefix": [],
            "spatial_prefix": [],
            "frame_duration": [265, 1162],
            "skill_type": ["uncoordinated"],
        },
        {
            "skill_idx": 2,
            "skill_id": [67],
            "skill_description": ["press"],
            "object_id": [["radio_89"]],
            "manipulating_object_id": ["radio_89"],
            "memory_prefix": [],
            "spatial_prefix": [],
            "frame_duration": [1162, 1400],
            "skill_type": ["coordinated"],
        },
        {
            "skill_idx": 3,
            "skill_id": [3],
            "skill_description": ["place on"],
            "object_id": [["radio_89", "coffee_table_koagbh_0"]],
            "manipulating_object_id": ["radio_89"],
            "memory_prefix": ["back"],
            "spatial_prefix": [],
            "frame_duration": [1400, 1776],
            "skill_type": ["uncoordinated"],
        },
    ],
}


def test_behavior_annotation_parses_the_released_format(tmp_path):
    path = tmp_path / "episode_00000010.json"
    path.write_text(json.dumps(RADIO))
    episode = read_behavior_annotation(path)
    assert episode.task_name == "turning on radio" and episode.task_duration == (0, 1776)
    assert episode.object_list == ["radio_89", "coffee_table_koagbh_0"]
    subs = load_behavior_annotation(RADIO)
    assert [(s.st_idx, s.start, s.end) for s in subs] == [(0, 0, 265), (1, 265, 1162), (2, 1162, 1400), (3, 1400, 1776)]
    pick = subs[1].actions[0]
    assert (pick.verb, pick.arm, pick.obj, pick.targets) == (
        "pick_up_from",
        None,
        "radio_89",
        [("from", "coffee_table_koagbh_0")],
    )
    assert subs[0].actions[0].targets == [("to", "radio_89")] and subs[0].actions[0].obj is None
    assert subs[3].memory_prefix == ["back"] and subs[2].skill_type == ["coordinated"]


def test_behavior_radio_chain_end_to_end():
    events = [ev(900, "right", "close"), ev(1600, "right", "open")]
    chain = build_chain(load_behavior_annotation(RADIO), events, task_name="turning on radio")
    assert chain.action_dscp_list == [
        "robot moves to radio",
        "right arm picks up radio from coffee table koagbh",
        "both arms press radio",
        "right arm places radio on coffee table koagbh",
    ]
    pick_q = chain.subtasks[1].pending_queries[0]
    assert (pick_q.kind, pick_q.resolved_by) == ("arm_assignment", "L1")
    press_q = chain.subtasks[2].pending_queries[0]
    assert (press_q.resolved_by, press_q.answer) == ("L2", {"arm": "coop"})
    assert check_chain(chain, events) == []
    # the chain round-trips through JSON with validation
    again = from_dict(json.loads(json.dumps(to_dict(chain))), StructuredSubtaskChain)
    assert again == chain


def test_paper_style_labels_name_arm_and_object():
    a = parse_skill_text("left pick bowl")
    assert (a.verb, a.arm, a.obj) == ("pick", "left", "bowl")
    b = parse_skill_text("right arm place on", ["pillar_candle_89", "table_2"])
    assert (b.verb, b.arm, b.obj, b.targets) == ("place_on", "right", "pillar_candle_89", [("on", "table_2")])
    c = parse_skill_text("open door", ["door_12"])
    assert (c.verb, c.obj) == ("open_door", "door_12")
    d = parse_skill_text("both pick up box")
    assert (d.arm, d.obj) == ("coop", "box")


def test_behavior_errors_name_the_entry():
    bad = {"skill_annotation": [{"skill_description": ["pick up"], "frame_duration": [50, 10]}]}
    with pytest.raises(LabelValidationError, match=r"skill_annotation\[0\]: frame_duration"):
        load_behavior_annotation(bad)
    unknown = {"skill_annotation": [{"skill_description": ["juggle"], "frame_duration": [0, 10]}]}
    with pytest.raises(UnknownVerbError, match="add a row"):
        load_behavior_annotation(unknown)
    with pytest.raises(LabelValidationError, match="skill_annotation"):
        load_behavior_annotation({"annotations": []})
    split = {"skill_annotation": [{"skill_description": ["press"], "frame_duration": [[10, 20], [30, 40]]}]}
    assert [(s.start, s.end) for s in load_behavior_annotation(split)] == [(10, 40)]


def test_verb_tables():
    assert check_tables() == []
    assert lookup_verb("Pick up  from").name == "pick_up_from"
    assert {VERBS[v].role for v in ("insert", "hang", "attach")} == {"tool_release"}
    assert {VERBS[v].action_type for v in ("push", "press", "turn_on", "tip_over")} == {"contact"}
    with pytest.raises(UnknownVerbError, match="one row"):
        lookup_verb("levitate")
    seed_ids = [
        "N1",
        "O1",
        "C1",
        "S1",
        "S2",
        "P1",
        "L1",
        "L2",
        "L3",
        "L4",
        "L5",
        "R1",
        "M1",
        "H1",
        "A1",
        "A2",
        "A3",
        "D1",
        "J1",
        "J2",
        "T1",
        "B1",
        "G1",
        "Q1",
        "X1",
    ]
    assert set(seed_ids) <= set(TEMPLATE_VERBS)


# ---------------------------------------------------------------- the project's segmentations
ROLE_OF = [
    ("navigate to the fridge", "N1", "idle"),
    ("open the left drawer", "O1", "transient"),
    ("close the microwave door", "C1", "transient"),
    ("slide the top oven rack out", "S1", "transient"),
    ("pick up the bowl from the counter", "P1", "acquire"),
    ("place the bowl in the dishwasher", "L1", "release"),
    ("place the knife on the cutting board", "L2", "release"),
    ("place the mug under the coffee machine dispenser", "L3", "release"),
    ("place the jam next to the plate", "L4", "release"),
    ("stack the can on top of the other cans", "L5", "release"),
    ("dump the vegetables onto the plate", "R1", "tool_persistent"),
    ("push the cutting board to the sink", "M1", "contact"),
    ("hold the carrot under the sink faucet", "H1", "keep"),
    ("turn on the sink faucet", "A1", "contact"),
    ("press the start button on the coffee machine", "A2", "contact"),
    ("push down the lever of the toaster", "A3", "contact"),
    ("turn off the microwave", "D1", "contact"),
    ("set the front-left burner to medium", "J1", "contact"),
    ("turn the sink spout to the left", "J2", "contact"),
    ("stir the vegetables in the pot", "T1", "tool_persistent"),
    ("scrub the cutting board", "B1", "tool_persistent"),
    ("wash the broccoli", "B1", "contact"),
    ("shake the pan", "G1", "transient"),
    ("press the lemon against the reamer", "Q1", "tool_persistent"),
    ("wait for the toaster", "X1", "idle"),
]


@pytest.mark.parametrize("label, template_id, role", ROLE_OF)
def test_segment_labels_map_through_the_template_table(label, template_id, role):
    pytest.importorskip(
        "strands_robots.segments", reason="strands_robots.segments (the segmentation module) is not present"
    )
    from strands_robots.ssc.segmentation import subtasks_from_segments

    (st,) = subtasks_from_segments([{"start": 0, "end": 30, "label": label}])
    assert st.source == f"segment:{template_id}"
    assert VERBS[st.actions[0].verb].role == role


def test_segmentation_chain_pick_place_with_a_single_arm_gripper():
    pytest.importorskip(
        "strands_robots.segments", reason="strands_robots.segments (the segmentation module) is not present"
    )
    from strands_robots.ssc.segmentation import subtasks_from_segments

    segments = [
        {"start": 0, "end": 100, "label": "navigate to the counter"},
        {"start": 100, "end": 200, "label": "pick up the bowl from the counter"},
        {"start": 200, "end": 300, "label": "place the bowl in the sink"},
        {"start": 300, "end": 373, "label": "TASK_COMPLETE"},
    ]
    events = [ev(105, "right", "open"), ev(195, "right", "close"), ev(275, "right", "open"), ev(295, "right", "close")]
    chain = build_chain(subtasks_from_segments(segments), events)
    assert chain.action_dscp_list == [
        "robot moves to counter",
        "right arm picks up bowl from counter",
        "right arm places bowl in sink",
        "robot idles",
    ]
    assert [configuration(e.scene_graph) for e in chain.subtasks] == ["E", "R", "E", "E"]
    assert check_chain(chain, events) == []


def test_stored_segments_with_template_fields_need_no_parser():
    from strands_robots.ssc.segmentation import subtasks_from_segments

    stored = [
        {
            "start": 0,
            "end": 40,
            "label": "x",
            "template_id": "L4",
            "slots": {"theme": "jam", "destination": "plate"},
            "modifiers": {"relation": "next to"},
        }
    ]
    (st,) = subtasks_from_segments(stored)
    assert (st.actions[0].verb, st.actions[0].obj, st.actions[0].targets) == ("place", "jam", [("next to", "plate")])
    with pytest.raises(LabelValidationError, match="integer frames"):
        subtasks_from_segments([{"start": "0", "end": 4, "label": "x", "template_id": "P1"}])
    with pytest.raises(UnknownVerbError, match="TEMPLATE_VERBS"):
        subtasks_from_segments([{"start": 0, "end": 4, "label": "x", "template_id": "Z9"}])


# ------------------------------------------------------------- L2: spatial_prefix names the arm
@pytest.mark.parametrize(
    "token, arm",
    [
        ("right", "right"),
        ("Left", "left"),
        ("left_hand", "left"),
        ("with the right arm", "right"),
        ("right-gripper", "right"),
        ("both hands", "coop"),
        ("left_door", None),  # a part of the object (BEHAVIOR door names), not an arm
        ("right side", None),
        ("left of", None),
        ("near", None),
        ("on top of", None),
    ],
)
def test_spatial_prefix_arm_names(token, arm):
    assert spatial_prefix_arm(token) == arm


def test_a_press_with_spatial_prefix_right_is_settled_at_l2():
    """Left hand holds a pan, "press stove" with spatial_prefix ["right"]: L2, not the free-arm heuristic."""
    press = sub(0, 0, 100, act("press", "stove_1"), spatial_prefix=["right"])
    entry = build_entry(press, state("pan_2"), [])
    (a,) = entry.actions
    assert (a.arm, a.arm_source, a.arm_confidence) == ("right", "L2", "medium")
    (q,) = entry.pending_queries
    assert (q.kind, q.status, q.resolved_by, q.answer) == ("arm_assignment", "resolved", "L2", {"arm": "right"})
    # without the field (the paper's VL-only mode) the same entry falls back to the low-confidence heuristic
    entry = build_entry(press, state("pan_2"), [], fields=("skill_type", "memory_prefix", "instance_ids"))
    (a,) = entry.actions
    assert (a.arm, a.arm_source, a.arm_confidence) == ("right", "heuristic", "low")
    assert entry.pending_queries[0].status == "pending"


def test_spatial_prefix_overrides_nothing_it_does_not_name():
    # both hands free: no heuristic, the arm comes from the prefix alone
    entry = build_entry(sub(0, 0, 100, act("press", "button_1"), spatial_prefix=["left"]), state(), [])
    assert [(a.arm, a.arm_source) for a in entry.actions] == [("left", "L2")]
    # a spatial modifier that is not an arm, or two arms at once, settles nothing
    for prefix in (["left_door"], ["on top of"], ["left", "right"]):
        entry = build_entry(sub(0, 0, 100, act("press", "button_1"), spatial_prefix=prefix), state(), [])
        assert [(a.arm, a.arm_source) for a in entry.actions] == [("unsure", "unresolved")], prefix
        assert entry.pending_queries[0].status == "pending"


def test_behavior_press_with_spatial_prefix_end_to_end():
    """The radio episode with the press done one-handed and annotated spatial_prefix [["right"]] (nested)."""
    doc = json.loads(json.dumps(RADIO))
    doc["skill_annotation"][2].update(skill_type=["uncoordinated"], spatial_prefix=[["right"]])
    subs = load_behavior_annotation(doc)
    assert subs[2].spatial_prefix == ["right"]
    events = [ev(900, "right", "close"), ev(1600, "right", "open")]
    chain = build_chain(subs, events, task_name="turning on radio")
    (press,) = chain.subtasks[2].actions
    assert (press.arm, press.arm_source, press.action_dscp) == ("right", "L2", "right arm presses radio")
    assert chain.pending() == [] and check_chain(chain, events) == []
    # without it the heuristic picks the only free hand, the left one, with low confidence
    chain = build_chain(subs, events, annotation_fields=("skill_type", "memory_prefix", "instance_ids"))
    (press,) = chain.subtasks[2].actions
    assert (press.arm, press.arm_source, press.arm_confidence) == ("left", "heuristic", "low")


def test_on_top_of_is_a_spatial_condition_not_part_of_the_object():
    # paper Appendix B: spatial_prefix holds spatial modifiers, e.g. "near", "on top of"; the
    # ActionEntry keeps them in action_cond (Appendix A), never inside action_obj
    a = parse_skill_text("place on top of table")
    assert (a.verb, a.obj, a.targets) == ("place", None, [("on top of", "table")])
    b = parse_skill_text("place on top of", ["book_1", "shelf_2"])
    assert (b.verb, b.obj, b.targets) == ("place", "book_1", [("on top of", "shelf_2")])
    c = parse_skill_text("stack on top of")
    assert (c.verb, c.obj) == ("stack", None)
    d = parse_skill_text("right place in front of", ["cup_1", "plate_2"])
    assert (d.verb, d.arm, d.obj, d.targets) == ("place", "right", "cup_1", [("in front of", "plate_2")])
    assert parse_skill_text("place on", ["a_1", "b_2"]).targets == [("on", "b_2")]  # a plain 'on' stays
    doc = {"skill_annotation": [
        {"skill_description": ["place on"], "object_id": [["book_1", "shelf_2"]], "spatial_prefix": [["on top of"]],
         "frame_duration": [0, 10]},
        {"skill_description": ["place on top of"], "object_id": [["book_3", "shelf_2"]],
         "spatial_prefix": ["on top of", "right"], "frame_duration": [10, 20]},
    ]}  # fmt: skip
    first, second = load_behavior_annotation(doc)
    assert (first.actions[0].obj, first.actions[0].targets, first.actions[0].cond) == (
        "book_1", [("on", "shelf_2")], ["on top of"]
    )  # fmt: skip
    assert (second.actions[0].obj, second.actions[0].cond) == ("book_3", [])  # written already; 'right' is an arm
    entry = build_chain([first], [ev(5, "right", "open")], arms=("right",)).subtasks[0]
    assert entry.actions[0].action_obj == "book_1" and "on top of" in entry.actions[0].action_cond

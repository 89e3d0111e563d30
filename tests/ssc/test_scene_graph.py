"""Every row of the SSC paper's Tables 4, 5 and 6 (docs/ssc.md, "Scene graph and transitions")
as a transition test.

Each case gives a before-state, one subtask label and the gripper events of its window
[100, 200), and checks the actions created (count and arms, the table's last column)
and the after-state configuration (Table 1). The checker must find nothing wrong with a
legal row.
"""

from __future__ import annotations

import pytest

from strands_robots.ssc.checker import check_chain
from strands_robots.ssc.records import StructuredSubtaskChain
from strands_robots.ssc.scene_graph import CONFIGURATIONS, configuration
from tests.ssc.ssc_fakes import act, build_entry, ev, state, sub


def _chain_of(entry, before):
    return StructuredSubtaskChain(
        task_name="t",
        task_duration=(0, 300),
        object_list=[],
        action_dscp_list=[],
        subtasks=[entry],
        initial_state=before,
    )


def _legal(entry, before, events):
    """The checker finds no I1/I2/I3/I4 anomaly inside the entry (end-state anomalies aside)."""
    anomalies = [a for a in check_chain(_chain_of(entry, before), events) if a.kind != "not_released_at_end"]
    assert anomalies == [], [a.explanation for a in anomalies]


def test_table1_has_seven_configurations():
    assert list(CONFIGURATIONS) == ["E", "L", "R", "D", "Dd", "S", "D?"]
    assert configuration(state()) == "E"
    assert configuration(state("cup")) == "L"
    assert configuration(state(None, "cup")) == "R"
    assert configuration(state("cup", "plate")) == "D"
    assert configuration(state("candle_89", "candle_90")) == "Dd"
    assert configuration(state("box", "box", True)) == "S"
    assert configuration(state("box", "box", "unsure")) == "D?"


# ---------------------------------------------------------------- Table 4: acquire (gripper close)
TABLE4 = [
    # (row, before, label action, events, expected arms, expected config, L2 fields)
    (
        "E->L left close",
        state(),
        act("pick_up_from", "cup_1", ("from", "table_0")),
        [ev(150, "left", "close")],
        ["left"],
        "L",
    ),
    (
        "E->R right close",
        state(),
        act("pick_up_from", "cup_1", ("from", "table_0")),
        [ev(150, "right", "close")],
        ["right"],
        "R",
    ),
    (
        "L->D right close, different object",
        state("cup_1"),
        act("pick", "plate_2"),
        [ev(150, "right", "close")],
        ["right"],
        "D",
    ),
    (
        "R->D left close, different object",
        state(None, "cup_1"),
        act("pick", "plate_2"),
        [ev(150, "left", "close")],
        ["left"],
        "D",
    ),
    (
        "L->S right close, same object",
        state("box_1"),
        act("pick", "box_1"),
        [ev(150, "right", "close")],
        ["right"],
        "S",
    ),
    (
        "R->S left close, same object",
        state(None, "box_1"),
        act("pick", "box_1"),
        [ev(150, "left", "close")],
        ["left"],
        "S",
    ),
]


@pytest.mark.parametrize("row, before, action, events, arms, config", TABLE4, ids=[r[0] for r in TABLE4])
def test_table4_acquire_rows(row, before, action, events, arms, config):
    entry = build_entry(sub(0, 100, 200, action), before, events)
    assert [a.arm for a in entry.actions] == arms
    assert all(a.role == "acquire" and a.action_type == "grasp" for a in entry.actions)
    assert configuration(entry.scene_graph) == config
    assert entry.actions_gripper == {e.arm: e.kind for e in events}
    _legal(entry, before, events)


def test_table4_E_to_D_both_close_different_objects():
    both = [ev(140, "left", "close"), ev(150, "right", "close")]
    labelled = build_entry(
        sub(0, 100, 200, act("pick", "cup_1", arm="left"), act("pick", "plate_2", arm="right")), state(), both
    )
    assert [(a.arm, a.action_obj) for a in labelled.actions] == [("left", "cup_1"), ("right", "plate_2")]
    assert configuration(labelled.scene_graph) == "D"
    _legal(labelled, state(), both)
    # one arm named: L1 gives the other object to the other closing hand
    half = build_entry(sub(0, 100, 200, act("pick", "cup_1", arm="left"), act("pick", "plate_2")), state(), both)
    assert [(a.arm, a.arm_source) for a in half.actions] == [("left", "label"), ("right", "L1")]
    assert configuration(half.scene_graph) == "D"


def test_table4_E_to_S_both_close_same_physical_object():
    both = [ev(140, "left", "close"), ev(150, "right", "close")]
    entry = build_entry(sub(0, 100, 200, act("pick_up", "box"), skill_type=["coordinated"]), state(), both)
    assert [a.arm for a in entry.actions] == ["coop"]
    assert configuration(entry.scene_graph) == "S"
    same_q = next(q for q in entry.pending_queries if q.kind == "same_object")
    assert (same_q.status, same_q.resolved_by, same_q.branch) == ("resolved", "L2", "a")
    _legal(entry, state(), both)


def test_table4_E_to_Dq_both_close_same_named_unresolved():
    both = [ev(140, "left", "close"), ev(150, "right", "close")]
    entry = build_entry(sub(0, 100, 200, act("pick_up", "box")), state(), both, fields=())
    assert [(a.arm, a.same_object) for a in entry.actions] == [("unsure", "unsure")]
    assert configuration(entry.scene_graph) == "D?"
    assert {q.kind: q.status for q in entry.pending_queries} == {"same_object": "pending", "arm_assignment": "pending"}


# ---------------------------------------------------------------- Table 5: release (gripper open)
TABLE5 = [
    (
        "L->E left open",
        state("cup_1"),
        act("place_on", "cup_1", ("on", "table_0")),
        [ev(150, "left", "open")],
        ["left"],
        "E",
    ),
    (
        "R->E right open",
        state(None, "cup_1"),
        act("place_on", "cup_1", ("on", "table_0")),
        [ev(150, "right", "open")],
        ["right"],
        "E",
    ),
    (
        "D->L right open",
        state("cup_1", "plate_2"),
        act("place_on", "plate_2"),
        [ev(150, "right", "open")],
        ["right"],
        "L",
    ),
    ("D->R left open", state("cup_1", "plate_2"), act("place_on", "cup_1"), [ev(150, "left", "open")], ["left"], "R"),
    (
        "Dd->E both open",
        state("candle_89", "candle_90"),
        act("place_on", "candle"),
        [ev(140, "left", "open"), ev(150, "right", "open")],
        ["left", "right"],
        "E",
    ),
    (
        "S->E both open",
        state("box_1", "box_1", True),
        act("place_on", "box_1"),
        [ev(140, "left", "open"), ev(150, "right", "open")],
        ["coop"],
        "E",
    ),
    (
        "S->L/R one arm open: cooperative release",
        state("box_1", "box_1", True),
        act("place_on", "box_1"),
        [ev(150, "right", "open")],
        ["coop"],
        "E",
    ),
]


@pytest.mark.parametrize("row, before, action, events, arms, config", TABLE5, ids=[r[0] for r in TABLE5])
def test_table5_release_rows(row, before, action, events, arms, config):
    entry = build_entry(sub(0, 100, 200, action), before, events)
    assert [a.arm for a in entry.actions] == arms
    assert all(a.role == "release" for a in entry.actions)
    assert configuration(entry.scene_graph) == config
    _legal(entry, before, events)


def test_table5_D_to_E_both_open_makes_two_actions():
    before = state("cup_1", "plate_2")
    events = [ev(140, "left", "open"), ev(150, "right", "open")]
    entry = build_entry(sub(0, 100, 200, act("place_on", "cup_1")), before, events)
    assert [(a.arm, a.action_obj, a.inferred) for a in entry.actions] == [
        ("left", "cup_1", False),
        ("right", "plate_2", True),
    ]
    assert configuration(entry.scene_graph) == "E"
    _legal(entry, before, events)


def test_table5_Dq_to_E_unresolved_is_one_unsure_action_and_flagged():
    before = state("box", "box", "unsure")
    events = [ev(140, "left", "open"), ev(150, "right", "open")]
    entry = build_entry(sub(0, 100, 200, act("place_on", "box")), before, events, fields=())
    assert [a.arm for a in entry.actions] == ["unsure"]
    assert configuration(entry.scene_graph) == "E"
    kinds = [(a.invariant, a.kind) for a in check_chain(_chain_of(entry, before), events)]
    assert kinds == [("I2", "identity_unresolved")]


# ------------------------------------------------- Table 6: hand-over, stateless, tool-release
def test_table6_L_to_R_hand_over_giver_left():
    before = state("cup_1")
    events = [ev(140, "left", "open"), ev(145, "right", "close")]
    entry = build_entry(sub(0, 100, 200, act("hand_over", "cup_1")), before, events)
    assert [(a.arm, a.role, a.receiver) for a in entry.actions] == [("left", "hand_over", "right")]
    assert configuration(entry.scene_graph) == "R"
    assert entry.actions[0].action_dscp == "left arm hands over cup to right arm"
    _legal(entry, before, events)


def test_table6_R_to_L_hand_over_giver_right():
    before = state(None, "cup_1")
    events = [ev(140, "right", "open"), ev(145, "left", "close")]
    entry = build_entry(sub(0, 100, 200, act("hand_over_to", "cup_1")), before, events)
    assert [(a.arm, a.role, a.receiver) for a in entry.actions] == [("right", "hand_over", "left")]
    assert configuration(entry.scene_graph) == "L"
    _legal(entry, before, events)


def test_table6_L_to_R_as_a_pick_by_the_receiver():
    """Appendix D.1: L -> R may also be 1 pick-up action arm=right (the left hand lets go)."""
    before = state("cup_1")
    events = [ev(140, "left", "open"), ev(145, "right", "close")]
    entry = build_entry(sub(0, 100, 200, act("pick", "cup_1")), before, events)
    assert [(a.arm, a.role, a.receiver) for a in entry.actions] == [("right", "take_over", "left")]
    assert configuration(entry.scene_graph) == "R"
    _legal(entry, before, events)


@pytest.mark.parametrize("verb", ["push", "press", "tap"])
def test_table6_contact_self_loop(verb):
    before = state(None, "cup_1")
    entry = build_entry(sub(0, 100, 200, act(verb, "button_3", arm="left")), before, [])
    assert [(a.arm, a.action_type) for a in entry.actions] == [("left", "contact")]
    assert entry.scene_graph == before


@pytest.mark.parametrize("verb", ["chop", "stir", "sweep"])
def test_table6_tool_use_self_loop(verb):
    before = state(None, "spoon_1")
    entry = build_entry(sub(0, 100, 200, act(verb, "pot_2")), before, [])
    assert [(a.arm, a.action_type, a.arm_source) for a in entry.actions] == [("right", "tool_use", "L1")]
    assert entry.scene_graph == before


@pytest.mark.parametrize("verb", ["insert", "hang", "attach"])
def test_table6_tool_release_clears_the_held_tool(verb):
    before = state("key_1")
    entry = build_entry(sub(0, 100, 200, act(verb, "key_1", ("into", "lock_2"))), before, [ev(150, "left", "open")])
    assert [(a.arm, a.role) for a in entry.actions] == [("left", "tool_release")]
    assert configuration(entry.scene_graph) == "E"


def test_transient_hold_is_cleared_at_the_boundary():
    entry = build_entry(
        sub(0, 100, 200, act("open_door", "fridge_3")), state(), [ev(120, "right", "close"), ev(180, "right", "open")]
    )
    assert [(a.arm, a.role, a.arm_source) for a in entry.actions] == [("right", "transient", "L1")]
    assert configuration(entry.scene_graph) == "E"
    assert entry.actions_gripper == {"right": "close+open"}


def test_generic_open_with_a_held_tool_is_tool_use():
    entry = build_entry(sub(0, 100, 200, act("open", "can_2", arm="left")), state("opener_1"), [])
    assert [(a.role, a.action_type) for a in entry.actions] == [("tool_persistent", "tool_use")]
    assert entry.scene_graph == state("opener_1")

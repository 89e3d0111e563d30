"""Checker details (gaps g1/g2, I2, I4, accuracy vs consistency) and natural-language rendering."""

from __future__ import annotations

import msgspec

from strands_robots.ssc import action_accuracy, build_chain, check_chain, render_action
from strands_robots.ssc.records import ActionEntry
from strands_robots.ssc.render import gerund, third_person
from strands_robots.ssc.scene_graph import configuration
from tests.ssc.ssc_fakes import act, build_entry, ev, state, sub


def test_paper_sentence():
    a = ActionEntry(
        arm="right",
        action_type="grasp",
        action_verb="pick",
        action_obj="book",
        verb="pick",
        action_cond=["from breakfast_table"],
    )
    assert render_action(a) == "right arm picks book from breakfast table"
    assert [third_person(v) for v in ("push", "carry", "place", "go")] == ["pushes", "carries", "places", "goes"]
    assert [gerund(v) for v in ("stir", "place", "open", "pour", "tie", "pick")] == [
        "stirring",
        "placing",
        "opening",
        "pouring",
        "tying",
        "picking",
    ]


def test_g1_acquire_on_an_occupied_arm_is_an_anomaly_not_an_overwrite():
    subtasks = [
        sub(0, 0, 100, act("pick_up", "cup_1", arm="left")),
        sub(1, 100, 200, act("pick_up", "plate_2", arm="left")),
        sub(2, 200, 300, act("place_on", "cup_1", arm="left")),
    ]
    events = [ev(50, "left", "close"), ev(150, "left", "close"), ev(250, "left", "open")]
    chain = build_chain(subtasks, events)
    assert chain.subtasks[1].scene_graph.obj_in_left_hand == "cup_1"  # kept, not overwritten
    kinds = [(a.entry, a.invariant, a.kind, a.arm) for a in check_chain(chain, events)]
    assert kinds == [(1, "I2", "acquire_while_holding", "left")]


def test_g2_heuristic_arm_is_low_confidence_and_the_query_stays_pending():
    entry = build_entry(sub(0, 0, 100, act("turn_on", "stove_1")), state("pan_2"), [])
    (a,) = entry.actions
    assert (a.arm, a.arm_source, a.arm_confidence) == ("right", "heuristic", "low")
    assert entry.pending_queries[0].status == "pending"


def test_empty_hand_query_is_resolved_deterministically():
    entry = build_entry(
        sub(0, 0, 100, act("place_on", "cup_1", arm="left")), state(None, "cup_1"), [ev(50, "right", "open")]
    )
    (q,) = entry.pending_queries
    assert (q.kind, q.requires_vl, q.resolved_by) == ("empty_hand", False, "L1")
    assert q.answer == {"arm": "right", "reassigned_from": "left"}
    assert entry.actions[0].arm == "right" and configuration(entry.scene_graph) == "E"


def test_release_of_a_different_instance_is_an_identity_anomaly():
    subtasks = [
        sub(0, 0, 100, act("pick_up", "candle_89", arm="left")),
        sub(1, 100, 200, act("place_on", "candle_90", arm="left")),
    ]
    events = [ev(50, "left", "close"), ev(150, "left", "open")]
    chain = build_chain(subtasks, events)
    kinds = [(a.entry, a.invariant, a.kind) for a in check_chain(chain, events)]
    assert (1, "I2", "object_mismatch") in kinds and ("I1", "not_released_at_end") in [(k[1], k[2]) for k in kinds]


def test_i4_hand_over_without_the_receiver_close():
    subtasks = [
        sub(0, 0, 100, act("pick_up", "cup_1", arm="left")),
        sub(1, 100, 200, act("hand_over", "cup_1")),
        sub(2, 200, 300, act("place_on", "cup_1")),
    ]
    events = [ev(50, "left", "close"), ev(150, "left", "open"), ev(250, "right", "open")]
    chain = build_chain(subtasks, events)
    anomalies = check_chain(chain, events)
    assert [(a.entry, a.invariant, a.kind, a.arm) for a in anomalies] == [(1, "I4", "handover_missing_events", "left")]
    assert "missing: right close" in anomalies[0].explanation


def test_hand_over_to_an_occupied_receiver_is_illegal():
    entry = build_entry(
        sub(0, 0, 100, act("hand_over", "cup_1", arm="left")),
        state("cup_1", "plate_2"),
        [ev(40, "left", "open"), ev(45, "right", "close")],
    )
    chain = build_chain([], [])
    chain.subtasks = [entry]
    chain.initial_state = state("cup_1", "plate_2")
    kinds = [(a.invariant, a.kind) for a in check_chain(chain, [ev(40, "left", "open"), ev(45, "right", "close")])]
    assert ("I4", "handover_receiver_occupied") in kinds


def test_shared_boundary_frame_is_accepted_in_either_window():
    subtasks = [sub(0, 0, 100, act("pick_up", "cup_1", arm="right")), sub(1, 100, 200, act("place_on", "cup_1"))]
    for frame in (100,):  # the close exactly on the shared boundary belongs to the first window too
        events = [ev(frame, "right", "close"), ev(150, "right", "open")]
        assert check_chain(build_chain(subtasks, events), events) == []
    events = [ev(101, "right", "close"), ev(150, "right", "open")]
    assert [a.kind for a in check_chain(build_chain(subtasks, events), events)] == ["annotation_timing"]
    assert check_chain(build_chain(subtasks, events, tolerance=1), events, tolerance=1) == []


def test_state_edited_by_hand_is_a_state_mismatch():
    subtasks = [sub(0, 0, 100, act("pick_up", "cup_1", arm="right"))]
    events = [ev(50, "right", "close")]
    chain = build_chain(subtasks, events)
    chain.subtasks[0].scene_graph = msgspec.structs.replace(chain.subtasks[0].scene_graph, obj_in_right_hand="mug_2")
    assert ("I2", "state_mismatch") in [(a.invariant, a.kind) for a in check_chain(chain, events)]


def test_locally_accurate_but_globally_inconsistent():
    """Sec. 4.4: the two measures are independent, and the report shows both."""
    subtasks = [sub(0, 0, 100, act("place_on", "book_1", arm="right"))]  # a release that matches no acquire
    events = [ev(50, "right", "open")]
    chain = build_chain(subtasks, events)
    reference = build_chain(subtasks, events)
    acc = action_accuracy(chain, reference)
    assert (acc["cells"], acc["correct"], acc["accuracy"]) == (1, 1, 1.0)
    assert [a.kind for a in check_chain(chain, events)] == ["release_without_hold"]
    # and globally consistent but locally wrong: a systematic misnaming of the object
    good = [sub(0, 0, 100, act("pick_up", "mug_1", arm="right")), sub(1, 100, 200, act("place_on", "mug_1"))]
    wrong = [sub(0, 0, 100, act("pick_up", "cup_1", arm="right")), sub(1, 100, 200, act("place_on", "cup_1"))]
    events = [ev(50, "right", "close"), ev(150, "right", "open")]
    named = build_chain(wrong, events)
    assert check_chain(named, events) == []
    acc = action_accuracy(named, build_chain(good, events))
    assert (acc["cells"], acc["correct"], acc["per_field"]["arm"], acc["per_field"]["action_obj"]) == (2, 0, 2, 0)


def test_keep_needs_the_object_in_hand():
    """H1 'hold ... under' keeps an object already held; keeping a missing object is I2."""
    subtasks = [
        sub(0, 0, 100, act("pick_up", "carrot_1", arm="right")),
        sub(1, 100, 200, act("hold_under", "carrot_1", ("under", "faucet_2"))),
        sub(2, 200, 300, act("hold_under", "sponge_3", ("under", "faucet_2"), arm="left")),
        sub(3, 300, 400, act("place_on", "carrot_1")),
    ]
    events = [ev(50, "right", "close"), ev(350, "right", "open")]
    chain = build_chain(subtasks, events)
    assert chain.subtasks[1].actions[0].arm == "right"
    assert chain.action_dscp_list[1] == "right arm holds carrot under faucet"
    assert [(a.entry, a.invariant, a.kind, a.arm) for a in check_chain(chain, events)] == [
        (2, "I2", "object_not_held", "left")
    ]


def test_an_object_of_unresolved_arm_never_released_is_reported():
    chain = build_chain([sub(0, 0, 100, act("pick_up", "cup_1"))], [], annotation_fields=())
    assert chain.subtasks[0].scene_graph.uncertain_objects == ("cup_1",)
    kinds = [(a.invariant, a.kind, a.arm) for a in check_chain(chain, [])]
    assert kinds == [("I3", "annotation_timing", "unsure"), ("I1", "not_released_at_end", "unsure")]


def test_a_gripper_signature_that_does_not_match_the_trigger_column_is_flagged():
    """Paper Appendix C: flagged "when the gripper signature recorded in the SST does not match
    the trigger column of the corresponding row" (E -> L is "left close", L -> E "left open")."""
    events = [ev(50, "left", "close"), ev(150, "left", "open")]
    chain = build_chain(
        [sub(0, 0, 100, act("pick_up", "cup_1", arm="left")), sub(1, 100, 200, act("place_on", "cup_1", arm="left"))],
        events,
    )
    assert [e.actions_gripper for e in chain.subtasks] == [{"left": "close"}, {"left": "open"}]
    assert check_chain(chain, events) == []
    wrong = msgspec.structs.replace(chain.subtasks[0], actions_gripper={"right": "close"})
    quiet = msgspec.structs.replace(chain.subtasks[1], actions_gripper=None)
    edited = msgspec.structs.replace(chain, subtasks=[wrong, quiet])
    found = [(a.invariant, a.kind, a.entry, a.arm) for a in check_chain(edited, events)]
    assert found == [
        ("I3", "gripper_signature_mismatch", 0, "left"),
        ("I3", "gripper_signature_mismatch", 1, "left"),
    ]
    text = [a.explanation for a in check_chain(edited, events)]
    assert "needs left close" in text[0] and "records {'right': 'close'}" in text[0]
    assert "needs left open" in text[1] and "records no gripper event" in text[1]

"""The paper's Figure 2 trace, Figure 3 and Figure 4 anomaly patterns, and the query ordering."""

from __future__ import annotations

from strands_robots.ssc import build_chain, check_chain, summarize_anomalies
from strands_robots.ssc.scene_graph import configuration
from tests.ssc.ssc_fakes import ScriptedResolver, act, build_entry, ev, state, sub


# ---------------------------------------------------------------------------- Figure 2
def _figure2():
    subtasks = [
        sub(20, 1000, 1100, act("pick_up", "box")),  # both arms acquire a same-named object
        sub(21, 1100, 1300, act("move_to", None, ("to", "shelf"))),
        sub(22, 1300, 1400, act("place_on", "box", ("on", "shelf"))),
    ]
    events = [
        ev(1050, "left", "close"),
        ev(1052, "right", "close"),
        ev(1350, "right", "open"),
        ev(1352, "left", "open"),
    ]
    return subtasks, events


def test_figure2_one_l3_answer_settles_the_later_release():
    subtasks, events = _figure2()
    resolver = ScriptedResolver(same_object={"same_object": True, "confidence": "high", "reasoning": "one box"})
    chain = build_chain(subtasks, events, task_name="carry box", resolver=resolver, annotation_fields=())
    s20, s21, s22 = chain.subtasks
    # S20: falls through to L3, one same_object query, commits same = T
    assert [r.kind for r in resolver.requests] == ["same_object"]
    assert resolver.requests[0].branch == "a"
    q = next(q for q in s20.pending_queries if q.kind == "same_object")
    assert (q.status, q.resolved_by, q.answer) == ("resolved", "L3", {"same_object": True})
    assert [a.arm for a in s20.actions] == ["coop"]
    assert configuration(s20.scene_graph) == "S"
    # S21: the state propagates
    assert s21.st_motion == "move" and configuration(s21.scene_graph) == "S"
    assert s21.actions == [] and chain.action_dscp_list[1] == "robot moves to shelf while both arms hold box"
    # S22: L1 infers the cooperative release, no further VL call
    assert [a.arm for a in s22.actions] == ["coop"]
    (arm_q,) = s22.pending_queries
    assert (arm_q.kind, arm_q.resolved_by) == ("arm_assignment", "L1")
    assert "cooperative release" in arm_q.attempts[-1]
    assert configuration(s22.scene_graph) == "E"
    assert len(resolver.requests) == 1
    assert chain.pending() == []
    assert check_chain(chain, events) == []


def test_figure2_in_isolation_the_release_would_re_raise_the_query():
    """Without the propagated state (D? at S22), the same-object question comes back."""
    resolver = ScriptedResolver(same_object=None, arm_assignment=None)
    build_entry(
        sub(22, 1300, 1400, act("place_on", "box")),
        state("box", "box", "unsure"),
        [ev(1350, "right", "open"), ev(1352, "left", "open")],
        resolver=resolver,
        fields=(),
    )
    assert [r.kind for r in resolver.requests] == ["same_object", "arm_assignment"]
    assert resolver.requests[0].branch == "c"


def test_figure2_without_a_model_the_queries_stay_pending():
    subtasks, events = _figure2()
    chain = build_chain(subtasks, events, annotation_fields=())
    pending = [(st, q.kind) for st, q in chain.pending()]
    assert (20, "same_object") in pending and (20, "arm_assignment") in pending
    assert configuration(chain.subtasks[0].scene_graph) == "D?"
    assert any("no vision-language model" in a for _, q in chain.pending() for a in q.attempts)


# -------------------------------------------------------------------- pending-query ordering
def test_same_object_is_asked_before_arm_assignment_and_settles_it():
    both = [ev(140, "left", "close"), ev(150, "right", "close")]
    resolver = ScriptedResolver(same_object={"same_object": True}, arm_assignment={"arm": "left"})
    entry = build_entry(sub(0, 100, 200, act("pick_up", "tray")), state(), both, resolver=resolver, fields=())
    assert [q.kind for q in entry.pending_queries] == ["same_object", "arm_assignment"]
    assert [r.kind for r in resolver.requests] == ["same_object"]  # the arm follows deterministically
    arm_q = entry.pending_queries[1]
    assert (arm_q.resolved_by, arm_q.answer) == ("L1", {"arm": "coop"})


def test_different_instances_answer_gives_two_actions():
    both = [ev(140, "left", "close"), ev(150, "right", "close")]
    resolver = ScriptedResolver(same_object={"same_object": "false"})
    entry = build_entry(sub(0, 100, 200, act("pick_up", "candle")), state(), both, resolver=resolver, fields=())
    assert [a.arm for a in entry.actions] == ["left", "right"]
    assert configuration(entry.scene_graph) == "Dd"


def test_a_failed_l3_query_is_asked_once():
    resolver = ScriptedResolver(arm_assignment=None)
    entry = build_entry(sub(0, 100, 200, act("press", "button_1")), state("a_1", "b_2"), [], resolver=resolver)
    assert len(resolver.requests) == 1
    assert entry.pending_queries[0].status == "pending"
    assert entry.actions[0].arm == "unsure"


# ------------------------------------------------------------------------------- Figure 3
def test_figure3_left_release_whose_event_falls_in_the_previous_window():
    """Task 26: both candle releases happen in [7289, 7336]; the second window has none."""
    subtasks = [
        sub(0, 7000, 7100, act("pick_up", "pillar_candle_89", arm="left")),
        sub(1, 7100, 7289, act("pick_up", "pillar_candle_90", arm="right")),
        sub(2, 7289, 7336, act("place_on", "pillar_candle_89", ("on", "table_1"))),
        sub(3, 7336, 7431, act("place_on", "pillar_candle_90", ("on", "table_1"))),
    ]
    events = [
        ev(7050, "left", "close"),
        ev(7200, "right", "close"),
        ev(7300, "left", "open"),
        ev(7320, "right", "open"),
    ]
    chain = build_chain(subtasks, events)
    st2 = chain.subtasks[2]
    assert [(a.arm, a.action_obj, a.inferred) for a in st2.actions] == [
        ("left", "pillar_candle_89", False),
        ("right", "pillar_candle_90", True),
    ]
    anomalies = check_chain(chain, events)
    kinds = sorted((a.entry, a.invariant, a.kind) for a in anomalies)
    assert kinds == [(3, "I1", "release_without_hold"), (3, "I3", "annotation_timing")]
    timing = next(a for a in anomalies if a.kind == "annotation_timing")
    assert timing.frames == [7320] and timing.window == (7336, 7431)
    assert "16 frames before the window" in timing.explanation


def test_figure3_right_grasp_far_outside_its_window():
    """Task 34: 'pick up poster' annotated over [0, 235], the grasp happens around frame 780."""
    subtasks = [
        sub(0, 0, 235, act("pick_up_from", "poster_1", ("from", "wall_2"))),
        sub(1, 235, 1000, act("place_on", "poster_1", ("on", "table_3"))),
    ]
    events = [ev(780, "right", "close"), ev(950, "right", "open")]
    chain = build_chain(subtasks, events, annotation_fields=())
    assert chain.subtasks[0].actions[0].arm == "unsure"  # the reference arm is unresolved too (Table 11, dagger)
    assert chain.subtasks[0].scene_graph.uncertain_objects == ("poster_1",)
    assert chain.subtasks[1].actions[0].arm == "right"
    anomalies = check_chain(chain, events)
    assert [(a.entry, a.invariant, a.kind, a.frames) for a in anomalies] == [(0, "I3", "annotation_timing", [780])]
    assert "545 frames after the window" in anomalies[0].explanation
    # a tolerance wide enough accepts it
    assert check_chain(chain, events, tolerance=545) == []


# ------------------------------------------------------------------------------- Figure 4
def test_figure4_left_holding_without_a_gripper_close():
    """Task 24: the robot hugs an oatmeal box between two open grippers (A1): I3 fires."""
    subtasks = [
        sub(0, 11000, 11380, act("pick_up", "oatmeal_box_1", arm="coop")),
        sub(1, 11380, 11600, act("place_on", "oatmeal_box_1", ("on", "shelf_2"))),
    ]
    chain = build_chain(subtasks, [])
    assert [a.arm for e in chain.subtasks for a in e.actions] == ["coop", "coop"]
    anomalies = check_chain(chain, [])
    assert [(a.entry, a.invariant, a.kind, a.arm) for a in anomalies] == [
        (0, "I3", "annotation_timing", "coop"),
        (1, "I3", "annotation_timing", "coop"),
    ]
    assert "none in the whole episode" in anomalies[0].explanation


def test_figure4_right_objects_still_held_at_the_end():
    """Task 30: the lighter and the holder remain in the grippers at episode end (A2): I1 fires."""
    subtasks = [
        sub(0, 0, 100, act("pick_up", "lighter_1", arm="left")),
        sub(1, 100, 200, act("pick_up", "holder_2", arm="right")),
        sub(2, 200, 9650, act("ignite", "candle_3")),
    ]
    events = [ev(50, "left", "close"), ev(150, "right", "close")]
    chain = build_chain(subtasks, events)
    anomalies = check_chain(chain, events)
    assert [(a.invariant, a.kind, a.arm, a.frames) for a in anomalies] == [
        ("I1", "not_released_at_end", "left", [9650]),
        ("I1", "not_released_at_end", "right", [9650]),
    ]
    summary = summarize_anomalies(anomalies)
    assert summary["by_invariant"] == {"I1": 2, "I2": 0, "I3": 0, "I4": 0}
    assert summary["by_arm"] == {"left": 1, "right": 1}


def test_figure4_cooperative_hold_at_the_end_is_one_anomaly():
    subtasks = [sub(0, 0, 100, act("pick_up", "box_1", arm="coop"))]
    events = [ev(40, "left", "close"), ev(42, "right", "close")]
    anomalies = check_chain(build_chain(subtasks, events), events)
    assert [(a.kind, a.arm) for a in anomalies] == [("not_released_at_end", "coop")]

"""Subtask-chain rules checked with values the paper does not show (docs/ssc.md).

Two different objects acquired together, instance ids at L2, arm words in a label, the
source/condition phrases of a label, a gripper detector robust to an idle hand (on the
real bimanual g1 dataset), and base motion read from a base-velocity feature.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.ssc.behavior import parse_skill_text
from strands_robots.ssc.chain import build_chain
from strands_robots.ssc.checker import check_chain
from strands_robots.ssc.gripper import detect_gripper_events
from tests.ssc.ssc_fakes import ScriptedResolver, act, build_entry, ev, state, sub

runner = CliRunner()
BOTH_CLOSE = [ev(40, "left", "close"), ev(44, "right", "close")]


def arms_objs(entry):
    return [(a.arm, a.action_obj) for a in entry.actions]


def no_identity_anomaly(chain, events):
    return [a.kind for a in check_chain(chain, events) if a.invariant in ("I2", "I4")]


# -- two differently named acquires, both grippers closing, no arm named -----------------------------


def test_two_objects_acquired_together_are_two_actions_without_an_invented_co_hold():
    events = [*BOTH_CLOSE, ev(130, "left", "open"), ev(170, "right", "open")]
    subtasks = [
        sub(0, 0, 100, act("pick_up", "mug_4"), act("pick_up", "tray_7")),
        sub(1, 100, 150, act("place_on", "mug_4", ("on", "shelf_1"))),
        sub(2, 150, 200, act("place_on", "tray_7", ("on", "shelf_1"))),
    ]
    chain = build_chain(subtasks, events, task_name="tidy")
    first = chain.subtasks[0]
    assert arms_objs(first) == [("unsure", "mug_4"), ("unsure", "tray_7")]
    assert [a.same_object for a in first.actions] == [False, False]
    g = first.scene_graph
    assert (g.obj_in_left_hand, g.obj_in_right_hand, g.holding_same_object) == (None, None, False)
    assert set(g.uncertain_objects) == {"mug_4", "tray_7"}
    assert [(q.kind, q.status) for q in first.pending_queries] == [("arm_assignment", "pending")] * 2
    # the releases are settled by the single gripper that opens; no identity anomaly anywhere
    assert [arms_objs(e) for e in chain.subtasks[1:]] == [[("left", "mug_4")], [("right", "tray_7")]]
    assert no_identity_anomaly(chain, events) == []


def test_one_l3_answer_settles_both_hands_of_two_objects():
    resolver = ScriptedResolver(arm_assignment={"arm": "right", "confidence": "high"})
    chain = build_chain([sub(0, 0, 100, act("pick_up", "mug_4"), act("pick_up", "tray_7"))], BOTH_CLOSE,
                        resolver=resolver)  # fmt: skip
    entry = chain.subtasks[0]
    assert arms_objs(entry) == [("right", "mug_4"), ("left", "tray_7")]
    assert [a.arm_source for a in entry.actions] == ["L3", "L1"] and len(resolver.requests) == 1
    assert (entry.scene_graph.obj_in_left_hand, entry.scene_graph.obj_in_right_hand) == ("tray_7", "mug_4")


# -- L2 with instance ids -----------------------------------------------------------------------------


def test_two_instance_ids_get_one_arm_each():
    subtask = sub(0, 0, 100, act("pick_up", "bowl_12"), act("pick_up", "bowl_31"), object_ids=["bowl_12", "bowl_31"],
                  spatial_prefix=["left hand", "right hand"])  # fmt: skip
    entry = build_chain([subtask], BOTH_CLOSE).subtasks[0]
    assert arms_objs(entry) == [("left", "bowl_12"), ("right", "bowl_31")]
    assert [a.arm_source for a in entry.actions] == ["L2", "L1"]  # the second follows from the first
    g = entry.scene_graph
    assert (g.obj_in_left_hand, g.obj_in_right_hand, g.holding_same_object) == ("bowl_12", "bowl_31", False)
    # without an arm-naming field: still one action per object, arms pending, no co-hold
    bare = build_chain([sub(0, 0, 100, act("pick_up", "bowl_12"), act("pick_up", "bowl_31"),
                            object_ids=["bowl_12", "bowl_31"])], BOTH_CLOSE)  # fmt: skip
    assert arms_objs(bare.subtasks[0]) == [("unsure", "bowl_12"), ("unsure", "bowl_31")]
    assert no_identity_anomaly(bare, BOTH_CLOSE) == []


def test_a_single_instance_id_with_both_grippers_closing_is_a_co_grasp_without_l3():
    resolver = ScriptedResolver(same_object={"same_object": False})
    subtask = sub(0, 0, 100, act("pick_up", "crate_5", ("from", "floor_0")), object_ids=["crate_5", "floor_0"])
    entry = build_chain([subtask], BOTH_CLOSE, resolver=resolver).subtasks[0]
    assert arms_objs(entry) == [("coop", "crate_5")] and entry.actions[0].same_object is True
    assert entry.scene_graph.holding_same_object is True
    assert {q.kind: q.resolved_by for q in entry.pending_queries} == {"same_object": "L2", "arm_assignment": "L1"}
    assert resolver.requests == []  # no L3 query


# -- parsing the arm and the phrases of a label ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verb", "arm", "obj", "targets", "cond"),
    [
        ("left hand over spatula", "hand_over", "left", "spatula", [], []),
        ("right hand hand over ladle to left", "hand_over", "right", "ladle", [("to", "left")], []),
        ("left hand pick mug", "pick", "left", "mug", [], []),
        ("right pick novel from reading desk", "pick", "right", "novel", [("from", "reading_desk")], []),
        ("left arm place jar on top of lower shelf", "place", "left", "jar", [("on top of", "lower_shelf")], []),
        ("pick up the kettle with the oven mitt", "pick_up", None, "kettle", [], ["with oven mitt"]),
    ],
)
def test_label_parts_are_parsed_apart(text, verb, arm, obj, targets, cond):
    action = parse_skill_text(text)
    assert (action.verb, action.arm, action.obj, action.targets, action.cond) == (verb, arm, obj, targets, cond)


# -- the gripper detector and an idle hand -----------------------------------------------------------


def test_an_idle_hands_noise_yields_no_events_relative_to_the_dataset_range():
    rng = np.random.default_rng(7)
    idle = 0.61 + 0.016 * np.sin(np.arange(300) / 9.0) + rng.normal(0, 0.004, 300)
    assert len(detect_gripper_events(idle, arm="left", mode="position")) >= 2  # the episode's own range: noise
    assert detect_gripper_events(idle, arm="left", mode="position", value_range=(0.12, 0.97)) == []
    acting = np.concatenate([np.full(100, 0.95), np.full(100, 0.2), np.full(100, 0.95)])
    found = detect_gripper_events(acting, arm="right", mode="position", value_range=(0.12, 0.97))
    assert [(e.frame, e.kind) for e in found] == [(100, "close"), (200, "open")]


@pytest.mark.parametrize("bad", [(1.0, 0.0), (0.0, float("nan")), ("a", "b"), (1.0,)])
def test_a_bad_value_range_is_a_typed_error(bad):
    from strands_robots.errors import LabelValidationError

    with pytest.raises(LabelValidationError, match="value_range"):
        detect_gripper_events([0.1, 0.9, 0.1], arm="left", mode="position", value_range=bad)


HANDS = ["--gripper", "left=observation.state:kLeftHandIndex", "--gripper", "right=observation.state:kRightHandIndex"]


def g1_events(root, *extra):
    result = runner.invoke(app, ["ssc", "events", str(root), *HANDS, "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_g1_idle_left_hand_yields_no_events_by_default(shared_dataset):
    root = shared_dataset("g1-inspire-v21")
    doc = g1_events(root)
    assert doc["channels"]["left"]["range"] == pytest.approx([0.514, 0.902], abs=1e-3)  # episodes_stats.jsonl
    assert doc["detector"]["range"] == "dataset"
    assert len(doc["episodes"]) == 100
    left = {ep: [(e["kind"], e["frame"]) for e in evs if e["arm"] == "left"] for ep, evs in doc["episodes"].items()}
    # the idle left hand is quiet in 99 episodes; in episode 90 it closes slowly by 0.07 (24% of
    # its range across the dataset) over its last 60 frames: a real movement, not noise
    assert {ep: evs for ep, evs in left.items() if evs} == {"90": [("close", 434)]}
    assert sum(e["arm"] == "right" for evs in doc["episodes"].values() for e in evs) == 357
    # each episode's own range turns the left hand's noise into events
    per_episode = g1_events(root, "--range", "episode", "--episodes", "1")
    assert sum(e["arm"] == "left" for e in per_episode["episodes"]["1"]) >= 4


def test_g1_detector_options_reach_the_detector(shared_dataset):
    root = shared_dataset("g1-inspire-v21")
    base = [(e["arm"], e["kind"], e["frame"]) for e in g1_events(root, "--episodes", "1")["episodes"]["1"]]
    assert base == [("right", "open", 61), ("right", "close", 195), ("right", "open", 312)]
    flipped = g1_events(root, "--episodes", "1", "--polarity", "open-low")["episodes"]["1"]
    assert [e["kind"] for e in flipped] == ["close", "open", "close"]
    assert g1_events(root, "--episodes", "1", "--min-range", "0.6")["episodes"]["1"] == []
    wide = g1_events(root, "--episodes", "1", "--hysteresis", "0.6")["episodes"]["1"]
    assert [(e["kind"], e["frame"]) for e in wide] == [("close", 195), ("open", 312)]  # the small first swing goes
    fixed = g1_events(root, "--episodes", "1", "--threshold", "0.75")
    assert fixed["detector"]["threshold"] == 0.75 and [e["kind"] for e in fixed["episodes"]["1"]][:2] == [
        "open",
        "close",
    ]
    bad = runner.invoke(app, ["ssc", "events", str(root), *HANDS, "--polarity", "sideways"])
    assert bad.exit_code != 0 and "open-high" in str(bad.exception)


def test_g1_l1_singles_out_the_acting_hand(shared_dataset, tmp_path):
    root = shared_dataset("g1-inspire-v21")
    folder = tmp_path / "ann"
    folder.mkdir()
    skill = {"skill_idx": 0, "skill_description": ["pick up from"], "object_id": [["bottle_1", "table_2"]],
             "frame_duration": [150, 250], "skill_type": ["uncoordinated"]}  # fmt: skip
    (folder / "episode_00000001.json").write_text(json.dumps({"task_name": "bottle", "skill_annotation": [skill]}))

    def entry(*extra):
        result = runner.invoke(app, ["ssc", "build", str(root), "--annotations", str(folder), *HANDS, "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["episodes"]["1"]["chain"]["subtasks"][0]

    acting = entry()
    assert [(a["arm"], a["arm_source"]) for a in acting["actions"]] == [("right", "L1")]
    noisy = entry("--range", "episode")
    assert [a["arm"] for a in noisy["actions"]] != ["right"]  # the left hand's noise closes too


# -- base motion from a base-velocity feature -----------------------------------------------------


def test_base_motion_comes_from_the_base_velocity_feature(tmp_path):
    from strands_robots.segments.navigate import episode_base_velocity
    from tests.segments.conftest import build_dataset

    root = build_dataset(tmp_path / "ds")  # episode 0: the base drives during frames [10, 30) at 0.3 m/s
    velocity = episode_base_velocity(root, 0)
    subtasks = [
        sub(0, 0, 10, act("pick_up", "cup_2")),
        sub(1, 10, 30, act("wait", None, ("for", "kettle_1"))),  # a verb without motion while the base drives
        sub(2, 30, 45, act("navigate_to", None, ("to", "sink_3"))),  # a motion verb while the base stands
        sub(3, 45, 60, act("place_in", "cup_2", ("in", "sink_3"))),
    ]
    events = [ev(5, "right", "close"), ev(50, "right", "open")]
    moved = build_chain(subtasks, events, base_velocity=velocity, arms=("right",))
    assert [e.st_motion for e in moved.subtasks] == ["idle", "move", "idle", "idle"]
    assert [e.st_motion for e in build_chain(subtasks, events, arms=("right",)).subtasks] == [
        "idle",
        "idle",
        "move",
        "idle",
    ]  # fmt: skip  (no base velocity: from the verbs)
    slow = build_chain(subtasks, events, base_velocity=velocity, base_speed_threshold=0.5, arms=("right",))
    assert [e.st_motion for e in slow.subtasks] == ["idle"] * 4
    # the CLI reads the feature when the dataset has one
    folder = tmp_path / "ann"
    folder.mkdir()
    skills = [{"skill_idx": i, "skill_description": [d], "object_id": [o], "frame_duration": [s, e]}
              for i, (d, o, s, e) in enumerate([("pick up", ["cup_2"], 0, 10), ("wait for", ["kettle_1"], 10, 30),
                                                ("navigate to", ["sink_3"], 30, 45), ("place in", ["cup_2", "sink_3"], 45, 60)])]  # fmt: skip
    (folder / "episode_00000000.json").write_text(json.dumps({"task_name": "cup", "skill_annotation": skills}))
    result = runner.invoke(app, ["ssc", "build", str(root), "--annotations", str(folder), "--json", "--episodes", "0",
                                 "--gripper", "right=observation.state:z"])  # fmt: skip
    assert result.exit_code == 0, result.output
    chain = json.loads(result.output)["episodes"]["0"]["chain"]
    assert [e["st_motion"] for e in chain["subtasks"]] == ["idle", "move", "idle", "idle"]


# -- same-object identity from instance ids at L2 (paper Appendix E: "pillar_candle_89 versus
# pillar_candle_90 ... the parser preserves the index so that downstream resolution can distinguish them")

BOTH_OPEN = [ev(60, "left", "open"), ev(61, "right", "open")]


def test_a_release_from_d_unsure_is_settled_at_l2_by_two_instance_ids():
    resolver = ScriptedResolver(same_object={"same_object": True})
    before = state("pillar_candle", "pillar_candle", "unsure")  # D?: same-named, identity open
    subtask = sub(0, 0, 100, act("place_on", "pillar_candle", ("on", "table_1")),
                  object_ids=["pillar_candle_89", "pillar_candle_90", "table_1"])  # fmt: skip
    entry = build_entry(subtask, before, BOTH_OPEN, resolver=resolver)
    same = next(q for q in entry.pending_queries if q.kind == "same_object")
    assert (same.status, same.resolved_by, same.answer) == ("resolved", "L2", {"same_object": False})
    assert resolver.requests == []  # never reached L3
    assert sorted(a.arm for a in entry.actions) == ["left", "right"]  # both open: two releases (Table 5, Dd -> E)
    g = entry.scene_graph
    assert (g.obj_in_left_hand, g.obj_in_right_hand) == (None, None)


def test_a_second_acquire_named_without_index_takes_the_entrys_instance_id():
    resolver = ScriptedResolver(same_object={"same_object": True})
    subtask = sub(0, 0, 100, act("pick_up", "pillar_candle"), object_ids=["pillar_candle_90"])
    entry = build_entry(subtask, state(None, "pillar_candle_89"), [ev(50, "left", "close")], resolver=resolver)
    same = next(q for q in entry.pending_queries if q.kind == "same_object")
    assert (same.status, same.resolved_by, same.answer) == ("resolved", "L2", {"same_object": False})
    assert resolver.requests == []
    g = entry.scene_graph
    assert (g.obj_in_left_hand, g.obj_in_right_hand, g.holding_same_object) == (
        "pillar_candle_90", "pillar_candle_89", False
    )  # fmt: skip


def test_two_instances_grasped_at_once_are_not_both_the_first_id():
    subtask = sub(0, 0, 100, act("pick_up", "pillar_candle_89"), object_ids=["pillar_candle_89", "pillar_candle_90"])
    entry = build_entry(subtask, state(), BOTH_CLOSE)
    assert next(q for q in entry.pending_queries if q.kind == "same_object").resolved_by == "L2"
    g = entry.scene_graph
    assert g.holding_same_object is False
    assert {g.obj_in_left_hand, g.obj_in_right_hand} != {"pillar_candle_89"}  # one hand each, never 89 twice

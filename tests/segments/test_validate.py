"""validate_segmentation: structure (sections 1, 2, 6) and every named rule (sections 1, 3, 4, 7, 8)."""

from __future__ import annotations

import numpy as np
import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.segments import FINDING_KINDS, parse_label, validate_segmentation
from strands_robots.segments.findings import BLOCKING_KINDS
from strands_robots.segments.lexicon import count_requirement


def segs(length: int, *labels: str, cuts: list[int] | None = None) -> list[dict]:
    """Contiguous segments over ``length`` frames, equal parts unless ``cuts`` are given."""
    n = len(labels)
    bounds = [0, *(cuts or [length * i // n for i in range(1, n)]), length]
    return [{"start": a, "end": b, "label": lab} for a, b, lab in zip(bounds[:-1], bounds[1:], labels, strict=True)]


def kinds(findings, severity=None):
    return [f.kind for f in findings if severity is None or f.severity == severity]


def check(length, *labels, **kw):
    return validate_segmentation(length, segs(length, *labels), **kw)


STILL = np.zeros((100, 2))

# -- structure --------------------------------------------------------------------------------------


def test_a_valid_segmentation_has_no_findings_when_every_input_is_given():
    velocity = np.zeros((100, 2))
    velocity[0:20, 0] = 0.4
    s = segs(
        100,
        "navigate to the counter",
        "pick up the mug from the counter",
        "place the mug in the sink",
        "TASK_COMPLETE",
        cuts=[20, 50, 80],
    )
    assert validate_segmentation(100, s, task="put the mug in the sink", base_velocity=velocity) == []


def test_missing_inputs_are_reported_as_skipped_not_passed():
    found = validate_segmentation(100, segs(100, "navigate to the counter", "pick up the mug from the counter"))
    assert sorted(kinds(found, "skipped")) == ["count_task_group_noun", "count_task_pairs", "navigate_base_motion"]
    assert all((f.start, f.end) == (0, 100) for f in found)
    assert kinds(found, "error") == []


def test_gap_overlap_and_out_of_range_with_exact_frames():
    found = validate_segmentation(
        100,
        [
            {"start": 5, "end": 40, "label": "pick up the mug from the counter"},
            {"start": 35, "end": 60, "label": "place the mug in the sink"},
            {"start": 70, "end": 110, "label": "TASK_COMPLETE"},
        ],
        task="x",
    )
    got = {(f.kind, f.start, f.end) for f in found if f.severity == "error"}
    assert got == {("gap", 0, 5), ("overlap", 35, 40), ("gap", 60, 70), ("out_of_range", 100, 110)}
    assert all(f.blocking for f in found if f.kind in BLOCKING_KINDS)
    gap = next(f for f in found if (f.kind, f.start) == ("gap", 60))
    assert gap.segments == (1, 2)
    assert (
        gap.to_dict()["blocking"] is True
        and gap.to_dict()["source"] == "docs/segments.md, Validation and findings (§1, §6)"
    )


def test_tail_gap_and_invalid_intervals():
    found = validate_segmentation(
        50,
        [
            {"start": 0, "end": 20, "label": "pick up the mug"},
            {"start": 20, "end": 20, "label": "place the mug in the sink"},
            {"start": 20, "end": 30.5, "label": "place the mug in the sink"},
            {"start": True, "end": 30, "label": "place the mug in the sink"},
        ],
        task="x",
    )
    assert [(f.kind, f.start, f.end) for f in found if f.severity == "error"] == [
        ("invalid_interval", 0, 30),
        ("invalid_interval", 20, 20),
        ("invalid_interval", 20, 20),
        ("gap", 20, 50),
    ]


def test_unparseable_label_and_wrong_cohort():
    found = check(60, "grab the mug", "Pick", "TASK_COMPLETE", task="x")
    assert [(f.kind, f.start, f.end) for f in found if f.severity == "error"] == [
        ("unparseable_label", 0, 20),
        ("wrong_cohort", 20, 40),
    ]
    assert "P1" in found[0].message


def test_a_segment_may_give_a_parsed_instance_or_template_fields():
    s = [
        {"start": 0, "end": 10, "label": parse_label("pick up the mug from the counter")},
        {"start": 10, "end": 20, "template_id": "L1", "slots": {"theme": "mug", "destination": "sink"}},
    ]
    assert kinds(validate_segmentation(20, s, task="x"), "error") == []


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["pick up the mug from the counter", "TASK_COMPLETE", "place the mug in the sink"], [(20, 40)]),
        (["TASK_COMPLETE"], [(0, 60)]),
        (["pick up the mug from the counter", "TASK_COMPLETE", "TASK_COMPLETE"], [(20, 40)]),
        (["pick up the mug from the counter", "place the mug in the sink", "TASK_COMPLETE"], []),
        (["pick up the mug from the counter", "place the mug in the sink"], []),  # ending with the subtask is fine
    ],
)
def test_task_complete_only_as_a_distinct_trailing_interval(labels, expected):
    found = check(60, *labels, task="x")
    assert [(f.start, f.end) for f in found if f.kind == "task_complete_placement"] == expected


def test_bad_arguments_raise():
    with pytest.raises(LabelValidationError, match="length"):
        validate_segmentation(0, [])
    with pytest.raises(LabelValidationError, match="list"):
        validate_segmentation(10, {"start": 0})
    with pytest.raises(LabelValidationError, match="cohort"):
        validate_segmentation(10, [], cohort="robocasa")
    with pytest.raises(LabelValidationError, match="frames"):
        check(10, "navigate to the fridge", base_velocity=np.zeros(9))


# -- section 4: activation controls --------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "fires"),
    [
        ("turn on the coffee machine", True),
        ("press the start button on the coffee machine", False),
        ("turn on the toaster", True),
        ("push down the lever of the toaster", False),
        ("turn on the electric kettle", True),
        ("push down the lever of the electric kettle", False),
        ("press the start button on the microwave", True),  # A2 is the coffee machine only
        ("push down the lever of the blender", True),  # A3 is toaster / kettle only
        ("turn on the toaster oven temperature knob", True),  # always J1
        ("turn off the toaster oven temperature knob", True),
        ("set the toaster oven temperature knob to max", False),
        ("turn on the toaster oven", False),  # the timer: A1
        ("turn on the microwave", False),
        ("open the electric kettle lid", False),  # the lid button is O1, not activate
    ],
)
def test_activation_control_table(label, fires):
    found = check(30, label, task="x")
    assert ("activation_control" in kinds(found, "error")) is fires


@pytest.mark.parametrize(
    ("labels", "fires"),
    [
        (["turn on the front-left burner", "turn on the front-left burner"], True),  # on -> level change is adjust
        (["turn on the front-left burner", "set the front-left burner to low"], False),
        (["turn off the sink faucet", "set the faucet handle to hot"], True),  # off -> on is activate
        (["turn off the oven", "turn off the oven"], True),
        (["turn on the sink faucet", "turn off the sink faucet", "turn on the sink faucet"], False),
        (["set the front-left burner to off"], True),  # on -> off is deactivate
        (["turn on the microwave", "turn on the microwave"], False),  # stops by itself: not tracked
        (["turn on the front-left burner", "turn on the front-right burner"], False),
    ],
)
def test_control_semantics(labels, fires):
    found = check(60, *labels, task="x")
    assert ("control_semantics" in kinds(found, "error")) is fires


# -- section 1 -------------------------------------------------------------------------------------


def test_one_segment_per_door():
    found = check(40, "open the cabinet doors", "close the left and right drawers", task="x")
    assert [(f.kind, f.start) for f in found if f.severity == "error"] == [
        ("one_segment_per_door", 0),
        ("one_segment_per_door", 20),
    ]
    split = check(40, "open the left cabinet door", "open the left cabinet door", task="x")
    assert [(f.kind, f.severity, f.segments) for f in split if f.kind == "one_segment_per_door"] == [
        ("one_segment_per_door", "warning", (0, 1))
    ]
    assert "one_segment_per_door" not in kinds(
        check(40, "open the left cabinet door", "open the right cabinet door", task="x")
    )


@pytest.mark.parametrize(
    ("labels", "severity"),
    [
        (
            [
                "pick up the pot from the stove",
                "navigate to the sink",
                "dump the broccoli into the sink",
                "place the pot on the counter",
            ],
            None,
        ),
        (["dump the broccoli into the sink", "place the pot on the counter"], "error"),  # no pick first
        (["pick up the pot from the stove", "dump the broccoli into the sink"], "error"),  # no place after
        (
            ["pick up the pot from the stove", "dump the broccoli into the sink", "place the lid on the counter"],
            "warning",
        ),  # another object placed
    ],
)
def test_pour_is_pick_dump_place(labels, severity):
    found = [f for f in check(80, *labels, task="x") if f.kind == "pour_sequence"]
    assert [f.severity for f in found] == ([severity] if severity else [])


@pytest.mark.parametrize(
    ("labels", "severity"),
    [
        (["turn on the sink faucet", "hold the carrot under the sink faucet", "turn off the sink faucet"], None),
        (["turn on the sink faucet", "turn off the sink faucet", "hold the carrot under the sink faucet"], "error"),
        (["hold the carrot under the counter"], "error"),
        (["hold the carrot under the sink faucet"], "warning"),  # faucet state unknown
    ],
)
def test_hold_only_under_running_water(labels, severity):
    found = [f for f in check(60, *labels, task="x") if f.kind == "hold_running_water"]
    assert [f.severity for f in found] == ([severity] if severity else [])


def test_count_based_task_needs_one_pick_place_pair_per_instance():
    task = "place two ice cubes in each of the two glasses"
    good = check(
        80,
        "pick up the ice cube from the tray",
        "place the ice cube in the glass",
        "pick up the ice cube from the tray",
        "place the ice cube in the glass",
        task="place two ice cubes in the glass",
    )
    assert [k for k in kinds(good) if k.startswith("count_task")] == []
    grouped = check(40, "pick up the ice cubes from the tray", "place the ice cubes in the glass", task=task)
    assert [(f.kind, f.start) for f in grouped if f.kind.startswith("count_task")] == [
        ("count_task_group_noun", 0),
        ("count_task_pairs", 0),  # one pair for two ice cubes
        ("count_task_group_noun", 20),
    ]
    unpaired = check(
        60,
        "pick up the ice cube from the tray",
        "pick up the ice cube from the tray",
        "place the ice cube in the glass",
        task=task,
    )
    assert ("count_task_pairs", 0, 20) in [(f.kind, f.start, f.end) for f in unpaired]
    # not a count-based task: group nouns are fine
    plain = check(40, "pick up the bowls from the counter", "place the bowls in the sink", task="put the bowls away")
    assert [k for k in kinds(plain) if k.startswith("count_task")] == []


def pairs(n: int) -> list[str]:
    return ["pick up the ice cube from the tray", "place the ice cube in the glass"] * n


@pytest.mark.parametrize(
    ("task", "needed"),
    [
        ("place two ice cubes in each of the three glasses", 6),  # one pair per instance: 2 x 3
        ("place three apples in the bowl", 3),
        ("put 2 yogurt containers on each of 4 plates", 8),
        ("place six cookies, two per plate", 6),  # the stated total
    ],
)
def test_count_task_needs_one_pair_per_instance_per_receptacle(task, needed):
    assert count_requirement(task)[0] == needed
    short = [f for f in check(200, *pairs(needed - 1), task=task) if f.kind == "count_task_pairs"]
    assert [(f.severity, f.start, f.end) for f in short] == [("error", 0, 200)]
    assert f"at least {needed} pick + place pairs" in short[0].message and f"found {needed - 1}" in short[0].message
    assert [f for f in check(200, *pairs(needed), task=task) if f.kind.startswith("count_task")] == []


def test_count_requirement_reads_the_task_text():
    assert count_requirement("place two ice cubes in each of the three glasses") == (6, True)
    assert count_requirement("place three apples in the bowl") == (3, False)
    assert count_requirement("place two ice cubes in each glass") == (4, True)  # 'each': two glasses or more
    assert count_requirement("a lemon on each plate") == (2, True)  # 'each' implies two plates or more
    assert count_requirement("put one apple in every one of the four bowls") == (4, True)
    assert count_requirement("put the bowls away") is None


def test_no_label_bundles_two_actions():
    found = check(40, "pick up the mug from the counter", "place the mug in the sink and turn on the faucet", task="x")
    assert [(f.kind, f.start, f.end) for f in found if f.kind == "bundled_actions"] == [("bundled_actions", 20, 40)]


def test_navigate_only_where_the_base_moves():
    velocity = np.zeros((90, 2))
    velocity[0:30, 1] = 0.2  # drives during the first navigate only
    labels = ("navigate to the fridge", "open the fridge", "navigate to the counter")
    found = check(90, *labels, task="x", base_velocity=velocity)
    assert [(f.kind, f.start, f.end) for f in found if f.kind == "navigate_base_motion"] == [
        ("navigate_base_motion", 60, 90)
    ]
    # a single-frame spike is smoothed away
    spike = np.zeros(90)
    spike[75] = 5.0
    found = check(90, *labels, task="x", base_velocity=np.where(np.arange(90) < 30, 0.2, spike))
    assert [f.start for f in found if f.kind == "navigate_base_motion"] == [60]
    # a lower threshold accepts slow motion
    slow = np.full(90, 0.02)
    assert "navigate_base_motion" not in kinds(
        check(90, *labels, task="x", base_velocity=slow, base_speed_threshold=0.01)
    )


def test_convention_warnings():
    found = check(80, "pick up the bowl", "navigate to the sink", "navigate to the sink", "wait for the pot", task="x")
    assert sorted((f.kind, f.severity) for f in found if f.kind != "navigate_base_motion") == [
        ("pick_without_source", "warning"),
        ("repeated_navigate", "warning"),
        ("trailing_wait", "warning"),
    ]
    roles = check(20, "hold the carrots under the sink faucet", task="x")
    assert "group_noun_role" in kinds(roles, "warning")
    assert kinds(check(20, "open the blender lid", task="x"), "error") == ["open_close_target"]
    assert kinds(check(20, "slide the drawer out", task="x"), "error") == ["slide_target"]
    assert kinds(check(20, "slide the top oven rack out", task="x"), "error") == []


# -- sections 7 and 8 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["Idle", "Pick", "Place", "Idle", "Pick", "Place", "Idle"], []),
        (["Pick", "Place", "Pick", "Place", "TASK_COMPLETE"], []),
        (["Idle", "Place", "Idle"], [(20, 40)]),  # Place without Pick
        (["Idle", "Pick", "Pick", "Place"], [(20, 60)]),  # two Picks
        (["Pick", "Idle", "Place"], [(0, 40)]),  # Idle inside a Pick/Place pair
        (["Idle", "Pick", "Place", "Pick"], [(60, 80)]),  # last Pick never placed
    ],
)
def test_agibot_alternation(labels, expected):
    found = validate_segmentation(len(labels) * 20, segs(len(labels) * 20, *labels), cohort="agibot")
    assert [(f.start, f.end) for f in found if f.kind == "agibot_alternation"] == expected
    assert all(f.kind == "agibot_alternation" for f in found)


def test_allex_rules_are_pending_and_reported_as_skipped():
    found = validate_segmentation(40, segs(40, "Bring Object", "Rotate Box"), cohort="allex")
    assert [(f.kind, f.severity) for f in found] == [("allex_rules", "skipped")]
    wrong = validate_segmentation(40, segs(40, "Bring Object", "Pick"), cohort="allex")
    assert "wrong_cohort" in kinds(wrong, "error")


def test_every_kind_is_documented():
    assert set(FINDING_KINDS) >= {
        "gap", "overlap", "activation_control", "control_semantics", "one_segment_per_door", "pour_sequence",
        "hold_running_water", "count_task_pairs", "count_task_group_noun", "bundled_actions",
        "navigate_base_motion", "agibot_alternation",
    }  # fmt: skip
    assert {"gap", "overlap", "out_of_range", "task_complete_placement"} <= BLOCKING_KINDS

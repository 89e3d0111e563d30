"""Template registry, parse_label and render (docs/segments.md, "Templates", "Template sets" and
"parse_label and render")."""

from __future__ import annotations

import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.segments import (
    TASK_COMPLETE,
    TEMPLATES,
    LabelParseError,
    TemplateInstance,
    make_instance,
    parse_label,
    render,
)
from strands_robots.segments.templates import ROWS, cohort_templates

SECTION_3_IDS = [
    "N1", "O1", "C1", "S1", "S2", "P1", "L1", "L2", "L3", "L4", "L5", "R1", "M1", "H1",
    "A1", "A2", "A3", "D1", "J1", "J2", "T1", "B1", "G1", "Q1", "X1",
]  # fmt: skip

# Every example of the document's table, verbatim (section 3, "examples" column and notes).
DOCUMENT_EXAMPLES = {
    "N1": ["navigate to the fridge", "navigate to the cup on the dining counter",
           "navigate to the tupperware with only the fish in it"],
    "O1": ["open the drawer", "open the left drawer", "open the fridge", "open the microwave door",
           "open the electric kettle lid", "open the stand mixer head", "open the left cabinet door"],
    "C1": ["close the dishwasher door", "close the microwave door", "close the freezer door",
           "close the toaster oven door", "close the right cabinet door"],
    "S1": ["slide the top oven rack out", "slide the toaster oven tray out", "slide the top dishwasher rack out"],
    "S2": ["slide the oven rack in", "slide the toaster oven tray in"],
    "P1": ["pick up the straw from the drawer", "pick up a chicken drumstick from the fridge",
           "pick up the larger bowl from the counter", "pick up the fish from the top rack of the oven",
           "pick up the lid from the saucepan", "pick up the blender lid from the blender",
           "pick up the bowls from the counter", "pick up the bowl"],
    "L1": ["place the bowl in the dishwasher", "place the straw in the glass cup",
           "place the steak in the empty tupperware", "place the mug in the left sink basin",
           "place the mug in the dish rack upside down"],
    "L2": ["place the pan on the front-right burner", "place the knife on the cutting board",
           "place the fish on the top rack of the oven", "place the lid on the saucepan",
           "place the blender lid on the blender", "place the mug on the dish rack upside down",
           "place the mug on the counter with the handle facing right"],
    "L3": ["place the mug under the coffee machine dispenser"],
    "L4": ["place the jam next to the plate", "place the tongs next to the tray", "place the fork on the left side of the plate",
           "place the steak behind the older steak", "place the mug far away from the sink"],
    "L5": ["stack the larger bowl on top of the smaller bowl in the cabinet", "stack the can on top of the other cans"],
    "R1": ["dump the vegetables onto the plate", "dump the leftovers into the sink", "dump the broccoli into the sink"],
    "M1": ["push the cutting board to the sink"],
    "H1": ["hold the carrot under the sink faucet", "hold the jug under the sink faucet",
           "hold the sponge under the sink faucet"],
    "A1": ["turn on the front-left burner", "turn on the front-left burner to medium", "turn on the sink faucet",
           "turn on the microwave", "turn on the blender", "turn on the oven", "turn on the toaster oven"],
    "A2": ["press the start button on the coffee machine"],
    "A3": ["push down the lever of the toaster", "push down the lever of the electric kettle"],
    "D1": ["turn off the sink faucet", "turn off the front-right burner", "turn off the microwave",
           "turn off the stove knob for the kettle"],
    "J1": ["set the toaster oven temperature knob to max", "set the toaster oven temperature knob to lowest",
           "set the toaster oven temperature knob to higher", "set the front-left burner to medium",
           "set the front-left burner to low", "set the faucet handle to hot"],
    "J2": ["turn the sink spout to the left", "turn the sink spout to the right", "sweep the sink spout across the basin"],
    "T1": ["stir the vegetables in the pot", "stir the cheese in the pot"],
    "B1": ["scrub the cutting board", "scrub the bowl", "scrub the sink", "wipe the counter", "wash the broccoli"],
    "G1": ["shake the pan", "tilt the pan", "rotate the pan"],
    "Q1": ["press the lemon against the reamer", "press the spatula against the chicken"],
    "X1": ["wait for the toaster", "wait for the digital scale", "wait for the pot", "wait for the kettle",
           "wait for the cutting board"],
}  # fmt: skip

ALL_EXAMPLES = [(tid, ex) for tid, exs in DOCUMENT_EXAMPLES.items() for ex in exs]


def test_registry_holds_every_section_3_template_and_the_cohorts():
    assert [t.id for t in ROWS[: len(SECTION_3_IDS)]] == SECTION_3_IDS
    assert [t.surface for t in cohort_templates("agibot")] == ["Pick", "Place", "Idle", TASK_COMPLETE]
    assert [t.surface for t in cohort_templates("allex")] == [
        "Bring Object", "Pass Object", "Rotate Box", "Rotate PolyBag", TASK_COMPLETE,
    ]  # fmt: skip
    assert len(cohort_templates("robocasa365")) == 26
    assert TEMPLATES["P1"].slot("theme").types == ("object", "group_noun")
    assert TEMPLATES["P1"].slot("source").optional
    assert TEMPLATES["H1"].slot("target").types == ("fixture_part",)
    assert TEMPLATES["L4"].modifiers == ("relation", "orientation")
    assert TEMPLATES["A1"].surface == "turn on the {target}"
    assert TEMPLATES["B1"].variants["wash"] == "by hand"


def test_every_document_example_is_registered():
    for tid, examples in DOCUMENT_EXAMPLES.items():
        assert set(examples) <= set(TEMPLATES[tid].examples), tid


@pytest.mark.parametrize(("tid", "example"), ALL_EXAMPLES, ids=[e for _, e in ALL_EXAMPLES])
def test_every_table_example_round_trips(tid, example):
    instance = parse_label(example)
    assert instance.template_id == tid
    assert render(instance) == example


@pytest.mark.parametrize(
    ("text", "tid", "slots", "modifiers"),
    [
        ("pick up the bowl from the counter", "P1", {"theme": "bowl", "source": "counter"}, {}),
        (
            "pick up a chicken drumstick from the fridge",
            "P1",
            {"theme": "chicken drumstick", "source": "fridge"},
            {"theme_article": "a"},
        ),
        ("pick up the bowl", "P1", {"theme": "bowl"}, {}),
        ("turn on the front-left burner to medium", "A1", {"target": "front-left burner"}, {"setting": "medium"}),
        (
            "place the mug on the dish rack upside down",
            "L2",
            {"theme": "mug", "destination": "dish rack"},
            {"orientation": "upside down"},
        ),
        (
            "place the mug on the counter with the handle facing right",
            "L2",
            {"theme": "mug", "destination": "counter"},
            {"orientation": "with the handle facing right"},
        ),
        (
            "place the fork on the left side of the plate",
            "L4",
            {"theme": "fork", "destination": "plate"},
            {"relation": "on the left side of"},
        ),
        ("dump the leftovers into the sink", "R1", {"theme": "leftovers", "destination": "sink"}, {"relation": "into"}),
        ("wipe the counter", "B1", {"target": "counter"}, {"variant": "wipe"}),
        ("wash the broccoli", "B1", {"target": "broccoli"}, {"variant": "wash"}),
        ("scrub the bowl", "B1", {"target": "bowl"}, {}),
        ("sweep the sink spout across the basin", "J2", {"target": "sink spout"}, {"variant": "sweep"}),
        ("turn the sink spout to the left", "J2", {"target": "sink spout"}, {"direction": "left"}),
        ("set the faucet handle to hot", "J1", {"target": "faucet handle"}, {"setting": "hot"}),
        ("shake the pan", "G1", {"target": "pan"}, {"variant": "shake"}),
        (
            "navigate to the tupperware with only the fish in it",
            "N1",
            {"destination": "tupperware with only the fish in it"},
            {},
        ),
        ("Pick", "AGIBOT_PICK", {}, {}),
        ("Rotate PolyBag", "ALLEX_ROTATE_POLYBAG", {}, {}),
        ("TASK_COMPLETE", TASK_COMPLETE, {}, {}),
    ],
)
def test_parse_gives_slots_and_modifiers(text, tid, slots, modifiers):
    assert parse_label(text) == TemplateInstance(tid, slots, modifiers)


def test_operations_of_parsed_labels():
    assert parse_label("dump the broccoli into the sink").operation == "pour"
    assert parse_label("press the start button on the coffee machine").operation == "activate"
    assert parse_label("press the lemon against the reamer").operation == "press"
    assert parse_label("push down the lever of the toaster").operation == "activate"
    assert parse_label("push the cutting board to the sink").operation == "push"


def test_parse_tolerates_case_spaces_and_full_stop():
    assert render(parse_label("  Pick up the  Bowl from the counter. ")) == "pick up the bowl from the counter"
    assert render(parse_label("idle")) == "Idle"
    assert render(parse_label("task complete")) == TASK_COMPLETE


def test_unknown_label_names_the_nearest_template():
    with pytest.raises(LabelParseError) as info:
        parse_label("grab the bowl from the counter")
    assert info.value.nearest == "P1"
    assert "P1" in str(info.value) and "segment note" in str(info.value)
    with pytest.raises(LabelParseError, match="not a label"):
        parse_label("other: fiddle with the knob")
    with pytest.raises(LabelParseError):
        parse_label("")


def test_cohort_restricts_parsing():
    assert parse_label("Place", cohort="agibot").template_id == "AGIBOT_PLACE"
    with pytest.raises(LabelParseError) as info:
        parse_label("pick up the bowl from the counter", cohort="agibot")
    assert info.value.nearest in ("AGIBOT_PICK", "AGIBOT_PLACE", "AGIBOT_IDLE", TASK_COMPLETE)
    with pytest.raises(LabelValidationError, match="unknown cohort"):
        parse_label("Pick", cohort="agibot2")


def test_make_instance_from_filled_slots():
    instance = make_instance("P1", {"theme": "A chicken drumstick", "source": "the fridge"})
    assert instance == TemplateInstance(
        "P1", {"theme": "chicken drumstick", "source": "fridge"}, {"theme_article": "a"}
    )
    assert render(instance) == "pick up a chicken drumstick from the fridge"
    assert render(make_instance("A1", {"target": "front-left burner"}, {"setting": "medium"})) == (
        "turn on the front-left burner to medium"
    )
    assert render(make_instance("B1", {"target": "bowl"}, {"variant": "scrub"})) == "scrub the bowl"


@pytest.mark.parametrize(
    ("tid", "slots", "modifiers", "message"),
    [
        ("P9", {"theme": "bowl"}, {}, "unknown template id"),
        ("P1", {}, {}, "needs the slot 'theme'"),
        ("P1", {"theme": "bowl", "target": "x"}, {}, "has no slot"),
        ("L4", {"theme": "jam", "destination": "plate"}, {"relation": "under"}, "not one of"),
        ("G1", {"target": "pan"}, {"variant": "stir"}, "not one of"),
        ("N1", {"destination": "fridge"}, {"setting": "high"}, "takes no modifier"),
        ("P1", {"theme": "bowl from the shelf", "source": "counter"}, {}, "read as"),
    ],
)
def test_make_instance_refuses(tid, slots, modifiers, message):
    with pytest.raises(LabelValidationError, match=message):
        make_instance(tid, slots, modifiers)


def test_template_to_dict_is_json_ready():
    d = TEMPLATES["L2"].to_dict()
    assert d["slots"] == [
        {"name": "theme", "types": ["object", "group_noun"], "optional": False},
        {"name": "destination", "types": ["fixture", "fixture_part", "object"], "optional": False},
    ]
    assert d["modifiers"] == ["orientation"] and d["cohorts"] == ["robocasa365"]

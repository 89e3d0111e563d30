"""Official-label normalisation (docs/segments.md, "Official-label normalisation") and the slot
conventions of "parse_label and render"."""

from __future__ import annotations

import pytest

from strands_robots.segments import LabelParseError, normalize_official_label, parse_label
from strands_robots.segments.normalize import DOCUMENT_EXAMPLES

# The document's rewrite list, verbatim; its placeholder X is instantiated with real nouns.
DOC_REWRITES = [
    ("navigate back to the X", "navigate to the X"),
    ("open the drawer in front of the robot", "open the drawer"),
    ("turn on the front-left burner where the kettle is placed", "turn on the front-left burner"),
    ("turn on the left burner where the kettle is placed", "turn on the left burner"),
    ("wait for the toaster to finish and the lever to pop up", "wait for the toaster"),
    ("turn on the water in the sink", "turn on the sink faucet"),
    ("turn on the sink", "turn on the sink faucet"),
]


def test_module_lists_the_document_examples():
    assert list(DOCUMENT_EXAMPLES) == DOC_REWRITES


@pytest.mark.parametrize(("raw", "expected"), DOC_REWRITES, ids=[r for r, _ in DOC_REWRITES])
@pytest.mark.parametrize("noun", ["fridge", "dining counter"])
def test_document_rewrite_examples(raw, expected, noun):
    result = normalize_official_label(raw.replace("X", noun))
    assert result.text == expected.replace("X", noun)
    assert result.changed is True
    assert result.exception is None


@pytest.mark.parametrize(
    ("raw", "expected", "rewrite"),
    [
        # manner adverbs: 'fully', 'lightly', 'briefly', 'securely', 'back'
        ("open the drawer fully", "open the drawer", "drop_manner_adverb"),
        ("place the knife on the cutting board lightly", "place the knife on the cutting board", "drop_manner_adverb"),
        ("hold the jug under the sink faucet briefly", "hold the jug under the sink faucet", "drop_manner_adverb"),
        ("place the lid on the saucepan securely", "place the lid on the saucepan", "drop_manner_adverb"),
        ("place the bowl back in the cabinet", "place the bowl in the cabinet", "drop_back"),
        # purpose clauses: '... to make a marinade', '... to wash all locations of the basin'
        ("stir the vegetables in the pot to make a marinade", "stir the vegetables in the pot", "drop_purpose_clause"),
        (
            "sweep the sink spout across the basin to wash all locations of the basin",
            "sweep the sink spout across the basin",
            "drop_purpose_clause",
        ),
        # robot-relative location: 'in front of the robot'
        (
            "pick up the mug from the counter in front of the robot",
            "pick up the mug from the counter",
            "drop_robot_relative_location",
        ),
        # redundant restrictor: 'the front-left burner where the kettle is placed'
        (
            "place the pan on the front-left burner where the kettle is placed",
            "place the pan on the front-left burner",
            "drop_redundant_restrictor",
        ),
        # event clause in wait: '... to finish and the lever to pop up'
        ("wait for the kettle to boil", "wait for the kettle", "drop_wait_event_clause"),
        ("turn off the water in the sink", "turn off the sink faucet", "sink_faucet"),
    ],
)
def test_slot_convention_rewrites(raw, expected, rewrite):
    result = normalize_official_label(raw)
    assert (result.text, result.exception) == (expected, None)
    assert rewrite in result.rewrites


@pytest.mark.parametrize(
    "label",
    [
        "place the mug on the dish rack upside down",  # orientation stays
        "place the mug on the counter with the handle facing right",
        "turn on the front-left burner to medium",  # setting stays
        "set the faucet handle to hot",
        "turn the sink spout to the left",  # direction stays
        "place the jam next to the plate",  # relation stays
        "stack the larger bowl on top of the smaller bowl in the cabinet",
        "navigate to the tupperware with only the fish in it",  # identifying restrictor stays
        "place the pan on the back burner",  # 'back' as an adjective stays
        "place the mug under the coffee machine dispenser",
        "push the cutting board to the sink",
    ],
)
def test_task_relevant_content_is_kept(label):
    result = normalize_official_label(label)
    assert (result.text, result.changed, result.exception, result.rewrites) == (label, False, None, ())


def test_case_and_spacing_are_normalised():
    result = normalize_official_label("Pick up the Bowl  from the counter.")
    assert (result.text, result.changed, result.exception) == ("pick up the bowl from the counter", True, None)
    assert normalize_official_label("task complete").text == "TASK_COMPLETE"


def test_a_rewrite_that_would_change_the_operation_keeps_the_label_raw():
    # 'turn ... to off' is on->off (deactivate); the knob rewrite would make it J1 adjust.
    result = normalize_official_label("turn the stove knob to off")
    assert result.text == "turn the stove knob to off"
    assert result.changed is False
    assert "would change the operation from deactivate to adjust" in result.exception
    # the same rewrite that keeps the operation is applied
    ok = normalize_official_label("turn the toaster oven temperature knob to max")
    assert (ok.text, ok.exception) == ("set the toaster oven temperature knob to max", None)


def test_a_bundled_label_is_kept_raw():
    result = normalize_official_label("pick up the mug and place it in the sink")
    assert result.text == "pick up the mug and place it in the sink"
    assert result.changed is False
    assert "bundles two actions" in result.exception and "and place" in result.exception


def test_a_label_no_template_fits_is_kept_raw_with_the_nearest():
    result = normalize_official_label("locate the mug")
    assert result.text == "locate the mug" and not result.changed
    assert "no template fits" in result.exception
    # a rewrite that would remove the task-relevant direction leaves nothing parseable: kept raw
    spout = normalize_official_label("turn the sink spout to the left of the robot")
    assert spout.text == "turn the sink spout to the left of the robot" and spout.exception


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("fully open the fridge", "open the fridge"),
        ("lightly press the lemon against the reamer", "press the lemon against the reamer"),
        ("securely place the mug in the sink", "place the mug in the sink"),
        ("briefly turn on the sink faucet", "turn on the sink faucet"),
    ],
)
def test_manner_adverb_before_the_verb_is_dropped(raw, expected):
    result = normalize_official_label(raw)
    assert (result.text, result.changed, result.exception) == (expected, True, None)


# Seed sections 7 and 8: the cohorts' own labels are already their templates.
COHORT_LABELS = ["Rotate Box", "Rotate PolyBag", "Bring Object", "Pass Object", "Pick", "Place", "Idle"]


@pytest.mark.parametrize("label", COHORT_LABELS)
def test_cohort_labels_normalise_to_themselves(label):
    result = normalize_official_label(label)
    assert (result.text, result.changed, result.exception, result.rewrites) == (label, False, None, ())
    assert result.instance is not None and result.instance.render() == label


def test_rotate_is_still_agitate_for_robocasa_labels():
    # the Allex short-cut must not reach RoboCasa365's G1 ('rotate the pan' is agitate)
    result = normalize_official_label("rotate the pan")
    assert (result.text, result.exception, result.operation) == ("rotate the pan", None, "agitate")
    assert result.instance.template_id == "G1"
    assert normalize_official_label("rotate polybag").text == "Rotate PolyBag"  # case only


# Seed section 1: "A release without transport (... release the spatula after pressing) is folded
# into the preceding segment"; section 3, M1: "Rotation-in-place of a grasped pan is G1, not M1".


@pytest.mark.parametrize("label", ["release the spatula", "drop the sponge", "let go of the spatula"])
def test_a_release_without_transport_folds_into_the_preceding_segment(label):
    result = normalize_official_label(label)
    assert result.fold is True and result.instance is None
    assert "folded into the preceding segment" in result.exception
    with pytest.raises(LabelParseError, match="folded into the preceding segment"):
        parse_label(label, cohort="robocasa365")
    if label.startswith("release"):
        assert parse_label(label, cohort="generic").template_id == "G_RELEASE"  # a segment of its own there


def test_pushing_a_pan_around_is_g1_rotate_not_a_push_with_theme_wok_around():
    result = normalize_official_label("push the wok around")
    assert (result.text, result.exception, result.rewrites) == ("rotate the wok", None, ("rotation_in_place",))
    assert (result.instance.template_id, result.instance.slots, result.instance.modifiers) == (
        "G1", {"target": "wok"}, {"variant": "rotate"}
    )  # fmt: skip
    for cohort in (None, "generic", "robocasa365"):
        with pytest.raises(LabelParseError, match="label it 'rotate the wok'"):
            parse_label("push the wok around", cohort=cohort)
    assert parse_label("push the cutting board to the sink").template_id == "M1"  # a push is still a push

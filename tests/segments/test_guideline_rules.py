"""Segmentation-guide rules checked with values the guide does not show (docs/segments.md, "Rules").

Counts of objects to move only, ``each`` meaning at least two receptacles, TASK_COMPLETE
after a success only, the utensil before a stir, a wait naming only what is waited on, and
three reference examples for the Allex cohort.
"""

from __future__ import annotations

import json

import pytest

from strands_robots.episode_labels import record_deterministic_verdicts
from strands_robots.outcomes import set_outcome
from strands_robots.segments import (
    get_segmentation,
    import_segmentations,
    parse_label,
    reference_examples,
    save_segmentation,
    validate_episode,
    validate_segmentation,
)
from strands_robots.segments.lexicon import count_requirement
from strands_robots.segments.store import SegmentationRefused

from .conftest import VALID_EP0


def segs(length: int, *labels: str) -> list[dict]:
    n = len(labels)
    bounds = [length * i // n for i in range(n + 1)]
    return [{"start": a, "end": b, "label": lab} for a, b, lab in zip(bounds[:-1], bounds[1:], labels, strict=True)]


def kinds(found, prefix=""):
    return [f.kind for f in found if f.kind.startswith(prefix)]


# -- counts of objects to move ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "task",
    [
        "set the toaster oven temperature knob to 425",
        "turn the oven dial to 180 and wait 3 minutes",
        "microwave the soup for 90 seconds",
        "pick up the pair of scissors from the shelf",
        "lift the pot with both hands",
        "turn on the two rear burners",
        "set the stove to 7, then wait 12 minutes",
    ],
)
def test_numbers_that_are_not_objects_to_move_make_no_count_task(task):
    assert count_requirement(task) is None
    # a group noun and a single pair are no finding in such a task
    found = validate_segmentation(
        30, segs(30, "pick up the forks from the drawer", "place the forks on the tray"), task=task
    )
    assert kinds(found, "count_task") == []


@pytest.mark.parametrize(
    ("task", "needed", "per_receptacle"),
    [
        ("put three spoons on each saucer", 6, True),  # each: at least two saucers
        ("place a napkin on every tray", 2, True),
        ("put 5 grapes into each of the 3 cups", 15, True),
        ("bring four cans to the shelf and wait 10 minutes", 4, False),
        ("heat the pan to 200 degrees, then place three eggs in it", 3, False),
        ("put a pair of socks in the drawer", 2, False),
    ],
)
def test_counts_of_objects_to_move(task, needed, per_receptacle):
    assert count_requirement(task) == (needed, per_receptacle)
    pair = ["pick up the spoon from the counter", "place the spoon on the saucer"]
    short = validate_segmentation(200, segs(200, *pair * (needed - 1)), task=task)
    assert [(f.kind, f.severity) for f in short if f.kind == "count_task_pairs"] == [("count_task_pairs", "error")]
    assert f"at least {needed} pick + place pairs" in next(f.message for f in short if f.kind == "count_task_pairs")
    assert kinds(validate_segmentation(200, segs(200, *pair * needed), task=task), "count_task") == []


# -- TASK_COMPLETE after a success only --------------------------------------------------------------


def test_task_complete_refused_on_an_episode_whose_outcome_is_not_a_success(dataset):
    set_outcome(dataset, 0, outcome="partial_success")
    with pytest.raises(SegmentationRefused) as info:
        save_segmentation(dataset, 0, VALID_EP0, annotator="kim")
    assert [(f.kind, f.start, f.end) for f in info.value.findings] == [("task_complete_after_failure", 55, 60)]
    assert "'partial_success'" in str(info.value)
    # without the tail segment the same episode saves; after a success the tail is allowed
    tail_folded = [*VALID_EP0[:3], {"start": 42, "end": 60, "label": "place the mug in the sink"}]
    assert save_segmentation(dataset, 0, tail_folded, annotator="kim").record["version"] == 1
    set_outcome(dataset, 0, outcome="slow_success")
    assert kinds(validate_episode(dataset, 0, VALID_EP0), "task_complete") == []


def test_task_complete_refused_when_the_verdict_is_a_failure(dataset):
    record_deterministic_verdicts(
        dataset, [{"episode": 0, "success": False, "failure": True, "steps": 60, "cumulative_reward": 0.1, "seed": 4}]
    )
    found = validate_episode(dataset, 0, VALID_EP0)
    assert [(f.kind, f.blocking) for f in found if f.kind.startswith("task_complete")] == [
        ("task_complete_after_failure", True)
    ]
    assert "success=false" in next(f.message for f in found if f.kind == "task_complete_after_failure")
    assert "task_complete_after_failure" not in kinds(
        validate_episode(dataset, 1, segs(40, "pick up the mug from the counter", "TASK_COMPLETE"))
    )  # episode 1 has no verdict: not known to have failed


def test_import_tail_of_a_failed_episode_extends_the_last_segment(dataset, tmp_path):
    set_outcome(dataset, 1, outcome="aborted")
    source = tmp_path / "spans.json"
    spans = [{"start": 0, "end": 18, "label": "pick up the mug from the counter"}]
    source.write_text(json.dumps({"0": spans, "1": spans}))
    report = import_segmentations(dataset, source, annotator="imp")
    by_episode = {r.episode_index: r for r in report.episodes}
    assert by_episode[0].status == by_episode[1].status == "imported"

    assert [s["label"] for s in get_segmentation(dataset, 0)["segments"]][-1] == "TASK_COMPLETE"
    failed = get_segmentation(dataset, 1)["segments"]
    assert [(s["start"], s["end"], s["label"]) for s in failed] == [(0, 40, "pick up the mug from the counter")]
    assert any("'aborted'" in n for n in by_episode[1].notes)


# -- T1: the utensil is picked first ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "flagged"),
    [
        (["pick up the whisk from the drawer", "stir the batter in the mixing bowl"], False),
        (["stir the batter in the mixing bowl"], True),
        (
            ["pick up the ladle from the counter", "place the ladle on the counter", "stir the soup in the saucepan"],
            True,
        ),  # put down again before the stir
        (["pick up the beans from the bag", "stir the beans in the skillet"], True),  # the stirred thing is no utensil
    ],
)
def test_stir_needs_a_preceding_pick_of_the_utensil(labels, flagged):
    found = [f for f in validate_segmentation(60, segs(60, *labels), task="x") if f.kind == "stir_utensil"]
    assert [f.severity for f in found] == (["error"] if flagged else [])
    if flagged:
        assert found[0].segments == (len(labels) - 1,)


# -- X1: name only what is waited on ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "target"),
    [
        ("wait for the kettle to boil", "kettle"),
        ("wait for the rice cooker until it clicks off", "rice cooker"),
        ("wait for the blender while it spins", "blender"),
        ("wait for the espresso machine", "espresso machine"),
    ],
)
def test_wait_target_drops_the_event_clause(label, target):
    instance = parse_label(label)
    assert (instance.template_id, instance.slots) == ("X1", {"target": target})


# -- Allex: three reference examples ------------------------------------------------------------------


ALLEX = [{"start": 0, "end": 25, "label": "Bring Object"}, {"start": 25, "end": 40, "label": "Pass Object"}]


def test_allex_shows_three_reference_examples_other_cohorts_two(tmp_path):
    from .conftest import build_dataset

    task = "bring the package over, orient barcode up, then place it on the conveyor"
    root = build_dataset(tmp_path / "allex", {e: (40, task) for e in range(6)})
    for e in range(5):
        save_segmentation(root, e, ALLEX, annotator="ref", reference=True, cohort="allex")
    assert [r["episode_index"] for r in reference_examples(root, task, exclude=5)] == [0, 1, 2]
    assert [r["episode_index"] for r in reference_examples(root, task, exclude=1, cohort="allex")] == [0, 2, 3]
    assert reference_examples(root, task, cohort="agibot") == []
    other = build_dataset(tmp_path / "rc", {e: (40, "put the mug away") for e in range(5)})
    for e in range(4):
        save_segmentation(other, e, segs(40, "pick up the mug from the shelf", "place the mug in the sink"),
                          annotator="ref", reference=True)  # fmt: skip
    assert [r["episode_index"] for r in reference_examples(other, "put the mug away", exclude=4)] == [0, 1]

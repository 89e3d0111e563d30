"""The generic template set and label sets of your own (docs/segments.md, "Template sets")."""

from __future__ import annotations

import json

import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.segments import get_segmentation, label_pool, save_segmentation, template_choices, validate_episode
from strands_robots.segments.label_sets import load_label_set, parse_label_set, register_label_set
from strands_robots.segments.parse import parse_label, render
from strands_robots.segments.templates import TASK_COMPLETE, TEMPLATES, cohort_templates, known_cohorts
from strands_robots.segments.validate import validate_segmentation

GENERIC = [
    "reach", "grasp", "lift", "move", "place", "release", "pick up", "push", "pull", "open", "close", "pour",
    "wipe", "insert", "rotate", "press", "hand over", "navigate", "retract", "idle",
]  # fmt: skip


def test_the_generic_set_has_the_primitives_each_with_an_optional_object():
    templates = cohort_templates("generic")
    assert [t.examples[0] for t in templates[:-1]] == GENERIC and templates[-1].id == TASK_COMPLETE
    assert TEMPLATES["G_GRASP"].slot("theme").optional
    for template in templates[:-1]:
        for example in template.examples:  # every example round-trips within the set
            instance = parse_label(example, cohort="generic")
            assert instance.template_id == template.id and render(instance) == example
    move = parse_label("move the cup to the tray", cohort="generic")
    assert (move.template_id, move.slots) == ("G_MOVE", {"theme": "cup", "destination": "tray"})


def test_a_generic_segmentation_validates_clean_even_where_other_sets_spell_alike():
    # "open the drawer" is also robocasa365's O1 and "idle" agibot's Idle: read as the generic set's
    segments = [
        {"start": 0, "end": 20, "label": "open the drawer"},
        {"start": 20, "end": 40, "label": "grasp the cup"},
        {"start": 40, "end": 60, "label": "idle"},
    ]
    assert validate_segmentation(60, segments, cohort="generic") == []
    wrong = validate_segmentation(60, segments, cohort="agibot")
    assert [f.kind for f in wrong if f.severity == "error"] == ["wrong_cohort", "wrong_cohort"]


def test_a_label_set_file_in_each_format(tmp_path):
    as_list = tmp_path / "kitchen tasks.json"
    as_list.write_text(json.dumps(["Reach", "grab  the mug", "Wipe table"]))
    assert load_label_set(as_list).model_dump() == {
        "name": "kitchen-tasks",
        "labels": ["Reach", "grab the mug", "Wipe table"],
    }
    as_object = tmp_path / "x.json"
    as_object.write_text(json.dumps({"name": "kitchen", "labels": ["Reach"]}))
    assert load_label_set(as_object).name == "kitchen"
    as_text = tmp_path / "lines.txt"
    as_text.write_text("# my labels\nreach\n\n  fold the towel \nunfold\n")
    assert load_label_set(as_text).labels == ["reach", "fold the towel", "unfold"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('["reach", "pick {x}"]', r"labels\[1\] \('pick \{x\}'\): it contains one of \{ \} \[ \] < >"),
        ('["reach", "Reach"]', "'Reach' repeats 'reach'"),
        ("[]", "labels: List should have at least 1 item"),
        ('{"name": "robocasa365", "labels": ["a"]}', "name: it is a built-in template set"),
        ('{"name": "my set", "labels": ["a"]}', "name: a set name is 1-40 letters"),
        ('{"name": "k", "labels": ["a"], "extra": 1}', "extra: Extra inputs are not permitted"),
        ('{"name": "k", "labels": [1]}', r"labels\[0\] \(1\): not text: write it between quotes"),
        ('["TASK_COMPLETE"]', "is in every set already; leave it out"),
        ('"reach"', "holds a JSON str; it must be a list of labels or an object"),
        ("[reach]", "is not valid JSON"),
    ],
)
def test_a_bad_label_set_is_a_typed_error_naming_the_remedy_and_registers_nothing(tmp_path, content, message):
    before = known_cohorts()
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(LabelValidationError, match=message) as caught:
        register_label_set(path)
    assert "Fix the file" in str(caught.value) or "it holds" in str(caught.value) or "must be" in str(caught.value)
    assert known_cohorts() == before
    with pytest.raises(LabelValidationError, match="does not exist; pass the path of an existing label set file"):
        load_label_set(tmp_path / "absent.json")


def test_a_registered_set_is_a_cohort_for_parsing_checks_saving_and_the_pool(toy_dataset, tmp_path):
    label_set = register_label_set(parse_label_set({"name": "test-kitchen", "labels": ["Reach", "Grab mug"]}))
    assert "test-kitchen" in known_cohorts()
    assert [t.id for t in cohort_templates("test-kitchen")] == [
        "test-kitchen:Reach",
        "test-kitchen:Grab mug",
        TASK_COMPLETE,
    ]
    assert TEMPLATES["test-kitchen:Reach"].operation == "custom"
    segments = [
        {"start": 0, "end": 40, "label": "reach"},
        {"start": 40, "end": 80, "label": "Grab mug"},
        {"start": 80, "end": 90, "label": TASK_COMPLETE},
    ]
    result = save_segmentation(toy_dataset, 0, segments, annotator="me", cohort=label_set.name)
    stored = get_segmentation(toy_dataset, 0)
    assert stored["cohort"] == "test-kitchen" and result.findings == []
    assert [s["label"] for s in stored["segments"]] == ["Reach", "Grab mug", TASK_COMPLETE]
    assert validate_episode(toy_dataset, 0, cohort="test-kitchen") == []
    task = stored["tasks"][0]
    assert [p["template_id"] for p in label_pool(toy_dataset, task)] == [
        "test-kitchen:Reach",
        "test-kitchen:Grab mug",
        TASK_COMPLETE,
    ]
    choices = template_choices(toy_dataset, task, cohort="test-kitchen")
    assert [c["surface"] for c in choices] == ["Reach", "Grab mug", TASK_COMPLETE] and choices[0]["in_pool"]
    # the set registered again with other labels replaces it; the saved record still reads
    register_label_set(parse_label_set({"name": "test-kitchen", "labels": ["Wipe"]}))
    assert [t.surface for t in cohort_templates("test-kitchen")] == ["Wipe", TASK_COMPLETE]
    assert [p["template_id"] for p in label_pool(toy_dataset, task)] == [TASK_COMPLETE]
    assert get_segmentation(toy_dataset, 0)["segments"][0]["label"] == "Reach"


def test_segments_commands_take_the_generic_set_and_a_label_set_file(toy_dataset, tmp_path):
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    runner = CliRunner()
    generic = runner.invoke(app, ["segments", "templates", "--cohort", "generic", "--json"])
    assert generic.exit_code == 0, generic.output
    assert [t["id"] for t in json.loads(generic.output)][:3] == ["G_REACH", "G_GRASP", "G_LIFT"]
    labels = tmp_path / "bench.txt"
    labels.write_text("reach\nstack the blocks\n")
    own = runner.invoke(app, ["segments", "templates", "--labels", str(labels), "--cohort", "bench", "--json"])
    assert own.exit_code == 0, own.output
    assert [t["surface"] for t in json.loads(own.output)] == ["reach", "stack the blocks", TASK_COMPLETE]
    source = tmp_path / "segs.json"
    source.write_text(
        json.dumps([{"start": 0, "end": 50, "label": "reach"}, {"start": 50, "end": 90, "label": "stack the blocks"}])
    )
    imported = runner.invoke(
        app,
        ["segments", "import", str(toy_dataset), str(source), "--episode", "1", "--annotator", "me",
         "--labels", str(labels), "--cohort", "bench", "--time-unit", "frames"],
    )  # fmt: skip
    assert imported.exit_code == 0, imported.output
    assert get_segmentation(toy_dataset, 1)["cohort"] == "bench"
    checked = runner.invoke(app, ["segments", "validate", str(toy_dataset), "1", "--labels", str(labels)])
    assert checked.exit_code == 0, checked.output
    assert "episode 1: valid" in checked.output
    shown = runner.invoke(app, ["segments", "templates", "--labels", str(labels), "--json"])  # no --cohort
    assert shown.exit_code == 0, shown.output
    assert [t["surface"] for t in json.loads(shown.output)] == ["reach", "stack the blocks", TASK_COMPLETE]
    default = runner.invoke(app, ["segments", "templates", "--json"])
    assert json.loads(default.output)[0]["id"] == "N1"  # robocasa365 without --labels
    unknown = runner.invoke(app, ["segments", "templates", "--cohort", "nosuchset"])
    assert unknown.exit_code != 0 and "or --labels FILE for a set of your own" in str(unknown.exception)

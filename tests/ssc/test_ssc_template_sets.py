"""Every template set the segment page offers works with the SSC (docs/ssc.md, "Template sets").

A segmentation made with the ``generic`` set, or with a label set of your own, goes through
``strands-labels ssc build`` / ``ssc check`` like a robocasa365 one.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.segments import TEMPLATES, save_segmentation
from strands_robots.segments.label_sets import register_label_set
from strands_robots.segments.templates import COHORTS, cohort_templates
from strands_robots.ssc.segmentation import action_from_instance, subtasks_from_segments
from strands_robots.ssc.verbs import VERBS

runner = CliRunner()


@pytest.mark.parametrize("cohort", COHORTS)
def test_every_template_of_every_built_in_set_has_an_ssc_verb(cohort):
    for template in cohort_templates(cohort):
        action = action_from_instance(template.id, {}, {}, template.surface)
        assert action.verb in VERBS, template.id


def test_generic_rows_carry_the_right_roles():
    def role(label):
        (sub,) = subtasks_from_segments([{"start": 0, "end": 10, "label": label}], cohort="generic")
        return VERBS[sub.actions[0].verb].role, sub.actions[0].obj, sub.actions[0].targets

    assert role("reach for the red cube") == ("idle", "red_cube", [])
    assert role("grasp the cup") == ("acquire", "cup", [])
    assert role("lift the cup") == ("keep", "cup", [])
    assert role("move the cup to the tray") == ("keep", "cup", [("to", "tray")])
    assert role("move")[0] == "idle"  # the arm moves empty
    assert role("place the cup on the tray") == ("keep", "cup", [("on", "tray")])  # still grasped
    assert role("release the cup") == ("release", "cup", [])
    assert role("pick up the cup") == ("acquire", "cup", [])
    assert role("hand over the cup") == ("hand_over", "cup", [])
    assert role("retract")[0] == "idle"


def test_ssc_build_and_check_on_a_generic_segmentation(shared_dataset, tmp_path):
    root = shared_dataset("so101-record-test-v30")
    labels = tmp_path / "labels"
    labels.mkdir()
    segs = [  # so101 episode 0: close at 198, open at 259 (tests/cli/test_ssc.py)
        {"start": 0, "end": 150, "label": "reach for the cube"},
        {"start": 150, "end": 220, "label": "grasp the cube"},
        {"start": 220, "end": 240, "label": "lift the cube"},
        {"start": 240, "end": 250, "label": "move the cube to the bowl"},
        {"start": 250, "end": 255, "label": "place the cube on the bowl"},
        {"start": 255, "end": 280, "label": "release the cube"},
        {"start": 280, "end": 373, "label": "retract"},
    ]
    save_segmentation(root, 0, segs, annotator="test", labels_dir=labels, cohort="generic")
    built = runner.invoke(app, ["ssc", "build", str(root), "--labels-dir", str(labels)])
    assert built.exit_code == 0, built.output
    assert "st1 [150, 220): right arm grasps cube" in built.output
    assert "st5 [255, 280): right arm releases cube" in built.output
    checked = runner.invoke(app, ["ssc", "check", str(root), "--labels-dir", str(labels), "--json"])
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.output)["episodes"]["0"]["anomalies"] == []


def test_ssc_check_on_a_label_set_of_your_own(shared_dataset, tmp_path):
    root = shared_dataset("so101-record-test-v30")
    labels = tmp_path / "labels"
    labels.mkdir()
    label_file = tmp_path / "mine.json"
    label_file.write_text(json.dumps({"name": "mine", "labels": ["approach", "grasp the cube", "drop it"]}))
    register_label_set(label_file)
    assert "mine:approach" in TEMPLATES
    segs = [
        {"start": 0, "end": 150, "label": "approach"},
        {"start": 150, "end": 220, "label": "grasp the cube"},
        {"start": 220, "end": 373, "label": "drop it"},
    ]
    save_segmentation(root, 0, segs, annotator="test", labels_dir=labels, cohort="mine")
    checked = runner.invoke(app, ["ssc", "check", str(root), "--labels-dir", str(labels), "--json"])
    assert checked.exit_code == 0, checked.output
    chain = runner.invoke(app, ["ssc", "build", str(root), "--labels-dir", str(labels)])
    assert chain.exit_code == 0, chain.output
    assert "st1 [150, 220): right arm grasps" in chain.output
    assert "st2 [220, 373): right arm drops" in chain.output

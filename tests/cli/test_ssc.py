"""``strands-labels ssc events|build|check`` on a real shared dataset (read-only) with annotations in tmp."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.errors import LabelValidationError

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["ssc", *map(str, args)])


def _skill(idx, start, end, description, objects, skill_type="uncoordinated"):
    return {
        "skill_idx": idx,
        "skill_description": [description],
        "object_id": [objects],
        "frame_duration": [start, end],
        "skill_type": [skill_type],
    }


def _annotations(tmp_path):
    """BEHAVIOR-format files for so101 episodes 0 (well aligned) and 1 (pick window too early)."""
    folder = tmp_path / "annotations" / "task-0000"
    folder.mkdir(parents=True)
    ep0 = [
        _skill(0, 0, 100, "move to", ["cube_1"], "navigation"),
        _skill(1, 100, 200, "pick up from", ["cube_1", "table_2"]),
        _skill(2, 200, 300, "place in", ["cube_1", "bowl_3"]),
        _skill(3, 300, 373, "idle", [], "navigation"),
    ]
    ep1 = [
        _skill(0, 0, 200, "pick up from", ["cube_1", "table_2"]),
        _skill(1, 200, 374, "place in", ["cube_1", "bowl_3"]),
    ]
    for ep, skills in ((0, ep0), (1, ep1)):
        (folder / f"episode_{ep:08d}.json").write_text(
            json.dumps({"task_name": "cube to bowl", "skill_annotation": skills})
        )
    return tmp_path / "annotations"


def test_events_command(shared_dataset):
    root = shared_dataset("so101-record-test-v30")
    result = invoke("events", root, "--json", "--episodes", "0,3")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    right = doc["channels"]["right"]
    assert (right["feature"], right["index"], right["name"]) == ("observation.state", 5, "gripper.pos")
    assert right["range"] == pytest.approx([1.954, 39.151], abs=1e-3)  # meta/stats.json, the whole dataset
    assert [(e["frame"], e["kind"]) for e in doc["episodes"]["0"]] == [
        (94, "open"),
        (198, "close"),
        (259, "open"),
        (298, "close"),
    ]
    assert list(doc["episodes"]) == ["0", "3"]
    text = invoke("events", root, "--episodes", "2")
    assert "episode 2 (372 frames): r:open@160 r:close@208 r:open@248 r:close@265" in text.output


def test_build_and_check(shared_dataset, tmp_path):
    root = shared_dataset("so101-record-test-v30")
    annotations = _annotations(tmp_path)
    out = tmp_path / "chains.json"
    result = invoke("build", root, "--annotations", annotations, "--out", out)
    assert result.exit_code == 0, result.output
    assert "st1 [100, 200): right arm picks up cube from table" in result.output
    assert "st2 [200, 300): right arm places cube in bowl" in result.output
    doc = json.loads(out.read_text())
    assert set(doc["episodes"]) == {"0", "1"} and doc["episodes"]["0"]["pending_queries"] == 0

    checked = invoke("check", root, "--annotations", annotations, "--json", "--reference", out)
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.output)
    assert report["episodes"]["0"]["anomalies"] == []
    assert report["episodes"]["0"]["accuracy"]["accuracy"] == 1.0
    (anomaly,) = report["episodes"]["1"]["anomalies"]
    assert (anomaly["invariant"], anomaly["kind"], anomaly["entry"], anomaly["arm"], anomaly["frames"]) == (
        "I3", "annotation_timing", 0, "right", [253]
    )  # fmt: skip
    assert report["episodes"]["1"]["pending_queries"] == []  # a single-arm robot settles every arm at L1
    assert report["summary"]["by_invariant"] == {"I1": 0, "I2": 0, "I3": 1, "I4": 0}

    table = invoke("check", root, "--annotations", annotations)
    assert table.exit_code == 0, table.output
    assert "I3" in table.output and "1 anomalies; by invariant {'I1': 0, 'I2': 0, 'I3': 1, 'I4': 0}" in table.output


def test_no_gripper_channel_is_a_clear_error(shared_dataset, tmp_path):
    root = shared_dataset("g1-inspire-v21")
    proc = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "ssc", "events", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "pass --gripper" in proc.stderr
    named = invoke("events", root, "--gripper", "right=observation.state:kRightHandIndex", "--json", "--episodes", "1")
    assert named.exit_code == 0, named.output
    assert json.loads(named.output)["channels"]["right"]["index"] == 23


def test_l3_through_the_cli_with_real_frames(shared_dataset, tmp_path, monkeypatch):
    """g1 (Inspire hands mapped as grippers by name): a contact subtask goes to L3 with the frame grid."""
    import strands_robots.model_spec as model_spec
    from tests.ssc.ssc_fakes import FakeModel

    fake = FakeModel(['```json\n{"arm": "right", "confidence": "high", "reasoning": "right hand on the bottle"}\n```'])
    monkeypatch.setattr(model_spec, "build_model", lambda spec, **kw: fake)
    root = shared_dataset("g1-inspire-v21")
    folder = tmp_path / "ann"
    folder.mkdir()
    skills = [_skill(0, 0, 393, "press", ["yellow_bottle_1"])]
    (folder / "episode_00000001.json").write_text(json.dumps({"task_name": "bottle", "skill_annotation": skills}))
    result = invoke(
        "build", root, "--annotations", folder, "--model", "bedrock:fake-model", "--json",
        "--gripper", "left=observation.state:kLeftHandIndex", "--gripper", "right=observation.state:kRightHandIndex",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    entry = json.loads(result.output)["episodes"]["1"]["chain"]["subtasks"][0]
    assert [(a["arm"], a["arm_source"], a["arm_confidence"]) for a in entry["actions"]] == [("right", "L3", "high")]
    assert entry["pending_queries"][0]["resolved_by"] == "L3"
    (call,) = fake.calls
    text, image = call["messages"][-1]["content"]
    assert text["text"].startswith("In these frames from task 'bottle':\nNow robot is pressing yellow bottle.")
    assert image["image"]["source"]["bytes"][:4] == b"\x89PNG"


def test_check_reads_saved_segmentations(shared_dataset, tmp_path):
    """Without --annotations the chain is built from episode_segments.json.

    The store of docs/segments.md, "Storage: `episode_segments.json`".
    """
    segments = pytest.importorskip(
        "strands_robots.segments", reason="strands_robots.segments (the segmentation module) is absent"
    )
    root = shared_dataset("so101-record-test-v30")
    labels = tmp_path / "labels"
    labels.mkdir()
    segs = [
        {"start": 0, "end": 150, "label": "pick up the cube from the table"},
        {"start": 150, "end": 300, "label": "place the cube in the bowl"},
        {"start": 300, "end": 373, "label": "TASK_COMPLETE"},
    ]
    segments.save_segmentation(root, 0, segs, annotator="test", labels_dir=labels)
    result = invoke("check", root, "--labels-dir", labels, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    (anomaly,) = report["episodes"]["0"]["anomalies"]  # the grasp (198) is after the pick window
    assert (anomaly["entry"], anomaly["kind"], anomaly["frames"]) == (0, "annotation_timing", [198])
    built = invoke("build", root, "--labels-dir", labels)
    assert "st1 [150, 300): right arm places cube in bowl" in built.output


def test_check_refuses_a_reference_that_is_not_a_build_document(shared_dataset, tmp_path):
    """--reference must hold the JSON object `ssc build --out` writes: a JSON Lines file or a
    list is a usage error naming that file, not a traceback."""
    root = shared_dataset("so101-record-test-v30")
    annotations = _annotations(tmp_path)
    lines = tmp_path / "chains.jsonl"
    lines.write_text('{"episodes": {}}\n{"episodes": {}}\n')
    listed = tmp_path / "chains.json"
    listed.write_text("[]")
    for reference in (lines, listed):
        refused = invoke("check", root, "--annotations", annotations, "--reference", reference)
        assert isinstance(refused.exception, LabelValidationError), refused.exception  # exit 2 (cli.main.run)
        assert "ssc build --out FILE" in str(refused.exception) and str(reference) in str(refused.exception)

"""meta/avala_sequence_outcomes.jsonl as docs/outcomes.md, "Export and import" describes; import back."""

from __future__ import annotations

import json
import uuid

import pytest

from strands_robots.outcomes import (
    OutcomeValidationError,
    current_outcomes,
    export_outcomes,
    get_outcome,
    import_outcomes,
    outcome_history,
    outcomes_path,
    set_outcome,
)
from strands_robots.outcomes.export import EXPORT_KEYS, SEQUENCE_UID_NAMESPACE, dataset_id_of, sequence_uid
from strands_robots.outcomes.store import OutcomeStore


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def labelled(dataset, doc_label, doc_write):
    set_outcome(dataset, 0, outcome="failure")
    set_outcome(dataset, 0, **doc_label)  # version 2
    set_outcome(dataset, 1, **doc_write)
    set_outcome(dataset, 3, outcome="slow_success", source="model", confidence=0.9, quality=2)
    return dataset


def test_export_has_one_line_per_episode_with_the_document_keys(labelled, doc_label):
    path = export_outcomes(labelled)
    assert path == labelled / "meta" / "avala_sequence_outcomes.jsonl"
    lines = read_lines(path)
    assert [line["episode_index"] for line in lines] == [0, 1, *range(3, 13)]
    first = lines[0]
    assert list(EXPORT_KEYS) == [
        "episode_index",
        "avala_sequence_uid",
        "outcome",
        "outcome_version",
        "progress",
        "quality",
        "speed",
        "subtasks",
        "hand_actions",
        "mistake_type",
        "recovery_type",
        "failure_stage",
        "autonomy_level",
        "model_version",
        "evaluation_membership",
        "leakage_groups",
        "outcome_source",
        "outcome_source_metadata",
        "outcome_confidence",
    ]
    assert set(first) == set(EXPORT_KEYS)
    assert first["outcome"] == "mistake_and_recovery" and first["outcome_version"] == 2
    assert first["subtasks"] == doc_label["subtasks"] and first["hand_actions"] == doc_label["hand_actions"]
    assert first["leakage_groups"] == doc_label["leakage_groups"]
    assert first["model_version"] is None  # "" in the label, null in the export
    assert first["mistake_type"] == "slip_during_place" and first["evaluation_membership"] == "train"
    assert first["outcome_source"] == "human" and first["outcome_source_metadata"] == {}
    assert first["outcome_confidence"] is None
    second = lines[1]
    assert second["outcome"] == "failure" and second["recovery_type"] is None and second["quality"] is None
    assert second["outcome_source"] == "imported"
    assert second["outcome_source_metadata"]["run_id"] == "r42"
    assert lines[2]["outcome_confidence"] == 0.9 and lines[2]["outcome_source"] == "model"


def test_unlabelled_episode_gets_only_three_keys(labelled):
    lines = read_lines(export_outcomes(labelled))
    unlabelled = [line for line in lines if line["episode_index"] == 4][0]
    assert unlabelled == {
        "episode_index": 4,
        "avala_sequence_uid": sequence_uid("kitchen-rollouts", 4),
        "outcome": None,
    }


def test_avala_sequence_uid_is_a_stable_uuid5(labelled, tmp_path):
    lines = read_lines(export_outcomes(labelled))
    namespace = uuid.uuid5(SEQUENCE_UID_NAMESPACE, "kitchen-rollouts")
    assert lines[0]["avala_sequence_uid"] == str(uuid.uuid5(namespace, "0"))
    assert len({line["avala_sequence_uid"] for line in lines}) == len(lines)
    again = read_lines(export_outcomes(labelled, tmp_path / "again.jsonl"))
    assert [line["avala_sequence_uid"] for line in again] == [line["avala_sequence_uid"] for line in lines]
    pinned = read_lines(export_outcomes(labelled, tmp_path / "pinned.jsonl", dataset_id="your-org/kitchen-rollouts"))
    assert (
        pinned[0]["avala_sequence_uid"]
        == sequence_uid("your-org/kitchen-rollouts", 0)
        != lines[0]["avala_sequence_uid"]
    )


def test_dataset_id_of_a_hub_cache_snapshot(tmp_path):
    snapshot = tmp_path / "hub" / "datasets--your-hf-user--kitchen-rollouts" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    assert dataset_id_of(snapshot) == "your-hf-user/kitchen-rollouts"
    assert dataset_id_of(tmp_path / "kitchen-rollouts") == "kitchen-rollouts"


def test_round_trip_into_an_empty_store_is_equal(labelled, tmp_path):
    exported = export_outcomes(labelled)
    other = tmp_path / "other-labels"
    report = import_outcomes(labelled, exported, labels_dir=other)
    assert report == {"lines": 12, "written": 3, "unchanged": 0, "unlabelled": 9}
    again = export_outcomes(labelled, tmp_path / "again.jsonl", labels_dir=other)
    assert again.read_bytes() == exported.read_bytes()
    assert get_outcome(labelled, 0, labels_dir=other)["version"] == 2  # the exported outcome_version


def test_an_imported_version_stores_the_episode_fingerprint(labelled, tmp_path):
    other = tmp_path / "other-labels"
    import_outcomes(labelled, export_outcomes(labelled), labels_dir=other)
    imported = OutcomeStore.open(outcomes_path(labelled, other)).refresh().current(0)
    original = OutcomeStore.open(outcomes_path(labelled)).refresh().current(0)
    assert imported["fingerprint"] == original["fingerprint"] and imported["fingerprint"]["length"] == 600


def test_importing_the_same_export_again_changes_nothing(labelled):
    exported = export_outcomes(labelled)
    before = (labelled / "episode_outcomes.jsonl").read_bytes()
    report = import_outcomes(labelled, exported)
    assert report["written"] == 0 and report["unchanged"] == 3
    assert (labelled / "episode_outcomes.jsonl").read_bytes() == before


def test_import_writes_a_new_version_over_a_different_label(labelled, tmp_path):
    exported = export_outcomes(labelled)
    set_outcome(labelled, 3, outcome="failure")  # version 2 of episode 3 differs from the export
    set_outcome(labelled, 5, outcome="aborted")  # not in the export (unlabelled there): kept
    report = import_outcomes(labelled, exported, labeled_by="importer")
    assert report["written"] == 1
    current = get_outcome(labelled, 3)
    assert current["version"] == 3 and current["outcome"] == "slow_success" and current["labeled_by"] == "importer"
    assert [h["outcome"] for h in outcome_history(labelled, 3)] == ["slow_success", "failure", "slow_success"]
    assert get_outcome(labelled, 5)["outcome"] == "aborted"


def test_import_refuses_lines_that_break_a_rule_naming_the_line(labelled, tmp_path):
    lines = read_lines(export_outcomes(labelled))
    lines[0]["subtasks"][2]["end_ts"] = 25.0  # episode 0 lasts 20.0 s
    lines[1]["outcome_confidence"] = 0.5  # source is imported
    lines[2]["hand_actions"] = {"left": [{"start_ts": 0, "end_ts": 1, "action": "hold", "contact": "yes"}]}
    lines[3]["episode_index"] = 2  # the dataset has no episode 2
    lines[4] = {**lines[4], "outcome": "success"}
    lines.append({"episode_index": 0, "outcome": None})  # duplicate
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    before = (labelled / "episode_outcomes.jsonl").read_bytes()
    with pytest.raises(OutcomeValidationError) as info:
        import_outcomes(labelled, bad)
    paths = info.value.paths
    assert "line 1: subtasks[2].end_ts" in paths
    assert "line 2: outcome_confidence" in paths
    assert "line 3: hand_actions.left[0].contact" in paths
    assert "line 4: episode_index" in paths
    assert "line 5: outcome" in paths
    assert "line 13: episode_index" in paths
    assert "line 14" in paths
    assert (labelled / "episode_outcomes.jsonl").read_bytes() == before


def test_import_refuses_unknown_keys(labelled, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"episode_index": 3, "outcome": "failure", "sequence_notes": "x"}) + "\n")
    with pytest.raises(OutcomeValidationError) as info:
        import_outcomes(labelled, path)
    assert info.value.paths == ["line 1: sequence_notes"]


def test_import_of_a_hand_written_file_without_trailing_newline(dataset, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"episode_index": 3, "outcome": "failure", "outcome_version": 1}))
    assert import_outcomes(dataset, path)["written"] == 1
    assert list(current_outcomes(dataset)) == [3]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("episode_index", True),
        ("episode_index", 3.0),
        ("episode_index", -1),
        ("episode_index", 2**70),
        ("episode_index", "3"),
        ("outcome_version", True),
        ("outcome_version", 0),
        ("outcome_version", 2.0),
        ("outcome_version", "2"),
    ],
)
def test_import_takes_the_integer_limits_of_every_entry_point(dataset, tmp_path, field, value):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"episode_index": 3, "outcome": "failure", "outcome_version": 1, field: value}) + "\n")
    with pytest.raises(OutcomeValidationError) as info:
        import_outcomes(dataset, path)
    assert info.value.paths == [f"line 1: {field}"] and f"got {value!r}" in str(info.value)
    assert current_outcomes(dataset) == {}

"""Outcome labels on the shared real datasets (read-only: labels kept in labels_dir)."""

from __future__ import annotations

import json

import pytest

from strands_robots.outcomes import (
    OutcomeValidationError,
    current_outcomes,
    export_outcomes,
    import_outcomes,
    set_outcome,
)


def test_g1_v21_duration_and_labels_dir(shared_dataset, tmp_path):
    root = shared_dataset("g1-inspire-v21")  # v2.1, 30 fps; episode 1 has 393 frames = 13.1 s
    labels = tmp_path / "labels"
    hand = {"right": [{"start_ts": 0.0, "end_ts": 14.1, "action": "grasping the bottle", "object": "bottle"}]}
    stored = set_outcome(root, 1, labels_dir=labels, outcome="expert_success", hand_actions=hand)
    assert stored["hand_actions"]["right"][0]["end_ts"] == 14.1  # 13.1 s + 1 s
    hand["right"][0]["end_ts"] = 14.2
    with pytest.raises(OutcomeValidationError) as info:
        set_outcome(root, 1, labels_dir=labels, outcome="expert_success", hand_actions=hand)
    assert info.value.paths == ["hand_actions.right[0].end_ts"]
    assert not (root / "episode_outcomes.jsonl").exists()


def test_multifile_v30_export_round_trip(shared_dataset, tmp_path):
    root = shared_dataset("piper-act-v30-multifile")  # 55 episodes in three metadata files, 15 fps
    labels = tmp_path / "labels"
    set_outcome(root, 0, labels_dir=labels, outcome="failure",
                subtasks=[{"label": "reach", "start_ts": 0.0, "end_ts": 19.26}])  # 274 / 15 = 18.27 s  # fmt: skip
    set_outcome(root, 54, labels_dir=labels, outcome="slow_success", evaluation_membership="train")
    path = export_outcomes(root, labels_dir=labels)
    assert path == labels / "meta" / "avala_sequence_outcomes.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 55 and sum(line["outcome"] is not None for line in lines) == 2
    other = tmp_path / "other"
    assert import_outcomes(root, path, labels_dir=other)["written"] == 2
    assert export_outcomes(root, tmp_path / "again.jsonl", labels_dir=other).read_bytes() == path.read_bytes()
    assert list(current_outcomes(root, labels_dir=other)) == [0, 54]

"""set/get/history/list on a real (minimal) LeRobot dataset: versions, refusals, filters."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from strands_robots.errors import EpisodeNotFoundError, LabelValidationError
from strands_robots.outcomes import (
    OutcomeNotFoundError,
    OutcomeValidationError,
    current_outcomes,
    get_outcome,
    list_outcomes,
    outcome_history,
    outcomes_path,
    set_outcome,
)

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def test_set_and_get_the_document_example(dataset, doc_label):
    stored = set_outcome(dataset, 0, labeled_by="user-1", **doc_label)
    assert stored == get_outcome(dataset, 0)
    assert stored["version"] == 1 and stored["is_current"] is True and stored["episode_index"] == 0
    assert stored["labeled_by"] == "user-1"
    assert ISO_UTC.match(stored["created_at"]) and stored["created_at"] == stored["updated_at"]
    for key, value in doc_label.items():
        assert stored[key] == value, key
    path = outcomes_path(dataset)
    assert path == dataset / "episode_outcomes.jsonl"
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"format": "strands-robots-labels/episode_outcomes", "kind": "header", "version": 1}
    assert json.loads(lines[1])["uid"] == stored["uid"]


def test_a_write_replaces_the_label_completely_and_keeps_history(dataset, doc_label):
    first = set_outcome(dataset, 0, **doc_label)
    second = set_outcome(dataset, 0, outcome="failure", progress=0.4)
    assert second["version"] == 2 and second["uid"] != first["uid"]
    # omitted optional fields are unset, not carried over from version 1
    assert second["subtasks"] == [] and second["hand_actions"] == {"left": [], "right": []}
    assert second["quality"] is None and second["mistake_type"] == "" and second["leakage_groups"] == {}
    assert second["evaluation_membership"] == "" and second["source"] == "human"
    history = outcome_history(dataset, 0)
    assert [h["version"] for h in history] == [2, 1]  # newest first
    assert [h["is_current"] for h in history] == [True, False]
    assert history[1]["subtasks"] == doc_label["subtasks"]
    assert history[1]["uid"] == first["uid"]
    assert get_outcome(dataset, 0)["outcome"] == "failure"


def test_labeled_by_defaults_to_the_login_name(dataset):
    import getpass

    assert set_outcome(dataset, 3, outcome="expert_success")["labeled_by"] == getpass.getuser()


def test_unlabelled_episode_is_a_typed_not_found(dataset):
    with pytest.raises(OutcomeNotFoundError) as info:
        get_outcome(dataset, 3)
    assert isinstance(info.value, EpisodeNotFoundError) and isinstance(info.value, KeyError)
    assert "set_outcome" in str(info.value)
    with pytest.raises(OutcomeNotFoundError):
        outcome_history(dataset, 3)


def test_episode_the_dataset_does_not_have_is_refused(dataset):
    with pytest.raises(EpisodeNotFoundError) as info:
        set_outcome(dataset, 2, outcome="failure")  # the fixture has no episode 2
    assert "no episode 2" in str(info.value) and "0-1, 3-12" in str(info.value)
    with pytest.raises(EpisodeNotFoundError):
        set_outcome(dataset, 13, outcome="failure")
    assert not outcomes_path(dataset).exists()


@pytest.mark.parametrize("bad", [-1, True, 1.0, "1"])
def test_episode_index_must_be_an_integer(dataset, bad):
    with pytest.raises(LabelValidationError):
        set_outcome(dataset, bad, outcome="failure")


def test_numpy_episode_index_is_accepted(dataset):
    assert set_outcome(dataset, np.int64(4), outcome="failure")["episode_index"] == 4


def test_duration_rule_uses_length_over_fps(dataset, doc_write):
    # episode 0 is 600 frames at 30 fps = 20.0 s: 21.5 > 21.0
    with pytest.raises(OutcomeValidationError) as info:
        set_outcome(dataset, 0, **doc_write)
    assert info.value.paths == ["subtasks[0].end_ts"]
    # episode 1 is 660 frames = 22.0 s
    assert set_outcome(dataset, 1, **doc_write)["subtasks"][0]["end_ts"] == 21.5


def test_nothing_is_stored_when_any_rule_fails(dataset, doc_label):
    set_outcome(dataset, 0, **doc_label)
    before = outcomes_path(dataset).read_bytes()
    doc_label["subtasks"][2]["end_ts"] = 5.0
    doc_label["source_metadata"] = {"nested": {"a": 1}}
    with pytest.raises(OutcomeValidationError) as info:
        set_outcome(dataset, 0, **doc_label)
    assert set(info.value.paths) == {"subtasks[2].end_ts", "source_metadata.nested"}
    assert outcomes_path(dataset).read_bytes() == before
    assert get_outcome(dataset, 0)["version"] == 1


def test_labels_dir_keeps_the_sidecar_elsewhere(dataset, tmp_path):
    labels = tmp_path / "labels"
    set_outcome(dataset, 5, labels_dir=labels, outcome="aborted")
    assert (labels / "episode_outcomes.jsonl").is_file()
    assert not outcomes_path(dataset).exists()
    assert get_outcome(dataset, 5, labels_dir=labels)["outcome"] == "aborted"
    with pytest.raises(OutcomeNotFoundError):
        get_outcome(dataset, 5)


# -- list_outcomes --------------------------------------------------------------------------------


@pytest.fixture
def labelled(dataset, doc_write):
    set_outcome(dataset, 1, **doc_write)  # failure, held_out_eval, imported, autonomous
    set_outcome(
        dataset,
        3,
        outcome="aborted",
        evaluation_membership="held_out_eval",
        autonomy_level="autonomous",
        model_version="your-policy@2026-09-20",
        source="model",
        confidence=0.7,
    )
    set_outcome(dataset, 4, outcome="failure", evaluation_membership="train", autonomy_level="teleoperation")
    set_outcome(dataset, 5, outcome="mistake_and_recovery", evaluation_membership="train")
    set_outcome(dataset, 6, outcome="intervention", autonomy_level="intervention")
    return dataset


def episodes(labels):
    return [label["episode_index"] for label in labels]


def test_list_filters_match_any_value_of_a_list(labelled):
    assert episodes(list_outcomes(labelled)) == [1, 3, 4, 5, 6]
    # the document's "failed or aborted held-out sequences"
    assert episodes(list_outcomes(labelled, outcome=["failure", "aborted"], evaluation_membership="held_out_eval")) == [
        1,
        3,
    ]
    assert episodes(list_outcomes(labelled, outcome=("mistake_and_recovery", "intervention"))) == [5, 6]
    assert episodes(list_outcomes(labelled, source="model")) == [3]
    assert episodes(list_outcomes(labelled, source=["imported", "model"])) == [1, 3]
    assert episodes(list_outcomes(labelled, autonomy_level="autonomous")) == [1, 3]
    assert episodes(list_outcomes(labelled, evaluation_membership="")) == [6]


def test_model_version_matches_exactly(labelled):
    assert episodes(list_outcomes(labelled, model_version="your-policy@2026-09-20")) == [1, 3]
    assert list_outcomes(labelled, model_version="your-policy") == []
    with pytest.raises(LabelValidationError):
        list_outcomes(labelled, model_version=["a", "b"])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"outcome": "success"},
        {"outcome": ["failure", "fail"]},
        {"evaluation_membership": "test"},
        {"source": "robot"},
        {"autonomy_level": "remote"},
        {"outcome": []},
        {"outcome": 3},
    ],
)
def test_unknown_filter_value_is_an_error(labelled, kwargs):
    with pytest.raises(LabelValidationError):
        list_outcomes(labelled, **kwargs)


def test_list_reads_only_current_labels(labelled):
    set_outcome(labelled, 4, outcome="expert_success")
    assert episodes(list_outcomes(labelled, outcome="failure")) == [1]


def test_current_outcomes_maps_episode_to_current_label(labelled):
    current = current_outcomes(labelled)
    assert list(current) == [1, 3, 4, 5, 6]
    assert current[3]["outcome"] == "aborted" and current[3]["confidence"] == 0.7
    current[1]["subtasks"][0]["label"] = "changed"  # a copy: the store is not affected
    assert get_outcome(labelled, 1)["subtasks"][0]["label"] == "Place the plate in the lower rack"
    assert current_outcomes(labelled, labels_dir=labelled / "nowhere") == {}


def test_a_changed_dataset_is_seen_by_the_next_write(dataset, rewrite_dataset):
    with pytest.raises(EpisodeNotFoundError):
        set_outcome(dataset, 2, outcome="failure")
    rewrite_dataset(dataset, {2: 90})  # the dataset gained episode 2
    assert set_outcome(dataset, 2, outcome="failure")["episode_index"] == 2


def test_labeled_by_has_the_one_name_limit_of_every_store(dataset, doc_label):
    from strands_robots.arguments import NAME_CHARS

    name = "u" * NAME_CHARS  # what a reviewer, a judge model or a segment annotator may be
    assert set_outcome(dataset, 0, labeled_by=name, **doc_label)["labeled_by"] == name
    before = outcomes_path(dataset).read_bytes()
    with pytest.raises(LabelValidationError, match="labeled_by"):
        set_outcome(dataset, 1, labeled_by=name + "u", **doc_label)
    assert outcomes_path(dataset).read_bytes() == before

"""The label API is a drop-in for strands-robots 0.5.3's ``episode_labels``.

Names it exports, the built-in exception types a caller of that package catches, and
the message phrases its callers match on (``docs/compatibility.md``). Our typed errors
stay subclasses of those built-ins, so our own callers keep catching them too.
"""

from __future__ import annotations

import json
import warnings

import pytest

import strands_robots.episode_labels as el
from strands_robots.episode_labels import (
    FAILURE_MODES,
    LABEL_SCHEMA_VERSION,
    QUALITY_GRADES,
    SIDECAR_FILENAME,
    annotate_episode,
    deterministic_verdict,
    filter_episodes,
    labels_path,
    measure_agreement,
    read_labels,
    record_deterministic_verdicts,
)
from strands_robots.errors import (
    EpisodeNotFoundError,
    LabelsNotFoundError,
    LabelValidationError,
    NonFiniteNumberWarning,
    RootNotFoundError,
    SidecarError,
    VerdictNotFoundError,
)

VERDICTS = [
    {"episode": 0, "success": True, "failure": False, "steps": 12, "cumulative_reward": 2.0, "seed": 3},
    {"episode": 1, "success": False, "failure": True, "steps": 9, "cumulative_reward": -0.5, "seed": 4},
]


@pytest.fixture
def root(tmp_path):
    path = tmp_path / "ds"
    path.mkdir()
    return path


@pytest.fixture
def recorded(root):
    record_deterministic_verdicts(root, VERDICTS, benchmark="reach")
    return root


def test_the_upstream_names_exist_and_mean_the_same():
    assert LABEL_SCHEMA_VERSION == el.SCHEMA_VERSION == 1
    assert SIDECAR_FILENAME == "episode_labels.json"
    assert {"LABEL_SCHEMA_VERSION", "SIDECAR_FILENAME"} <= set(el.__all__)


def test_the_sidecar_is_named_by_the_constant(recorded):
    assert labels_path(recorded) == recorded / SIDECAR_FILENAME
    assert read_labels(recorded)["schema_version"] == LABEL_SCHEMA_VERSION


def test_a_missing_root_is_a_file_not_found_and_a_sidecar_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not an existing directory") as caught:
        record_deterministic_verdicts(tmp_path / "nowhere", VERDICTS)
    assert isinstance(caught.value, RootNotFoundError)
    assert isinstance(caught.value, SidecarError) and isinstance(caught.value, ValueError)
    assert not (tmp_path / "nowhere").exists()


def test_annotating_before_any_sidecar_names_the_remedy(root):
    with pytest.raises(FileNotFoundError, match="Record deterministic verdicts first") as caught:
        annotate_episode(root, 0, quality="high")
    assert isinstance(caught.value, LabelsNotFoundError)
    assert "record_deterministic_verdicts" in str(caught.value)
    assert not labels_path(root).exists()


def test_an_episode_without_a_verdict_is_a_value_error_and_a_key_error(recorded):
    before = labels_path(recorded).read_bytes()
    with pytest.raises(ValueError, match="No deterministic verdict recorded for episode 5") as caught:
        annotate_episode(recorded, 5, quality="high")
    assert isinstance(caught.value, VerdictNotFoundError)
    assert isinstance(caught.value, EpisodeNotFoundError) and isinstance(caught.value, KeyError)
    with pytest.raises(ValueError, match="No deterministic verdict recorded for episode 7"):
        deterministic_verdict(recorded, 7)
    with pytest.raises(KeyError):
        deterministic_verdict(recorded, 7)
    assert labels_path(recorded).read_bytes() == before


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            lambda r: filter_episodes(r, min_quality="excellent"),
            f"filter_episodes: min_quality must be one of {QUALITY_GRADES}, got 'excellent'.",
        ),
        (
            lambda r: annotate_episode(r, 0, quality="excellent"),
            f"annotate_episode: quality must be one of {QUALITY_GRADES}, got 'excellent'.",
        ),
        (
            lambda r: measure_agreement(r, {0: {"quality": "excellent"}}),
            f"measure_agreement: human_labels[0] must be a dict with 'quality' in {QUALITY_GRADES}.",
        ),
    ],
    ids=["filter", "annotate", "agreement"],
)
def test_vocabulary_refusals_word_for_word(recorded, call, expected):
    with pytest.raises(LabelValidationError) as caught:
        call(recorded)
    assert str(caught.value) == expected


@pytest.mark.parametrize(
    ("call", "hint"),
    [
        (lambda r: annotate_episode(r, 0, quality="Medium"), "'Medium' -> 'medium'"),
        (lambda r: annotate_episode(r, 0, quality="low", failure_mode="near-miss"), "'near-miss' -> 'near_miss'"),
        (lambda r: filter_episodes(r, min_quality="HIGH"), "'HIGH' -> 'high'"),
        (lambda r: measure_agreement(r, {0: {"quality": "Low"}}), "'Low' -> 'low'"),
        (
            lambda r: measure_agreement(r, {0: {"quality": "low", "failure_mode": "occlusion"}}),
            "'occlusion' -> 'camera_occlusion'",
        ),
    ],
)
def test_a_near_miss_ends_with_the_word_it_missed(recorded, call, hint):
    with pytest.raises(ValueError) as caught:
        call(recorded)
    assert str(caught.value).endswith(f" Did you mean: {hint}?")


def test_note_and_model_must_be_strings(recorded):
    with pytest.raises(ValueError, match="note must be a string, got int"):
        annotate_episode(recorded, 0, quality="high", note=42)
    with pytest.raises(ValueError, match="model must be a string, got int"):
        annotate_episode(recorded, 0, quality="high", model=42)
    assert "judge" not in read_labels(recorded)["episodes"]["0"]


def test_a_failure_mode_outside_the_taxonomy_names_it(recorded):
    with pytest.raises(ValueError, match="failure_mode must be None or one of") as caught:
        annotate_episode(recorded, 0, quality="low", failure_mode="sloppy")
    assert str(FAILURE_MODES) in str(caught.value)


def _rewrite(root, mutate):
    path = labels_path(root)
    el.flush(root)
    document = json.loads(path.read_text())
    mutate(document)
    path.write_text(json.dumps(document))


def test_a_future_schema_version_is_named(recorded):
    _rewrite(recorded, lambda d: d.update(schema_version=99))
    with pytest.raises(ValueError, match="schema_version 99"):
        read_labels(recorded)


def test_a_record_that_is_not_an_object_says_what_was_expected(recorded):
    _rewrite(recorded, lambda d: d["episodes"].update({"1": "not-an-object"}))
    with pytest.raises(SidecarError, match="expected a JSON object"):
        read_labels(recorded)


def test_a_stored_failure_mode_outside_the_taxonomy_names_the_vocabulary(recorded):
    annotate_episode(recorded, 1, quality="low", failure_mode="drift")
    _rewrite(recorded, lambda d: d["episodes"]["1"]["judge"].update(failure_mode="bogus"))
    with pytest.raises(SidecarError) as caught:
        read_labels(recorded)
    assert str(FAILURE_MODES) in str(caught.value)
    assert "'1'" in str(caught.value)


def test_agreement_over_no_judged_episode_is_refused(recorded):
    with pytest.raises(ValueError, match="agreement over nothing") as caught:
        measure_agreement(recorded, {0: {"quality": "high"}, 1: {"quality": "low"}})
    assert "[0, 1]" in str(caught.value)  # the holdout episodes that carry no judge block


def test_agreement_with_one_judged_episode_still_reports_the_missing_one(recorded):
    annotate_episode(recorded, 0, quality="high")
    report = measure_agreement(recorded, {0: {"quality": "high"}, 1: {"quality": "low"}})
    assert report["episodes_compared"] == 1
    assert report["quality_agreement"] == 1.0
    assert report["missing"] == [1]


NAN_FILE = (
    '{"schema_version": 1, "benchmark": "reach", "episodes": {"0": {"episode_index": 0, '
    '"deterministic": {"success": true, "failure": false, "steps": 12, "cumulative_reward": NaN, "seed": 3}}, '
    '"1": {"episode_index": 1, "deterministic": {"success": false, "failure": true, "cumulative_reward": -Infinity}}}}'
)


def test_a_nan_written_by_another_tool_reads_as_null_with_a_warning(root):
    labels_path(root).write_text(NAN_FILE)
    with pytest.warns(NonFiniteNumberWarning, match="2 non-finite number"):
        document = read_labels(root)
    assert document["episodes"]["0"]["deterministic"]["cumulative_reward"] is None
    assert document["episodes"]["0"]["deterministic"]["steps"] == 12
    assert document["episodes"]["1"]["deterministic"]["cumulative_reward"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonFiniteNumberWarning)
        annotate_episode(root, 0, quality="high")
        annotate_episode(root, 1, quality="high")
        assert filter_episodes(root) == [0]  # the index reads the file too
        assert filter_episodes(root, require_success=False) == [0, 1]


def test_a_nan_is_never_written_back(root):
    labels_path(root).write_text(NAN_FILE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonFiniteNumberWarning)
        annotate_episode(root, 0, quality="medium", note="read through the non-finite number")
        el.flush(root)
    text = labels_path(root).read_text()
    assert "NaN" not in text and "Infinity" not in text
    document = json.loads(text)  # strict JSON now
    assert document["episodes"]["0"]["deterministic"]["cumulative_reward"] is None
    assert document["episodes"]["0"]["judge"]["quality"] == "medium"


def test_a_nan_where_a_verdict_flag_belongs_is_refused_naming_the_field(root):
    labels_path(root).write_text(
        '{"schema_version": 1, "episodes": {"0": {"episode_index": 0, "deterministic": {"success": NaN}}}}'
    )
    before = labels_path(root).read_bytes()
    with pytest.warns(NonFiniteNumberWarning), pytest.raises(SidecarError, match="success"):
        read_labels(root)
    assert labels_path(root).read_bytes() == before


def test_writing_nan_is_still_refused(root):
    with pytest.raises(LabelValidationError, match="finite"):
        record_deterministic_verdicts(root, [{"episode": 0, "success": True, "cumulative_reward": float("nan")}])
    assert not labels_path(root).exists()

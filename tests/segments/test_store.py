"""episode_segments.json: save, refuse, history, references, pool, remap, subtasks."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from strands_robots.errors import DatasetError, EpisodeNotFoundError, LabelValidationError, SidecarError
from strands_robots.segments import (
    SIDECAR_FILENAME,
    SegmentationRefused,
    get_segmentation,
    label_pool,
    list_segmentations,
    mark_reference,
    reference_examples,
    remap,
    save_segmentation,
    segmentation_history,
    segments_path,
    segments_to_subtasks,
    template_choices,
    validate_episode,
)

TASK = "pick the mug from the counter and place it in the sink"


def test_save_and_read_back(dataset, valid_ep0):
    result = save_segmentation(dataset, 0, valid_ep0, annotator="ana", note="first pass")
    record = get_segmentation(dataset, 0)
    assert record == result.record
    assert record["episode_index"] == 0 and record["version"] == 1 and record["length"] == 60
    assert record["cohort"] == "robocasa365" and record["tasks"] == [TASK]
    assert record["annotator"] == "ana" and record["note"] == "first pass" and record["reference"] is False
    assert record["annotated_at"].endswith("Z") and record["source"] == "annotation"
    assert record["segments"][2] == {
        "start": 30, "end": 42, "label": "pick up the mug from the counter", "template_id": "P1",
        "slots": {"theme": "mug", "source": "counter"}, "modifiers": {}, "note": None,
    }  # fmt: skip
    on_disk = json.loads((dataset / SIDECAR_FILENAME).read_text())
    assert on_disk["schema_version"] == 1 and on_disk["kind"] == "episode_segments"
    assert list(on_disk["episodes"]) == ["0"] and on_disk["episodes"]["0"]["history"] == []
    # findings come back with the save, from the same inputs as validate_episode: the dataset
    # has observation.base_velocity, so the navigate rule ran (not skipped) and passed
    assert [f.kind for f in result.findings if f.severity == "skipped"] == []
    assert result.findings == validate_episode(dataset, 0) == []
    assert "findings" not in record  # not stored: validate_episode recomputes them


def test_save_runs_the_navigate_rule_on_the_base_velocity(dataset, valid_ep0):
    # episode 0's base moves during [10, 30) only: a navigate over [0, 10) is an error
    moved = [dict(s) for s in valid_ep0]
    moved[0]["label"] = "navigate to the cabinet"
    result = save_segmentation(dataset, 0, moved, annotator="ana")
    assert [(f.kind, f.severity, f.start, f.end) for f in result.findings] == [("navigate_base_motion", "error", 0, 10)]
    assert result.findings == validate_episode(dataset, 0)
    with pytest.raises(SegmentationRefused, match="navigate_base_motion at frames \\[0, 10\\)"):
        save_segmentation(dataset, 0, moved, annotator="ana", strict=True)
    off = save_segmentation(dataset, 0, moved, annotator="ana", use_base_velocity=False)
    assert [(f.kind, f.severity) for f in off.findings] == [("navigate_base_motion", "skipped")]
    with pytest.raises(DatasetError, match="no feature 'base_vel'"):
        save_segmentation(dataset, 0, moved, annotator="ana", base_velocity_feature="base_vel")
    assert segmentation_history(dataset, 0)[0]["version"] == 2  # the refused saves stored nothing


def test_history_newest_first(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="ana")
    valid_ep0[3]["label"] = "place the mug in the left sink basin"
    valid_ep0[3]["note"] = "two basins"
    save_segmentation(dataset, 0, valid_ep0, annotator="ben")
    versions = segmentation_history(dataset, 0)
    assert [(v["version"], v["annotator"]) for v in versions] == [(2, "ben"), (1, "ana")]
    assert versions[0]["segments"][3]["label"] == "place the mug in the left sink basin"
    assert versions[0]["segments"][3]["note"] == "two basins"
    assert versions[1]["segments"][3]["label"] == "place the mug in the sink"
    assert "history" not in get_segmentation(dataset, 0)


def test_a_gap_is_refused_with_the_exact_finding_and_nothing_changes(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="ana")
    before = (dataset / SIDECAR_FILENAME).read_bytes()
    broken = [dict(s) for s in valid_ep0]
    broken[1]["end"] = 28  # frames [28, 30) uncovered
    broken[4]["start"] = 50  # overlaps the place [42, 55)
    with pytest.raises(SegmentationRefused) as info:
        save_segmentation(dataset, 0, broken, annotator="ana")
    assert [(f.kind, f.start, f.end) for f in info.value.findings] == [("gap", 28, 30), ("overlap", 50, 55)]
    assert "gap at frames [28, 30)" in str(info.value)
    assert (dataset / SIDECAR_FILENAME).read_bytes() == before


def test_other_blocking_findings_and_strict(dataset):
    with pytest.raises(SegmentationRefused, match="unparseable_label"):
        save_segmentation(dataset, 1, [{"start": 0, "end": 40, "label": "grab it"}], annotator="a")
    with pytest.raises(SegmentationRefused, match="task_complete_placement"):
        save_segmentation(dataset, 1, [{"start": 0, "end": 40, "label": "TASK_COMPLETE"}], annotator="a")
    coffee = [{"start": 0, "end": 40, "label": "turn on the coffee machine"}]
    result = save_segmentation(dataset, 1, coffee, annotator="a")  # a rule error is saved and reported
    assert [f.kind for f in result.findings if f.severity == "error"] == ["activation_control"]
    with pytest.raises(SegmentationRefused, match="activation_control"):
        save_segmentation(dataset, 1, coffee, annotator="a", strict=True)
    assert get_segmentation(dataset, 1)["version"] == 1


def test_cohort_is_inferred_or_given(dataset):
    labels = [
        {"start": 0, "end": 10, "label": "Idle"},
        {"start": 10, "end": 25, "label": "Pick"},
        {"start": 25, "end": 40, "label": "Place"},
    ]
    assert save_segmentation(dataset, 1, labels, annotator="a").record["cohort"] == "agibot"
    with pytest.raises(SegmentationRefused, match="wrong_cohort"):
        save_segmentation(dataset, 1, labels, annotator="a", cohort="allex")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"episode": 2}, EpisodeNotFoundError, r"episode 2 not found .* 0..3 \(not contiguous\)"),  # 0, 1, 3
        ({"annotator": ""}, LabelValidationError, "annotator"),
        ({"annotator": 7}, LabelValidationError, "annotator"),
        ({"reference": "yes"}, LabelValidationError, "reference"),
        ({"cohort": "robocasa"}, LabelValidationError, "unknown cohort"),
        ({"note": "x" * 2001}, LabelValidationError, "at most 2000"),
    ],
)
def test_bad_input_is_refused(dataset, valid_ep0, kwargs, error, message):
    args = {"episode": 0, "annotator": "ana", **kwargs}
    with pytest.raises(error, match=message):
        save_segmentation(dataset, args.pop("episode"), valid_ep0, **args)
    assert not (dataset / SIDECAR_FILENAME).exists()


def test_root_without_metadata_needs_length(tmp_path, valid_ep0):
    with pytest.raises(DatasetError, match="length="):
        save_segmentation(tmp_path, 0, valid_ep0, annotator="a")
    assert save_segmentation(tmp_path, 0, valid_ep0, annotator="a", length=60).record["length"] == 60


def test_labels_dir_keeps_the_sidecar_elsewhere(dataset, valid_ep0, tmp_path):
    elsewhere = tmp_path / "labels"
    elsewhere.mkdir()
    save_segmentation(dataset, 0, valid_ep0, annotator="a", labels_dir=elsewhere)
    assert segments_path(dataset, labels_dir=elsewhere) == elsewhere / SIDECAR_FILENAME
    assert (elsewhere / SIDECAR_FILENAME).is_file() and not (dataset / SIDECAR_FILENAME).exists()
    assert get_segmentation(dataset, 0, labels_dir=elsewhere)["version"] == 1
    with pytest.raises(EpisodeNotFoundError, match="no segmentation saved"):
        get_segmentation(dataset, 0)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"schema_version": 1, "kind": "episode_segments", "episodes": {"01": {}}}', "decimal spelling"),
        # a superscript is a digit to str.isdigit but not to int(): refused, not a ValueError
        ('{"schema_version": 1, "kind": "episode_segments", "episodes": {"\\u00b9": {}}}', "decimal spelling"),
        ("[1, 2]", "not an object"),
    ],
)
def test_foreign_or_future_file_is_refused_and_untouched(dataset, valid_ep0, content, message):
    path = dataset / SIDECAR_FILENAME
    path.write_text(content)
    with pytest.raises(SidecarError, match=message):
        save_segmentation(dataset, 0, valid_ep0, annotator="a")
    with pytest.raises(SidecarError):
        list_segmentations(dataset)
    assert path.read_text() == content


def test_list_and_references(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="a", reference=True)
    save_segmentation(
        dataset,
        1,
        [
            {"start": 0, "end": 20, "label": "pick up the mug from the counter"},
            {"start": 20, "end": 40, "label": "place the mug in the left sink basin"},
        ],
        annotator="b",
    )
    save_segmentation(
        dataset, 3, [{"start": 0, "end": 50, "label": "pick up the ice cube from the tray"}], annotator="c"
    )
    assert [r["episode_index"] for r in list_segmentations(dataset)] == [0, 1, 3]
    assert [r["episode_index"] for r in list_segmentations(dataset, task=TASK)] == [0, 1]
    assert [r["episode_index"] for r in list_segmentations(dataset, reference=True)] == [0]
    assert [r["episode_index"] for r in reference_examples(dataset, TASK)] == [0]
    assert reference_examples(dataset, TASK, exclude=0) == []  # never the episode being annotated
    mark_reference(dataset, 1)
    assert [r["episode_index"] for r in reference_examples(dataset, TASK, exclude=0)] == [1]
    assert get_segmentation(dataset, 1)["version"] == 1  # marking is not a new version
    with pytest.raises(EpisodeNotFoundError):
        mark_reference(dataset, 2)


def test_label_pool_counts_templates_of_the_task(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="a")
    save_segmentation(
        dataset,
        1,
        [
            {"start": 0, "end": 20, "label": "pick up the mug from the counter"},
            {"start": 20, "end": 40, "label": "place the mug in the left sink basin"},
        ],
        annotator="b",
    )
    save_segmentation(
        dataset, 3, [{"start": 0, "end": 50, "label": "pick up the ice cube from the tray"}], annotator="c"
    )
    pool = label_pool(dataset, TASK)
    assert [(p["template_id"], p["count"], p["episodes"]) for p in pool] == [
        ("P1", 2, 2), ("L1", 2, 2), ("N1", 1, 1), ("O1", 1, 1), ("TASK_COMPLETE", 1, 1),
    ]  # fmt: skip
    assert pool[0]["labels"] == [{"label": "pick up the mug from the counter", "count": 2}]
    assert label_pool(dataset, "unknown task") == []
    choices = template_choices(dataset, TASK)
    assert [c["id"] for c in choices[:5]] == ["P1", "L1", "N1", "O1", "TASK_COMPLETE"]
    assert len(choices) == 26 and choices[5]["in_pool"] is False and choices[0]["count"] == 2


def test_remap_moves_and_drops(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="a")
    save_segmentation(dataset, 0, valid_ep0, annotator="b")
    save_segmentation(
        dataset, 3, [{"start": 0, "end": 50, "label": "pick up the ice cube from the tray"}], annotator="c"
    )
    # episode 1 deleted and 3 renumbered: rebuild the dataset as LeRobot would ({0, 3} -> {0, 1})
    edited = dataset.parent / "edited"
    from tests.segments.conftest import EPISODES, build_dataset

    build_dataset(edited, {0: EPISODES[0], 1: EPISODES[3]})
    (edited / SIDECAR_FILENAME).write_bytes((dataset / SIDECAR_FILENAME).read_bytes())
    assert remap(edited, {"0": 0, 3: 1}) == 2
    assert [r["episode_index"] for r in list_segmentations(edited)] == [0, 1]
    assert get_segmentation(edited, 1)["segments"][0]["label"] == "pick up the ice cube from the tray"
    assert [v["episode_index"] for v in segmentation_history(edited, 0)] == [0, 0]
    assert remap(edited, {0: 0}, allow_drop=True) == 1  # episode 1 deleted
    assert [r["episode_index"] for r in list_segmentations(edited)] == [0]


def test_remap_checks_a_segmentation_saved_without_a_fingerprint_by_its_length(dataset, valid_ep0):
    """A record saved before fingerprints existed still has its ``length``: the one rule reads it."""
    save_segmentation(dataset, 0, valid_ep0, annotator="a")
    path = dataset / SIDECAR_FILENAME
    document = json.loads(path.read_text())
    document["episodes"]["0"].pop("fingerprint", None)
    path.write_text(json.dumps(document))
    before = path.read_bytes()
    with pytest.raises(LabelValidationError, match=r"0 -> 1 \(length was 60 when labelled, now 40\)"):
        remap(dataset, {0: 1})  # episode 1 has 40 frames: not the same episode
    assert path.read_bytes() == before


def test_segments_to_subtasks_in_seconds(dataset, valid_ep0):
    record = save_segmentation(dataset, 0, valid_ep0, annotator="a").record
    subtasks = segments_to_subtasks(record, 10)
    assert subtasks[:2] == [
        {"label": "open the left cabinet door", "start_ts": 0.0, "end_ts": 1.0, "outcome": None},
        {"label": "navigate to the counter", "start_ts": 1.0, "end_ts": 3.0, "outcome": None},
    ]
    assert subtasks[-1] == {"label": "TASK_COMPLETE", "start_ts": 5.5, "end_ts": 6.0, "outcome": None}
    assert len(segments_to_subtasks(record["segments"], 30, include_task_complete=False)) == 4
    assert segments_to_subtasks([{"start": 1, "end": 3, "label": "Pick"}], 30) == [
        {"label": "Pick", "start_ts": 0.033333, "end_ts": 0.1, "outcome": None}
    ]
    with pytest.raises(LabelValidationError, match="fps"):
        segments_to_subtasks(record, 0)


def test_subtasks_are_accepted_by_the_outcome_labels(dataset, valid_ep0):
    outcomes = pytest.importorskip("strands_robots.outcomes")
    if not hasattr(outcomes, "set_outcome"):
        pytest.skip("strands_robots.outcomes.set_outcome is not available yet")
    record = save_segmentation(dataset, 0, valid_ep0, annotator="a").record
    label = outcomes.set_outcome(dataset, 0, outcome="expert_success", subtasks=segments_to_subtasks(record, 10))
    assert [s["label"] for s in label["subtasks"]] == [s["label"] for s in record["segments"]]
    assert label["subtasks"][-1]["end_ts"] == 6.0


def _save_many(args: tuple[str, int]) -> int:
    root, episode = args
    length = 60 if episode == 0 else 40
    for i in range(5):
        save_segmentation(
            Path(root),
            episode,
            [
                {"start": 0, "end": 10 + i, "label": "pick up the mug from the counter"},
                {"start": 10 + i, "end": length, "label": "place the mug in the sink"},
            ],
            annotator=f"p{episode}",
        )
    return episode


def test_parallel_writers_lose_nothing(dataset):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        assert sorted(pool.map(_save_many, [(str(dataset), 0), (str(dataset), 1)])) == [0, 1]
    for episode in (0, 1):
        versions = segmentation_history(dataset, episode)
        assert [v["version"] for v in versions] == [5, 4, 3, 2, 1]
        assert [v["segments"][0]["end"] for v in versions] == [14, 13, 12, 11, 10]


def test_validate_episode_takes_every_input_from_the_dataset(dataset, valid_ep0):
    from strands_robots.segments import validate_episode

    assert validate_episode(dataset, 0, valid_ep0) == []  # no rule skipped: task and base velocity found
    grouped = [
        {"start": 0, "end": 25, "label": "pick up the ice cubes from the tray"},
        {"start": 25, "end": 50, "label": "place the ice cubes in the glass"},
    ]
    found = validate_episode(dataset, 3, grouped)
    assert sorted({f.kind for f in found}) == ["count_task_group_noun", "count_task_pairs"]
    assert all(f.severity == "error" for f in found)
    save_segmentation(dataset, 3, grouped, annotator="a")
    assert validate_episode(dataset, 3) == found  # the saved segmentation
    assert [f.severity for f in validate_episode(dataset, 0, valid_ep0, use_base_velocity=False)] == ["skipped"]


def test_refusal_is_json_ready_for_a_page(dataset):
    with pytest.raises(SegmentationRefused) as info:
        save_segmentation(dataset, 1, [{"start": 0, "end": 30, "label": "Pick"}], annotator="a")
    payload = info.value.to_dict()
    assert payload["findings"] == [
        {
            "kind": "gap",
            "severity": "error",
            "start": 30,
            "end": 40,
            "segments": [0],
            "blocking": True,
            "message": payload["findings"][0]["message"],
            "rule": "segments cover every frame (no gaps)",
            "source": "docs/segments.md, Validation and findings (§1, §6)",
        },
    ]
    assert json.dumps(payload)


def test_an_annotator_has_the_one_name_limit_of_every_store(dataset, valid_ep0):
    from strands_robots.arguments import NAME_CHARS

    name = "a" * NAME_CHARS  # what a reviewer, a judge model or an outcome's labeled_by may be
    assert save_segmentation(dataset, 0, valid_ep0, annotator=name).record["annotator"] == name
    before = segments_path(dataset).read_bytes()
    with pytest.raises(LabelValidationError, match=f"has {NAME_CHARS + 1} characters; at most {NAME_CHARS}"):
        save_segmentation(dataset, 0, valid_ep0, annotator=name + "a")
    assert segments_path(dataset).read_bytes() == before

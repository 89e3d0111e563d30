"""Import with normalisation and a report; export and round trip."""

from __future__ import annotations

import json

import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.segments import (
    SIDECAR_FILENAME,
    export_segmentations,
    get_segmentation,
    import_segmentations,
    list_segmentations,
    save_segmentation,
    segmentation_history,
)


def spans(record):
    return [(s["start"], s["end"], s["label"]) for s in record["segments"]]


def test_seconds_with_shared_endpoints_as_lerobot_annotate_writes(dataset):
    # 10 fps; each subtask ends where the next begins (seconds), the last ends at the last frame's timestamp
    data = [{"episode_index": 0, "subtasks": [
        {"label": "Navigate back to the counter", "start_ts": 0.0, "end_ts": 3.0},
        {"label": "pick up the mug from the counter", "start_ts": 3.0, "end_ts": 4.2},
        {"label": "place the mug in the sink lightly", "start_ts": 4.2, "end_ts": 5.9},
    ]}]  # fmt: skip
    report = import_segmentations(dataset, data, annotator="import")
    ep = report.episodes[0]
    assert (report.ok, ep.status, ep.segments) == (True, "imported", 3)
    assert spans(get_segmentation(dataset, 0)) == [
        (0, 30, "navigate to the counter"),
        (30, 42, "pick up the mug from the counter"),
        (42, 60, "place the mug in the sink"),
    ]
    assert "converted 3 spans from seconds to frames at 10 fps" in ep.changes
    assert any("share endpoints" in n for n in ep.notes)
    assert any("set to 60" in c for c in ep.changes)
    assert ep.relabels == [
        {"from": "Navigate back to the counter", "to": "navigate to the counter", "rewrites": ["drop_back"]},
        {
            "from": "place the mug in the sink lightly",
            "to": "place the mug in the sink",
            "rewrites": ["drop_manner_adverb"],
        },
    ]
    assert get_segmentation(dataset, 0)["source"] == "import"


def test_behavior_1k_frame_duration_with_head_and_tail_gaps(dataset, tmp_path):
    # BEHAVIOR-1K: one JSON per episode, half-open frame_duration, shared endpoints, a one-item description list
    path = tmp_path / "episode_00000001.json"
    path.write_text(json.dumps({"skill_annotation": [
        {"skill_idx": 0, "frame_duration": [4, 20], "skill_description": ["pick up the mug from the counter"]},
        {"skill_idx": 1, "frame_duration": [20, 33], "skill_description": ["place the mug in the sink"]},
    ]}))  # fmt: skip
    with pytest.raises(LabelValidationError, match="episode="):
        import_segmentations(dataset, path, annotator="b1k")
    report = import_segmentations(dataset, path, annotator="b1k", episode=1)
    assert report.ok
    assert spans(get_segmentation(dataset, 1)) == [
        (0, 20, "pick up the mug from the counter"),
        (20, 33, "place the mug in the sink"),
        (33, 40, "TASK_COMPLETE"),
    ]
    changes = report.episodes[0].changes
    assert "head gap [0, 4) folded into the first segment" in changes
    assert "tail gap [33, 40) labelled TASK_COMPLETE" in changes


def test_tail_and_head_policies(dataset):
    data = {"1": [{"start": 5, "end": 30, "label": "pick up the mug from the counter"}]}
    report = import_segmentations(dataset, data, annotator="a", head="error")
    assert report.episodes[0].status == "failed" and "head gap" in report.episodes[0].errors[0]
    report = import_segmentations(dataset, data, annotator="a", tail="extend")
    assert spans(get_segmentation(dataset, 1)) == [(0, 40, "pick up the mug from the counter")]
    with pytest.raises(LabelValidationError, match="AgiBot"):
        import_segmentations(dataset, data, annotator="a", tail="idle", overwrite=True, cohort="robocasa365")
    with pytest.raises(LabelValidationError, match="tail="):
        import_segmentations(dataset, data, annotator="a", tail="pad")


def test_agibot_head_and_tail_become_idle(dataset):
    data = {"episodes": {"1": {"segments": [
        {"start_frame": 6, "end_frame": 18, "label": "Pick"},
        {"start_frame": 18, "end_frame": 30, "label": "place"},
    ]}}}  # fmt: skip
    report = import_segmentations(dataset, data, annotator="agibot")
    assert report.ok
    record = get_segmentation(dataset, 1)
    assert record["cohort"] == "agibot"
    assert spans(record) == [(0, 6, "Idle"), (6, 18, "Pick"), (18, 30, "Place"), (30, 40, "Idle")]


def test_allex_labels_import_without_exceptions(dataset):
    # seed section 8: the cohort's own labels are kept as they are, no false 'would change the operation'
    data = {"1": [
        {"start": 0, "end": 10, "label": "Bring Object"},
        {"start": 10, "end": 20, "label": "Rotate Box"},
        {"start": 20, "end": 30, "label": "Rotate PolyBag"},
        {"start": 30, "end": 40, "label": "Pass Object"},
    ]}  # fmt: skip
    report = import_segmentations(dataset, data, annotator="allex")
    assert report.ok and report.to_dict()["exceptions"] == 0 and report.episodes[0].relabels == []
    record = get_segmentation(dataset, 1)
    assert record["cohort"] == "allex"
    assert [s["label"] for s in record["segments"]] == ["Bring Object", "Rotate Box", "Rotate PolyBag", "Pass Object"]


def test_inclusive_ends_are_detected(dataset):
    data = [{"episode_index": 1, "segments": [
        {"start": 0, "end": 19, "label": "pick up the mug from the counter"},
        {"start": 20, "end": 39, "label": "place the mug in the sink"},
    ]}]  # fmt: skip
    report = import_segmentations(dataset, data, annotator="a")
    assert spans(get_segmentation(dataset, 1)) == [
        (0, 20, "pick up the mug from the counter"),
        (20, 40, "place the mug in the sink"),
    ]
    assert any("inclusive" in c for c in report.episodes[0].changes)


def test_interior_gap_overlap_and_bad_labels_fail_that_episode_only(dataset):
    data = [
        {"episode_index": 0, "segments": [
            {"start": 0, "end": 20, "label": "pick up the mug from the counter"},
            {"start": 25, "end": 60, "label": "place the mug in the sink"}]},
        {"episode_index": 1, "segments": [
            {"start": 0, "end": 25, "label": "pick up the mug from the counter"},
            {"start": 20, "end": 40, "label": "place the mug in the sink"}]},
        {"episode_index": 3, "segments": [
            {"start": 0, "end": 50, "label": "pick up the ice cube and place it in the glass"}]},
        {"episode_index": 9, "segments": [{"start": 0, "end": 5, "label": "Pick"}]},
    ]  # fmt: skip
    report = import_segmentations(dataset, data, annotator="a")
    by_ep = {e.episode_index: e for e in report.episodes}
    assert [e.status for e in report.episodes] == ["failed", "failed", "imported", "failed"]
    assert "frames [20, 25) between two spans are unlabelled" in by_ep[0].errors[0]
    assert by_ep[1].errors == [
        "overlap at frames [20, 25): frames [20, 25) are in segments 0 and 1; each frame belongs to one segment"
    ]
    assert "episode 9 not found in" in by_ep[9].errors[0]
    # a bundled label is kept raw, reported, and flagged by the rule check
    assert by_ep[3].exceptions[0]["label"] == "pick up the ice cube and place it in the glass"
    assert "bundled_actions" in [f.kind for f in by_ep[3].findings]
    assert [r["episode_index"] for r in list_segmentations(dataset)] == [3]
    # the gap can be folded on request
    again = import_segmentations(dataset, data[:1], annotator="a", fill_gaps="extend")
    assert again.ok and spans(get_segmentation(dataset, 0))[0] == (0, 25, "pick up the mug from the counter")


def test_existing_segmentations_are_skipped_unless_overwrite(dataset, valid_ep0):
    save_segmentation(dataset, 0, valid_ep0, annotator="ana")
    data = [{"episode_index": 0, "segments": [{"start": 0, "end": 60, "label": "pick up the mug from the counter"}]}]
    report = import_segmentations(dataset, data, annotator="imp")
    assert report.episodes[0].status == "skipped" and get_segmentation(dataset, 0)["annotator"] == "ana"
    report = import_segmentations(dataset, data, annotator="imp", overwrite=True)
    assert report.episodes[0].status == "imported"
    assert [v["annotator"] for v in segmentation_history(dataset, 0)] == ["imp", "ana"]


def test_dry_run_writes_nothing(dataset):
    data = {"1": [{"start_time": 0.0, "end_time": 4.0, "label": "pick up the mug from the counter"}]}
    report = import_segmentations(dataset, data, annotator="a", dry_run=True)
    assert report.episodes[0].status == "would_import" and report.to_dict()["counts"]["would_import"] == 1
    assert not (dataset / SIDECAR_FILENAME).exists()


def test_normalisation_can_be_turned_off(dataset):
    data = {"1": [{"start": 0, "end": 40, "label": "pick up the mug from the counter in front of the robot"}]}
    assert import_segmentations(dataset, data, annotator="a", normalize=False).ok
    assert spans(get_segmentation(dataset, 1)) == [(0, 40, "pick up the mug from the counter in front of the robot")]


def test_unreadable_inputs(dataset, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode_index": 0, "segments": []}\n{oops\n')
    with pytest.raises(LabelValidationError, match="line 2"):
        import_segmentations(dataset, bad, annotator="a")
    with pytest.raises(LabelValidationError, match="known segmentation shape"):
        import_segmentations(dataset, {"foo": 1}, annotator="a")
    two = [{"episode_index": 1, "segments": [{"start": 0, "end": 40, "skill_description": ["a", "b"], "x": 1}]}]
    report = import_segmentations(dataset, two, annotator="a")
    assert "holds 2 descriptions" in report.episodes[0].errors[0]


def test_export_and_reimport_round_trip(dataset, valid_ep0, tmp_path):
    valid_ep0[1]["note"] = "base drives"
    save_segmentation(dataset, 0, valid_ep0, annotator="ana", note="n", reference=True)
    out = tmp_path / "segments.jsonl"
    lines = export_segmentations(dataset, out)
    assert len(out.read_text().splitlines()) == 1
    assert lines[0]["fps"] == 10 and lines[0]["segments"][1]["start_ts"] == 1.0
    assert lines[0]["segments"][1]["end_ts"] == 3.0
    other = dataset.parent / "copy"
    from tests.segments.conftest import build_dataset

    build_dataset(other)
    report = import_segmentations(other, out, annotator="someone else")
    assert report.ok and report.episodes[0].changes == []
    original, back = get_segmentation(dataset, 0), get_segmentation(other, 0)
    # everything but the target's version comes back: segments (with their notes), annotator,
    # episode note, reference, source and time
    assert {k: v for k, v in back.items() if k != "version"} == {k: v for k, v in original.items() if k != "version"}
    assert (back["annotator"], back["note"], back["reference"], back["source"]) == ("ana", "n", True, "annotation")
    assert back["segments"][1]["note"] == "base drives"
    assert report.episodes[0].notes[0].startswith("kept the input's annotator='ana', note='n', reference=True")
    subtasks = export_segmentations(dataset, format="subtasks")
    assert subtasks == [{"episode_index": 0, "subtasks": [
        {"label": s["label"], "start_ts": s["start"] / 10, "end_ts": s["end"] / 10, "outcome": None}
        for s in valid_ep0
    ]}]  # fmt: skip
    with pytest.raises(LabelValidationError, match="format"):
        export_segmentations(dataset, format="csv")


def test_foreign_record_fields_are_ignored_and_defaults_apply(dataset):
    data = [{"episode_index": 1, "annotator": {"id": 7}, "source": "behavior-1k", "annotated_at": "yesterday",
             "segments": [{"start": 0, "end": 20, "label": "pick up the mug from the counter"},
                          {"start": 20, "end": 40, "label": "place the mug in the sink"}]}]  # fmt: skip
    report = import_segmentations(dataset, data, annotator="importer", reference=True)
    assert report.ok
    ignored = "ignored the input's annotator, source, annotated_at (not this tool's record fields)"
    assert report.episodes[0].notes[0] == ignored
    record = get_segmentation(dataset, 1)
    assert (record["annotator"], record["note"], record["reference"], record["source"]) == (
        "importer",
        None,
        True,
        "import",
    )
    assert record["annotated_at"] != "yesterday" and record["annotated_at"].endswith("Z")


def test_a_release_without_transport_is_folded_into_the_preceding_segment(dataset):
    # seed section 1: "release the spatula after pressing" is no segment of its own
    data = {"1": [
        {"start": 0, "end": 20, "label": "press the spatula against the chicken"},
        {"start": 20, "end": 26, "label": "release the spatula"},
        {"start": 26, "end": 40, "label": "push the wok around"},
    ]}  # fmt: skip
    report = import_segmentations(dataset, data, annotator="import")
    assert report.ok, report.to_dict()
    ep = report.episodes[0]
    assert ep.exceptions == []
    assert spans(get_segmentation(dataset, 1)) == [
        (0, 26, "press the spatula against the chicken"),
        (26, 40, "rotate the wok"),
    ]
    assert any("'release the spatula' [20, 26) folded into the preceding segment" in c for c in ep.changes)


def test_a_generic_release_stays_a_segment(dataset):
    data = {"1": [
        {"start": 0, "end": 20, "label": "grasp the cup"},
        {"start": 20, "end": 40, "label": "release the cup"},
    ]}  # fmt: skip
    report = import_segmentations(dataset, data, annotator="import", cohort="generic")
    assert report.ok, report.to_dict()
    assert spans(get_segmentation(dataset, 1)) == [(0, 20, "grasp the cup"), (20, 40, "release the cup")]


@pytest.mark.parametrize(
    "source",
    [
        {"¹": [{"label": "pick up the mug", "start": 0, "end": 30}]},
        {"episodes": {"¹": [{"label": "pick up the mug", "start": 0, "end": 30}]}},
        {"episodes": {"abc": [{"label": "pick up the mug", "start": 0, "end": 30}]}},
    ],
)
def test_an_episode_key_that_is_not_decimal_is_refused_by_name(dataset, source):
    """A superscript digit passes str.isdigit() but not int(): a typed refusal or a failed episode, no ValueError."""
    try:
        report = import_segmentations(dataset, source, annotator="import")
    except LabelValidationError as refused:
        assert "not a known segmentation shape" in str(refused)
    else:
        assert not report.ok
        assert "must be a non-negative integer episode_index" in report.episodes[0].errors[0]
    assert list_segmentations(dataset) == []

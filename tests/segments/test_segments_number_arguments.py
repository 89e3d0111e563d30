"""One set of limits per kind of number: every entry point taking an fps, seconds or a
base-speed threshold accepts and refuses the same values, with a typed error naming the
remedy, and nothing is stored on a refusal (strands_robots.arguments: FPS, SECONDS,
SPEED_THRESHOLD)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from strands_robots.dataset import open_dataset
from strands_robots.errors import DatasetError, LabelValidationError
from strands_robots.segments import import_segmentations, prefill_navigate, validate_segmentation
from strands_robots.segments.convert import check_fps, frame_to_seconds, segments_to_subtasks
from strands_robots.segments.navigate import episode_base_velocity
from strands_robots.ssc.chain import build_chain
from tests.segments.conftest import build_dataset
from tests.ssc.ssc_fakes import act, ev, sub

BAD_POSITIVE = [0, 0.0, -30, -0.5, math.nan, math.inf, -math.inf, True, False, "30", 10**400]
GOOD_FPS = [30, 29.97, 1e-3, np.float32(15.0), np.int64(10)]


@pytest.mark.parametrize("fps", BAD_POSITIVE + [None])
def test_bad_fps_is_refused_by_every_fps_argument(fps):
    for call in (check_fps, lambda f: frame_to_seconds(3, f), lambda f: segments_to_subtasks([], f)):
        with pytest.raises(LabelValidationError, match=r"^fps must be a finite number greater than 0, got .*fps=30"):
            call(fps)


@pytest.mark.parametrize("fps", GOOD_FPS)
def test_good_fps_is_taken_as_a_float(fps):
    assert check_fps(fps) == pytest.approx(float(fps)) and type(check_fps(fps)) is float
    assert frame_to_seconds(30, fps) == round(30 / float(fps), 6)


@pytest.mark.parametrize("fps", [0, -30, True, "30"])
def test_a_dataset_header_with_such_an_fps_is_refused_too(tmp_path, fps):
    root = build_dataset(tmp_path / "ds")
    info = root / "meta" / "info.json"
    header = json.loads(info.read_text())
    header["fps"] = fps
    info.write_text(json.dumps(header))
    with pytest.raises(DatasetError, match=r"fps is .*; it must be a positive number of frames per second"):
        open_dataset(root)


@pytest.mark.parametrize("fps", [29.97, 30])
def test_a_dataset_header_fps_is_kept_as_written(tmp_path, fps):
    root = build_dataset(tmp_path / "ds")
    info = root / "meta" / "info.json"
    header = json.loads(info.read_text())
    header["fps"] = fps
    info.write_text(json.dumps(header))
    assert open_dataset(root).fps == fps and type(open_dataset(root).fps) is type(fps)


SECONDS_SPANS = [{"label": "pick up the mug from the counter", "start_ts": 0.0, "end_ts": 2.0}]


@pytest.mark.parametrize("fps", [0, -10, True, "10"])
def test_import_refuses_a_bad_fps_argument_or_file_fps_and_stores_nothing(tmp_path, fps):
    root = tmp_path / "plain"  # no meta/ (a labels-only root): the fps comes from the argument or the file
    root.mkdir()
    with pytest.raises(LabelValidationError, match="fps must be a finite number greater than 0"):
        import_segmentations(
            root,
            [{"episode_index": 0, "length": 20, "subtasks": SECONDS_SPANS}],
            annotator="a",
            fps=fps,
            total_episodes=1,
        )
    report = import_segmentations(
        root,
        [{"episode_index": 0, "length": 20, "fps": fps, "subtasks": SECONDS_SPANS}],
        annotator="a",
        total_episodes=1,
    )
    assert not report.ok and "fps must be a finite number greater than 0" in report.episodes[0].errors[0]
    assert list(root.iterdir()) == []
    good = import_segmentations(
        root,
        [{"episode_index": 0, "length": 20, "fps": 10, "subtasks": SECONDS_SPANS}],
        annotator="a",
        total_episodes=1,
    )
    assert good.ok and "converted 1 spans from seconds to frames at 10 fps" in good.episodes[0].changes


@pytest.fixture
def drive(tmp_path):
    return build_dataset(tmp_path / "ds")  # episode 0: the base drives during frames [10, 30)


@pytest.mark.parametrize("seconds", [-0.1, math.nan, math.inf, True, "0.5", None])
@pytest.mark.parametrize("what", ["smooth_s", "min_duration_s"])
def test_prefill_refuses_bad_seconds(drive, what, seconds):
    with pytest.raises(
        LabelValidationError, match=rf"^{what} must be a finite number 0 or greater, got .*; pass {what}"
    ):
        prefill_navigate(drive, 0, **{what: seconds})


def test_prefill_takes_zero_and_numpy_seconds(drive):
    default = prefill_navigate(drive, 0)
    assert prefill_navigate(drive, 0, smooth_s=np.float64(0.5), min_duration_s=0) == prefill_navigate(
        drive, 0, min_duration_s=0.0
    )
    assert [s["template_id"] for s in default] == [None, "N1", None]


@pytest.mark.parametrize("threshold", BAD_POSITIVE)
def test_a_bad_base_speed_threshold_is_refused_everywhere(drive, threshold):
    velocity = episode_base_velocity(drive, 0)
    pattern = r"must be a finite number greater than 0, got .*\(m/s\)\.$"
    with pytest.raises(LabelValidationError, match="^threshold " + pattern):
        prefill_navigate(drive, 0, threshold=threshold)
    with pytest.raises(LabelValidationError, match="^base_speed_threshold " + pattern):
        validate_segmentation(60, [], base_velocity=velocity, base_speed_threshold=threshold)
    subtasks = [sub(0, 0, 30, act("pick_up", "cup_2")), sub(1, 30, 60, act("place_in", "cup_2", ("in", "sink_3")))]
    events = [ev(5, "right", "close"), ev(50, "right", "open")]
    with pytest.raises(LabelValidationError, match="^base_speed_threshold " + pattern):
        build_chain(subtasks, events, base_velocity=velocity, base_speed_threshold=threshold, arms=("right",))


def test_the_same_thresholds_are_taken_everywhere(drive):
    velocity = episode_base_velocity(drive, 0)
    for threshold in (0.5, np.float32(0.5), 1):
        assert [s["template_id"] for s in prefill_navigate(drive, 0, threshold=threshold)] == [None]
        validate_segmentation(60, [{"start": 0, "end": 60, "label": "TASK_COMPLETE"}], base_velocity=velocity,
                              base_speed_threshold=threshold)  # fmt: skip


@pytest.mark.parametrize("smooth", [0, -1, 2.5, True, "5"])
def test_smooth_frames_must_be_a_positive_integer(smooth):
    with pytest.raises(LabelValidationError, match=r"^smooth_frames must be a positive integer number of frames"):
        validate_segmentation(60, [], smooth_frames=smooth)

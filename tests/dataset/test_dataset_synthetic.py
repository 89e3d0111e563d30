"""The reader on synthetic datasets built with pyarrow / PyAV (``tests/synth.py``).

The cases of docs/dataset.md, "What `open_dataset(root)` reads" and "Which checks raise and
which are listed": non-contiguous indices, two episodes in one mp4 with a drifted
``from_timestamp``, NaN in ``observation.state``, a v2.1 layout, ``total_episodes: true``;
plus the cross-checks of ``strands_robots/dataset/problems.py`` (which raise, which are listed).
"""

from __future__ import annotations

import json
from fractions import Fraction

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots.dataset import FrameIndexError, MissingFileError, open_dataset
from strands_robots.dataset.problems import HEADER, INDEX_RANGE, MISSING_DATA, TOTALS, VERSION, VIDEO_SPAN
from strands_robots.dataset.video import VideoCursor
from strands_robots.errors import (
    DatasetError,
    EpisodeNotFoundError,
    FrameDecodeError,
    UnsupportedVersionError,
)
from tests.synth import make_v3_dataset, make_v21_dataset, synth_gray, synth_state

CAM = "observation.images.front"


def gray(image: np.ndarray) -> int:
    return int(np.median(image))


def assert_frames(ds, episode, frames, images):
    for f, image in zip(frames, images, strict=True):
        assert abs(gray(image) - synth_gray(episode, f)) <= 2, (episode, f, gray(image), synth_gray(episode, f))


# -- non-contiguous episode_index ------------------------------------------------------------


@pytest.mark.parametrize("indices", [[0, 1, 3], [10, 30, 40]])
def test_non_contiguous_indices_are_keys_not_positions(tmp_path, indices):
    root = make_v3_dataset(tmp_path / "ds", [12, 15, 9], episode_indices=indices, video=True)
    ds = open_dataset(root)
    assert list(ds.episodes) == indices
    assert len(ds.episodes) == 3
    assert indices[2] in ds.episodes and 2 not in ds.episodes and True not in ds.episodes
    with pytest.raises(EpisodeNotFoundError, match="not contiguous"):
        ds.episodes[2]
    with pytest.raises(KeyError):
        ds.read_frames(2)
    last = indices[2]
    ep = ds.episodes[last]
    assert ep.episode_index == last and ep.length == 9 and ep.index_range == (27, 36)
    rows = ds.read_frames(last)
    assert np.array_equal(rows["observation.state"][:, 0], synth_state(last, np.arange(9), 0))
    assert (rows["episode_index"] == last).all()
    assert_frames(ds, last, [0, 8, 4], ds.decode_frames(last, CAM, [0, 8, 4]))
    assert ds.problems == []


def test_episodes_metadata_files_out_of_order_are_sorted(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [5, 6, 7, 8], episodes_per_file=2)
    # swap the two episodes-metadata files: file-000 now holds episodes 2, 3
    meta = root / "meta" / "episodes" / "chunk-000"
    a, b = meta / "file-000.parquet", meta / "file-001.parquet"
    ta, tb = pq.read_table(a), pq.read_table(b)
    pq.write_table(tb, a)
    pq.write_table(ta, b)
    ds = open_dataset(root)
    assert list(ds.episodes) == [0, 1, 2, 3]
    assert [ds.episodes[e].length for e in ds.episodes] == [5, 6, 7, 8]
    assert ds.episodes[3].data_file.name == "file-001.parquet"
    assert ds.read_frames(3)["observation.state"].shape == (8, 6)


# -- video ------------------------------------------------------------------------------------


def test_two_episodes_in_one_mp4_with_drifted_from_timestamp(tmp_path):
    """from_timestamp off by 1e-3 s (well under half a frame) still gives the right frames."""
    root = make_v3_dataset(tmp_path / "ds", [40, 50], video=True, from_timestamp_drift={1: 1e-3})
    ds = open_dataset(root)
    ref = ds.episodes[1].videos[CAM]
    assert ref.path == ds.episodes[0].videos[CAM].path
    assert ref.from_timestamp == pytest.approx(40 / 30 + 1e-3)
    frames = [0, 1, 2, 25, 48, 49]
    assert_frames(ds, 1, frames, ds.decode_frames(1, CAM, frames))
    assert_frames(ds, 0, [39, 0], ds.decode_frames(0, CAM, [39, 0]))


def test_drift_past_the_end_of_the_video_is_a_typed_error_naming_times(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [10, 10], video=True, from_timestamp_drift={1: 5.0})
    ds = open_dataset(root)
    assert any(p.kind == VIDEO_SPAN for p in ds.problems) is False  # span itself is consistent
    with pytest.raises(FrameDecodeError) as exc:
        ds.decode_frames(1, CAM, [3])
    message = str(exc.value)
    assert "episode 1" in message and "frame_index 3" in message and "5.4333 s" in message


def test_gap_in_the_video_is_a_typed_error(tmp_path):
    """A frame whose time has no decoded frame within half a period raises FrameDecodeError."""
    root = make_v3_dataset(tmp_path / "ds", [8], video=True)
    path = root / "videos" / CAM / "chunk-000" / "file-000.mp4"
    with av.open(str(path), mode="w") as container:  # frames 3 and 4 missing: pts 0 1 2 5 6 7
        stream = container.add_stream("libx264", rate=30, options={"g": "2", "qp": "0", "preset": "ultrafast"})
        stream.width, stream.height, stream.pix_fmt = 32, 24, "yuv420p"
        for i in (0, 1, 2, 5, 6, 7):
            frame = av.VideoFrame.from_ndarray(np.full((24, 32, 3), synth_gray(0, i), np.uint8), "rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 30)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    ds = open_dataset(root)
    assert_frames(ds, 0, [2, 5], ds.decode_frames(0, CAM, [2, 5]))
    with pytest.raises(FrameDecodeError, match=r"requested time 0\.1000 s.*0\.0667 s"):
        ds.decode_frames(0, CAM, [3])


def test_seek_or_decode_forward_never_from_the_start(tmp_path):
    """gop 30: a late frame costs at most one GOP of decoding; close frames decode forward."""
    root = make_v3_dataset(tmp_path / "ds", [300], video=True, gop=30)
    ds = open_dataset(root)
    path = ds.episodes[0].videos[CAM].path
    tol = 0.5 / 30
    with VideoCursor(path, 30) as cursor:
        t, frame = cursor.frame_near(250 / 30, tol)
        assert t == pytest.approx(250 / 30)
        assert cursor.seeks == 1 and cursor.decoded <= 31
        before = cursor.decoded
        cursor.frame_near(253 / 30, tol)  # 3 frames later: forward, no seek
        assert cursor.seeks == 1 and cursor.decoded - before == 3
        cursor.frame_near(20 / 30, tol)  # backwards: seek
        assert cursor.seeks == 2
        cursor.frame_near(290 / 30, tol)  # far ahead: seek again
        assert cursor.seeks == 3 and cursor.decoded < 31 + 3 + 21 + 31
    frames = [299, 5, 150, 151, 149]
    assert_frames(ds, 0, frames, ds.decode_frames(0, CAM, frames))


def test_lerobot_gop2_seeks_instead_of_decoding_long_gaps(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [120], video=True, gop=2)
    with VideoCursor(open_dataset(root).episodes[0].videos[CAM].path, 30) as cursor:
        for f in (10, 40, 70, 100):
            cursor.frame_near(f / 30, 0.5 / 30)
        assert cursor.seeks == 4 and cursor.decoded <= 4 * 2


def test_repeated_and_unsorted_requests_keep_request_order(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [30], video=True)
    ds = open_dataset(root)
    frames = [20, 3, 20, 0]
    images = ds.decode_frames(0, CAM, frames)
    assert_frames(ds, 0, frames, images)
    assert np.array_equal(images[0], images[2]) and images[0] is not images[2]
    assert ds.decode_frames(0, CAM, []) == []


def test_decode_errors(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [10, 10], video=True)
    ds = open_dataset(root)
    with pytest.raises(FrameIndexError, match="frames 0..9"):
        ds.decode_frames(0, CAM, [10])
    with pytest.raises(IndexError):
        ds.decode_frames(0, CAM, [-1])
    with pytest.raises(DatasetError, match="not a camera"):
        ds.decode_frames(0, "observation.state", [0])
    (root / "videos" / CAM / "chunk-000" / "file-000.mp4").unlink()
    with pytest.raises(MissingFileError) as exc:
        ds.decode_frames(1, CAM, [0])
    assert isinstance(exc.value, FileNotFoundError)
    assert "file-000.mp4" in str(exc.value) and "episode 1" in str(exc.value)
    assert [p.kind for p in open_dataset(root).problems] == ["missing_video"]


def test_max_side_keeps_aspect(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [4], video=True, video_size=(64, 48))
    ds = open_dataset(root)
    assert ds.decode_frames(0, CAM, [1], max_side=16)[0].shape == (12, 16, 3)
    assert ds.decode_frames(0, CAM, [1], max_side=100)[0].shape == (48, 64, 3)


def test_image_features_decode_from_parquet_bytes(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [6, 7], image=True, cameras=["observation.images.cam"])
    ds = open_dataset(root)
    assert ds.camera_keys == ("observation.images.cam",)
    images = ds.decode_frames(1, "observation.images.cam", [6, 0], max_side=16)
    assert [im.shape for im in images] == [(12, 16, 3)] * 2
    assert [gray(im) for im in images] == [synth_gray(1, 6), synth_gray(1, 0)]  # PNG is lossless
    assert "observation.images.cam" not in ds.read_frames(1)  # default columns skip cameras


# -- frames -------------------------------------------------------------------------------------


def test_nan_in_state_is_kept_and_counted(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [10, 10], nan_at={1: [(2, 0), (7, 5), (7, 4)]})
    ds = open_dataset(root)
    rows = ds.read_frames(1)
    state = rows["observation.state"]
    assert state.shape == (10, 6)
    assert rows.nan_counts["observation.state"] == 3 and rows.nan_counts["action"] == 3  # action = state + 0.5
    assert rows.nan_counts["timestamp"] == 0 and rows.nan_total == 6
    assert np.isnan(state[2, 0]) and np.isnan(state[7, 5]) and not np.isnan(state[7, 3])
    assert state[7, 3] == synth_state(1, 7, 3)
    assert ds.read_frames(0).nan_total == 0


def test_rows_are_sorted_by_frame_index_and_columns_limited(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [25, 25], shuffle_rows=True)
    ds = open_dataset(root)
    rows = ds.read_frames(1, ["observation.state"])
    assert list(rows) == ["observation.state"]
    assert np.array_equal(rows["observation.state"][:, 2], synth_state(1, np.arange(25), 2))
    scalar = ds.read_frames(1, ["timestamp", "frame_index"])
    assert scalar["timestamp"].shape == (25,) and np.array_equal(scalar["frame_index"], np.arange(25))
    with pytest.raises(DatasetError, match="no column"):
        ds.read_frames(1, ["observation.velocity"])


def test_rows_loaded_different_from_length_raises(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [10, 12])
    path = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(path)
    table = table.set_column(table.schema.get_field_index("length"), "length", pa.array([10, 13]))
    pq.write_table(table, path)
    ds = open_dataset(root)
    assert ds.read_frames(0)["frame_index"].shape == (10,)
    with pytest.raises(DatasetError, match="12 rows .* length 13"):
        ds.read_frames(1)
    kinds = {p.kind for p in ds.problems}
    assert TOTALS in kinds and INDEX_RANGE in kinds  # total_frames 22 vs 23; 22 - 10 != 13


# -- versions and layouts ---------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v2.1", "v2.0"])
def test_v2_layout(tmp_path, version):
    root = make_v21_dataset(
        tmp_path / "ds", [20, 30, 25], episode_indices=[0, 1, 5], video=True, gop=10, codebase_version=version
    )
    ds = open_dataset(root)
    assert ds.codebase_version == version
    assert list(ds.episodes) == [0, 1, 5]
    ep = ds.episodes[5]
    assert ep.data_file.name == "episode_000005.parquet"
    assert ep.index_range == (50, 75)
    assert ep.videos[CAM].path.name == "episode_000005.mp4" and ep.videos[CAM].from_timestamp == 0.0
    assert ep.tasks == ("Pick the block and place it in the bin",)
    rows = ds.read_frames(5)
    assert np.array_equal(rows["index"], np.arange(50, 75))
    frames = [24, 0, 13]
    assert_frames(ds, 5, frames, ds.decode_frames(5, CAM, frames))
    assert ds.problems == []


@pytest.mark.parametrize("version", ["v1.6", "v4.0", "v2.2", "3.0", 3.0])
def test_other_versions_are_refused_naming_them(tmp_path, version):
    root = make_v3_dataset(tmp_path / "ds", [5], codebase_version=version)
    with pytest.raises(UnsupportedVersionError) as exc:
        open_dataset(root)
    assert repr(version) in str(exc.value)


def test_any_v3_minor_version_is_accepted(tmp_path):
    ds = open_dataset(make_v3_dataset(tmp_path / "ds", [5], codebase_version="v3.1"))
    assert ds.codebase_version == "v3.1" and ds.info.major == 3


def test_docs_toy_example_minimal_dataset_opens(tmp_path):
    """Exactly the docs' minimal toy dataset: no version, features {}, no data.

    See docs/dataset.md, "What `open_dataset(root)` reads".
    """
    root = tmp_path / "toy_dataset"
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table({"episode_index": [0, 1, 2], "length": [90, 90, 90]}),
        root / "meta/episodes/chunk-000/file-000.parquet",
    )
    (root / "meta/info.json").write_text(
        json.dumps({"total_episodes": 3, "total_frames": 270, "fps": 30, "features": {}})
    )
    ds = open_dataset(root)
    assert ds.codebase_version == "v3.0"
    assert list(ds.episodes) == [0, 1, 2] and ds.total_frames == 270
    assert ds.camera_keys == () and ds.state_names == () and ds.tasks == {}
    assert ds.episodes[1].index_range == (90, 180) and ds.episodes[1].tasks == ()
    assert [p.kind for p in ds.problems] == [VERSION, MISSING_DATA]
    with pytest.raises(FileNotFoundError, match="episode 0"):
        ds.read_frames(0)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["a", "b"], ("a", "b")),
        ([["a", "b"]], ("a", "b")),
        ({"motors": ["a", "b"]}, ("a", "b")),
        (None, ()),
    ],
)
def test_feature_names_forms(tmp_path, names, expected):
    ds = open_dataset(make_v3_dataset(tmp_path / "ds", [3], state_dim=2, state_names=names))
    assert ds.state_names == expected


def test_tasks_parquet_with_unnamed_index_column(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 3], tasks=("first", "second"), task_of={1: 1})
    pq.write_table(
        pa.table({"task_index": pa.array([0, 1], pa.int64()), "__index_level_0__": ["first", "second"]}),
        root / "meta" / "tasks.parquet",
    )
    ds = open_dataset(root)
    assert ds.tasks == {0: "first", 1: "second"}
    assert ds.episodes[1].tasks == ("second",)


# -- header checks --------------------------------------------------------------------------


def test_total_episodes_true_is_a_problem_not_a_count(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [4, 4, 4], info_overrides={"total_episodes": True})
    ds = open_dataset(root)
    assert len(ds.episodes) == 3
    assert "total_episodes" not in ds.info.totals
    header = [p for p in ds.problems if p.kind == HEADER]
    assert len(header) == 1 and "total_episodes is a boolean" in header[0].message
    assert not any(p.kind == TOTALS for p in ds.problems)


@pytest.mark.parametrize("value", [2.5, "3", -1])
def test_non_integer_totals_are_problems(tmp_path, value):
    ds = open_dataset(make_v3_dataset(tmp_path / "ds", [4], info_overrides={"total_frames": value}))
    assert [p.kind for p in ds.problems] == [HEADER]


def test_totals_disagreeing_with_episodes_are_problems(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [4, 4], info_overrides={"total_episodes": 3, "total_frames": 8})
    problems = open_dataset(root).problems
    assert [p.kind for p in problems] == [TOTALS]
    assert "total_episodes = 3" in problems[0].message and "has 2" in problems[0].message


@pytest.mark.parametrize("fps", [True, 0, -30, "30", None])
def test_bad_fps_raises(tmp_path, fps):
    root = make_v3_dataset(tmp_path / "ds", [4], info_overrides={"fps": fps})
    with pytest.raises(DatasetError, match="fps"):
        open_dataset(root)


def test_v2_chunks_size_true_raises(tmp_path):
    root = make_v21_dataset(tmp_path / "ds", [4], info_overrides={"chunks_size": True})
    with pytest.raises(DatasetError, match="chunks_size"):
        open_dataset(root)


@pytest.mark.parametrize(
    ("lengths", "indices", "match"),
    [
        ([5, 0], [0, 1], "zero or negative length"),
        ([5, -2], [0, 1], "zero or negative length"),
        ([5, 5], [1, 1], "repeat"),
        ([5, 5], [-1, 0], "negative episode_index"),
    ],
)
def test_bad_episodes_metadata_raises(tmp_path, lengths, indices, match):
    root = make_v3_dataset(tmp_path / "ds", [3, 3])
    pq.write_table(
        pa.table({"episode_index": pa.array(indices, pa.int64()), "length": pa.array(lengths, pa.int64())}),
        root / "meta" / "episodes" / "chunk-000" / "file-000.parquet",
    )
    with pytest.raises(DatasetError, match=match):
        open_dataset(root)


def test_float_length_column_raises(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3])
    pq.write_table(
        pa.table({"episode_index": [0], "length": [3.0]}), root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    )
    with pytest.raises(DatasetError, match="not integer"):
        open_dataset(root)


@pytest.mark.parametrize("text", ["null\n", '\n  null\n{"episode_index": 0, "length": 3}\n', "\ufeffnull\n", "7\n"])
def test_an_episodes_jsonl_opening_with_another_value_than_an_object_is_a_dataset_error(tmp_path, text):
    # pyarrow's JSON reader crashes the process on a first value of null: it is never handed one
    root = make_v21_dataset(tmp_path / "ds", [3])
    (root / "meta" / "episodes.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match="line [12] is not (a JSON object|JSON)"):
        open_dataset(root)


def test_an_episodes_jsonl_with_a_bom_or_blank_lines_first_still_reads(tmp_path):
    root = make_v21_dataset(tmp_path / "ds", [3, 4])
    lines = (root / "meta" / "episodes.jsonl").read_text()
    (root / "meta" / "episodes.jsonl").write_text("\ufeff\n \n" + lines, encoding="utf-8")
    assert list(open_dataset(root).episodes) == [0, 1]


def test_a_v21_task_holding_a_unicode_line_separator_reads_as_lerobot_wrote_it(tmp_path):
    """LeRobot 2.x wrote meta/*.jsonl with the ``jsonlines`` package, which leaves U+2028,
    U+2029 and U+0085 unescaped inside strings (``ensure_ascii=False``): they are text of the
    task (pasted from a web page), not line breaks, so each line stays one object."""
    tasks = ("pick the cup\u2028carefully", "place\x85it", "stack\u2029them")
    root = make_v21_dataset(tmp_path / "ds", [3, 4, 5], tasks=tasks)
    for name in ("tasks.jsonl", "episodes.jsonl"):
        path = root / "meta" / name
        objects = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
        path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects), encoding="utf-8")
    assert "\u2028" in (root / "meta" / "tasks.jsonl").read_text(encoding="utf-8")
    ds = open_dataset(root)
    assert ds.tasks == dict(enumerate(tasks))
    assert list(ds.episodes) == [0, 1, 2]


def test_not_a_dataset(tmp_path):
    with pytest.raises(DatasetError, match="not a LeRobot dataset"):
        open_dataset(tmp_path)
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "info.json").write_text("[1, 2]")
    with pytest.raises(DatasetError, match="not a JSON object"):
        open_dataset(tmp_path)


def test_episode_objects_are_frozen(tmp_path):
    ds = open_dataset(make_v3_dataset(tmp_path / "ds", [3], video=True))
    ep = ds.episodes[0]
    with pytest.raises(AttributeError):
        ep.length = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        ep.videos["x"] = None  # type: ignore[index]
    with pytest.raises(AttributeError):
        ds.fps = 10  # type: ignore[misc]


def test_corrupt_parquet_files_are_typed_errors(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 3])
    (root / "data" / "chunk-000" / "file-000.parquet").write_bytes(b"not parquet")
    ds = open_dataset(root)
    with pytest.raises(DatasetError, match="episode 1"):
        ds.read_frames(1)
    (root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").write_bytes(b"PAR1 truncated")
    with pytest.raises(DatasetError, match="cannot be read as parquet"):
        open_dataset(root)


def test_corrupt_mp4_is_a_typed_error(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3], video=True)
    (root / "videos" / CAM / "chunk-000" / "file-000.mp4").write_bytes(b"\x00" * 64)
    with pytest.raises(FrameDecodeError, match="cannot be opened as video"):
        open_dataset(root).decode_frames(0, CAM, [0])

"""The reader on every shared dataset and on examples/toy_dataset (docs/dataset.md, "Which checks
raise and which are listed" and "Test fixtures and the toy dataset").

Expected values come from each dataset's SOURCE.md. Shared datasets are read-only: tests
that change files work on a copy; tests skip when ../shared is absent.
"""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from strands_robots.dataset import MissingFileError, open_dataset
from strands_robots.dataset.problems import MISSING_VIDEO

G1 = "g1-inspire-v21"
LEROBOT = "lerobot-written-v30-video"
PIPER = "piper-act-v30-multifile"
SO101 = "so101-record-test-v30"

# name -> (version, fps, episodes, frames, cameras, state width, tasks)
EXPECTED = {
    G1: ("v2.1", 30, 100, 35965, ["observation.images.cam_high"], 26, ["Pick up the yellow bottle on the table."]),
    LEROBOT: (
        "v3.0",
        30,
        4,
        351,
        ["observation.images.front", "observation.images.wrist"],
        6,
        ["Pick the red block and place it in the bin", "Push the cup to the left"],
    ),
    PIPER: (
        "v3.0",
        15,
        55,
        13331,
        ["observation.images.front", "observation.images.wrist"],
        7,
        ["Put the grape on the white plate."],
    ),
    SO101: (
        "v3.0",
        30,
        4,
        1492,
        ["observation.images.front", "observation.images.top"],
        6,
        ["Pick the orange cube and place it in the box"],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_open_shared_dataset(shared_dataset, name):
    ds = open_dataset(shared_dataset(name))
    version, fps, n, frames, cameras, width, tasks = EXPECTED[name]
    assert ds.codebase_version == version
    assert ds.fps == fps
    assert len(ds.episodes) == n
    assert ds.total_frames == frames
    assert list(ds.camera_keys) == cameras
    assert len(ds.state_names) == width
    assert list(ds.tasks.values()) == tasks
    assert list(ds.episodes) == list(range(n))
    first, last = ds.episodes[0], ds.episodes[n - 1]
    assert first.index_range[0] == 0 and last.index_range[1] == frames
    # state of the last episode reads with the metadata's length
    rows = ds.read_frames(n - 1, ["observation.state", "frame_index"])
    assert rows["observation.state"].shape == (last.length, width)
    assert np.array_equal(rows["frame_index"], np.arange(last.length))
    assert rows.nan_counts["observation.state"] == 0


def test_so101_and_piper_open_without_videos_and_list_them(shared_dataset):
    for name, files in ((SO101, 1), (PIPER, 3)):
        ds = open_dataset(shared_dataset(name))
        missing = [p for p in ds.problems if p.kind == MISSING_VIDEO]
        assert len(missing) == 2  # one per camera
        assert all(f"{files} video file(s) missing" in p.message for p in missing)
        assert ds.video_status() == {key: (0, files) for key in ds.camera_keys}
        with pytest.raises(FileNotFoundError) as exc:
            ds.decode_frames(1, ds.camera_keys[0], [0])
        assert "episode 1" in str(exc.value) and "file-000.mp4" in str(exc.value)


def test_so101_task_column_is_the_unnamed_pandas_index(shared_dataset):
    path = shared_dataset(SO101)
    assert "__index_level_0__" in pq.read_schema(path / "meta" / "tasks.parquet").names
    ds = open_dataset(path)
    assert ds.tasks == {0: "Pick the orange cube and place it in the box"}
    assert ds.episodes[2].tasks == ("Pick the orange cube and place it in the box",)
    assert [ds.episodes[e].length for e in ds.episodes] == [373, 374, 372, 373]
    assert ds.state_names[5] == "gripper.pos"


def test_piper_multifile_reads_an_episode_from_each_file(shared_dataset):
    ds = open_dataset(shared_dataset(PIPER))
    # SOURCE.md: file-000 episodes 0-7, file-001 episodes 8-49, file-002 episodes 50-54
    for episode, file_name in ((0, "file-000"), (7, "file-000"), (8, "file-001"), (30, "file-001"), (54, "file-002")):
        ep = ds.episodes[episode]
        assert ep.data_file.name == f"{file_name}.parquet"
        rows = ds.read_frames(episode)
        assert rows["observation.state"].shape == (ep.length, 7)
        assert rows["action"].shape == (ep.length, 6)
        assert (rows["episode_index"] == episode).all()
        assert np.array_equal(rows["index"], np.arange(*ep.index_range))
        assert np.array_equal(rows["frame_index"], np.arange(ep.length))
    # video offsets restart in each video file
    assert ds.episodes[8].videos["observation.images.front"].from_timestamp == 0.0
    assert ds.episodes[9].videos["observation.images.front"].from_timestamp == pytest.approx(16.8)
    assert ds.episodes[50].videos["observation.images.wrist"].path.name == "file-002.mp4"


def test_piper_reads_only_the_file_holding_the_episode(shared_dataset, copy_dataset):
    root = copy_dataset(shared_dataset(PIPER))
    (root / "data" / "chunk-000" / "file-000.parquet").unlink()
    (root / "data" / "chunk-000" / "file-001.parquet").unlink()
    ds = open_dataset(root)
    assert ds.read_frames(52)["observation.state"].shape == (ds.episodes[52].length, 7)
    with pytest.raises(MissingFileError, match="episode 3"):
        ds.read_frames(3)


def test_g1_nested_names_and_v21_index_range(shared_dataset):
    ds = open_dataset(shared_dataset(G1))
    assert ds.state_names[0] == "kLeftShoulderPitch" and ds.state_names[25] == "kRightHandThumbRotation"
    ep = ds.episodes[4]
    rows = ds.read_frames(4, ["index", "timestamp"])
    assert np.array_equal(rows["index"], np.arange(*ep.index_range))  # cumulative lengths == data's index
    assert rows["timestamp"].ndim == 1


@pytest.mark.parametrize("episode", [1, 2, 4])
def test_g1_decode_episodes_with_video(shared_dataset, episode):
    import av

    ds = open_dataset(shared_dataset(G1))
    length = ds.episodes[episode].length
    frames = [length - 1, 0, 101, 100, 37]
    images = ds.decode_frames(episode, "observation.images.cam_high", frames)
    assert [im.shape for im in images] == [(480, 640, 3)] * 5
    assert all(im.dtype == np.uint8 for im in images)
    again = ds.decode_frames(episode, "observation.images.cam_high", [101])
    assert np.array_equal(again[0], images[2])
    assert not np.array_equal(images[0], images[1])
    # the same pixels as decoding the file from its start (the oracle), frame for frame
    with av.open(str(ds.episodes[episode].videos["observation.images.cam_high"].path)) as container:
        oracle = []
        for frame in container.decode(video=0):
            oracle.append(frame.to_ndarray(format="rgb24"))
            if len(oracle) == 102:
                break
    for f, image in zip(frames[1:], images[1:], strict=True):
        assert np.array_equal(image, oracle[f]), f
    small = ds.decode_frames(episode, "observation.images.cam_high", [0], max_side=160)
    assert small[0].shape == (120, 160, 3)


def test_g1_missing_video_names_file_and_episode(shared_dataset):
    ds = open_dataset(shared_dataset(G1))
    with pytest.raises(FileNotFoundError) as exc:
        ds.decode_frames(0, "observation.images.cam_high", [0])
    assert "episode_000000.mp4" in str(exc.value) and "episode 0 " in str(exc.value)


def _circular(a: np.ndarray) -> np.ndarray:
    return (a + 128) % 256 - 128


def _front_error(image: np.ndarray, episode: int, frame: int) -> tuple[float, float, float]:
    """Mean circular error per channel against SOURCE.md's formula:
    front pixel (y, x) of frame f in episode e = ((x + 3f) % 256, (y + 40e) % 256, (2f) % 256)."""
    h, w, _ = image.shape
    y, x = np.mgrid[0:h, 0:w]
    im = image.astype(np.int64)
    return (
        float(np.mean(_circular(im[..., 0] - x - 3 * frame))),
        float(np.mean(_circular(im[..., 1] - y - 40 * episode))),
        float(np.mean(_circular(im[..., 2] - 2 * frame))),
    )


def _classify(image: np.ndarray, episode: int, frame: int) -> tuple[int, int]:
    """(episode, frame) among the candidates whose formula fits the image best."""
    best = None
    for e in range(4):
        for f in range(max(0, frame - 3), frame + 4):
            r, g, b = _front_error(image, e, f)
            score = abs(r) / 3 + abs(g) / 40 + abs(b) / 2
            if best is None or score < best[0]:
                best = (score, e, f)
    assert best is not None
    return best[1], best[2]


def test_lerobot_written_pixels_match_the_formula(shared_dataset):
    """Several episodes per mp4: an off-by-one frame or a wrong episode offset fails.

    AV1 (crf 30, keyframe every 2 frames) leaves the odd, inter-coded frames visibly closer to
    the previous keyframe, so an even frame must classify exactly and an odd frame f as f or
    f - 1; a shift by one in either direction breaks one of the two.
    """
    ds = open_dataset(shared_dataset(LEROBOT))
    for episode in ds.episodes:
        length = ds.episodes[episode].length
        frames = [0, 1, 2, 7, 30, 31, length - 2, length - 1]
        images = ds.decode_frames(episode, "observation.images.front", frames)
        for f, image in zip(frames, images, strict=True):
            assert image.shape == (96, 128, 3)
            r, g, b = _front_error(image, episode, f)
            assert abs(g) < 3, (episode, f, g)  # episode offset (40 levels per episode)
            e_found, f_found = _classify(image, episode, f)
            assert e_found == episode
            assert f_found == f if f % 2 == 0 else f_found in (f - 1, f), (episode, f, f_found)
        wrist = ds.decode_frames(episode, "observation.images.wrist", frames)
        for f, image in zip(frames, wrist, strict=True):
            expected = (60 * episode + f) % 256
            assert image.shape == (64, 64, 3)
            assert abs(int(np.median(image)) - expected) <= 1, (episode, f)


def test_lerobot_written_matches_sequential_decode(shared_dataset):
    """Seeking decode == decoding the whole mp4 in order at position from_timestamp * fps + f."""
    import av

    ds = open_dataset(shared_dataset(LEROBOT))
    path = ds.episodes[0].videos["observation.images.wrist"].path
    with av.open(str(path)) as container:
        every = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    assert len(every) == 351
    for episode in (1, 3):
        ref = ds.episodes[episode].videos["observation.images.wrist"]
        offset = round(ref.from_timestamp * ds.fps)
        frames = [1, 0, 33, ds.episodes[episode].length - 1]
        for f, image in zip(frames, ds.decode_frames(episode, "observation.images.wrist", frames), strict=True):
            assert np.array_equal(image, every[offset + f])


# -- examples/toy_dataset ---------------------------------------------------------------------


def test_toy_dataset_layout(toy_dataset):
    files = sorted(str(p.relative_to(toy_dataset)) for p in toy_dataset.rglob("*") if p.is_file())
    assert files == [
        "LICENSE",
        "SOURCE.md",
        "data/chunk-000/file-000.parquet",
        "meta/episodes/chunk-000/file-000.parquet",
        "meta/info.json",
        "meta/stats.json",
        "meta/tasks.parquet",
        "videos/observation.images.cam_high/chunk-000/file-000.mp4",
    ]
    assert sum((toy_dataset / f).stat().st_size for f in files) < 3_000_000
    assert "MIT License" in (toy_dataset / "LICENSE").read_text()
    ds = open_dataset(toy_dataset)
    assert ds.codebase_version == "v3.0" and ds.fps == 30
    assert list(ds.episodes) == [0, 1, 2]
    assert [ds.episodes[e].length for e in ds.episodes] == [90, 90, 90]
    assert ds.problems == []
    starts = [ds.episodes[e].videos["observation.images.cam_high"].from_timestamp for e in ds.episodes]
    assert starts == [0.0, 3.0, 6.0]
    assert pq.ParquetFile(toy_dataset / "data" / "chunk-000" / "file-000.parquet").metadata.num_row_groups == 3


def test_toy_episodes_metadata_has_lerobot_columns(toy_dataset, shared_dataset):
    """Same non-stats columns, in the same order, as the dataset lerobot itself wrote."""
    lerobot = pq.read_schema(shared_dataset(LEROBOT) / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    toy = pq.read_schema(toy_dataset / "meta" / "episodes" / "chunk-000" / "file-000.parquet")

    def shape(schema, cameras):
        names = [n for n in schema.names if not n.startswith("stats/")]
        out = []
        for n in names:
            for c in cameras:
                n = n.replace(f"videos/{c}/", "videos/<camera>/")
            if n not in out:
                out.append(n)
        return out

    assert shape(toy, ["observation.images.cam_high"]) == shape(
        lerobot, ["observation.images.front", "observation.images.wrist"]
    )
    for name in lerobot.names:
        if not name.startswith("stats/observation.state/"):
            continue
        assert name in toy.names
        assert toy.field(name).type == lerobot.field(name).type


def test_toy_decode_every_episode(toy_dataset):
    ds = open_dataset(toy_dataset)
    for episode in ds.episodes:
        images = ds.decode_frames(episode, "observation.images.cam_high", [89, 0, 45, 44])
        assert [im.shape for im in images] == [(480, 640, 3)] * 4
        assert np.array_equal(ds.decode_frames(episode, "observation.images.cam_high", [45])[0], images[2])
        rows = ds.read_frames(episode)
        assert rows["observation.state"].shape == (90, 26)
        assert np.allclose(rows["timestamp"], np.arange(90) / 30)


def test_toy_frames_come_from_the_documented_source_windows(toy_dataset, shared_dataset):
    """Each toy frame matches its g1 source frame far better than the source's neighbours."""
    toy = open_dataset(toy_dataset)
    g1 = open_dataset(shared_dataset(G1))
    windows = {0: (1, 140), 1: (2, 60), 2: (4, 105)}  # from SOURCE.md
    for episode, (source, start) in windows.items():
        state = toy.read_frames(episode, ["observation.state"])["observation.state"]
        src_state = g1.read_frames(source, ["observation.state"])["observation.state"]
        assert np.array_equal(state, src_state[start : start + 90])
        mine = toy.decode_frames(episode, "observation.images.cam_high", [10, 80])
        theirs = g1.decode_frames(source, "observation.images.cam_high", [start + 10, start + 80])
        for a, b in zip(mine, theirs, strict=True):
            psnr = 10 * np.log10(255.0**2 / np.mean((a.astype(float) - b.astype(float)) ** 2))
            assert psnr > 33, psnr


def test_shared_datasets_are_untouched(shared_dataset, tmp_path):
    """Opening and reading never writes into a dataset (checked on a read-only copy)."""
    src = shared_dataset(SO101)
    root = tmp_path / "ro"
    shutil.copytree(src, root)
    for p in [root, *root.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        ds = open_dataset(root)
        ds.read_frames(0)
        assert ds.problems
        after = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        before = sorted(str(p.relative_to(src)) for p in src.rglob("*"))
        assert after == before
    finally:
        for p in [root, *root.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


@pytest.mark.parametrize("max_side", [0, -160, True, 160.0, "160"])
def test_decode_refuses_a_bad_max_side_naming_the_remedy(shared_dataset, max_side):
    from strands_robots.errors import LabelValidationError

    ds = open_dataset(shared_dataset(G1))
    with pytest.raises(
        LabelValidationError, match=r"^max_side must be a positive integer number of pixels, got .*max_side=480"
    ):
        ds.decode_frames(1, "observation.images.cam_high", [0], max_side=max_side)


def test_decode_frame_indices_follow_the_integer_rule(shared_dataset):
    from strands_robots.dataset import FrameIndexError

    ds = open_dataset(shared_dataset(G1))
    camera = "observation.images.cam_high"
    length = ds.episodes[1].length
    by_int = ds.decode_frames(1, camera, [0, 5], max_side=np.int64(160))
    by_numpy = ds.decode_frames(1, camera, np.array([0, 5], dtype=np.int32))
    assert by_int[0].shape == (120, 160, 3) and by_numpy[1].shape == (480, 640, 3)
    for bad, message in [
        (True, "frame_index True is not an integer (episode 1)."),
        (3.0, "frame_index 3.0 is not an integer (episode 1)."),
        ("3", "frame_index '3' is not an integer (episode 1)."),
        (-1, f"frame_index -1 is outside episode 1 (frames 0..{length - 1})."),
        (np.int64(length), f"frame_index {length} is outside episode 1 (frames 0..{length - 1})."),
    ]:
        with pytest.raises(FrameIndexError) as info:
            ds.decode_frames(1, camera, [0, bad])
        assert str(info.value) == message

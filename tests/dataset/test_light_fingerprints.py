"""The fingerprint columns read without pyarrow/numpy equal the dataset reader's, or are refused.

``light_fingerprint_columns`` is a fast path: for every dataset it answers, the answer must
be exactly ``dataset_fingerprints(open_dataset(root))`` in plain form; metadata it does not
plainly understand gives None (the label stores then open the dataset).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_robots.dataset import open_dataset
from strands_robots.dataset.cache import clear_cache
from strands_robots.dataset.fingerprints import dataset_fingerprints
from strands_robots.dataset.light_fingerprints import light_fingerprint_columns
from strands_robots.errors import DatasetError
from tests.synth import make_v3_dataset, make_v21_dataset

SHARED = ("g1-inspire-v21", "lerobot-written-v30-video", "piper-act-v30-multifile", "so101-record-test-v30")
MEAN = "stats/observation.state/mean"


def reader_columns(root: Path) -> dict:
    clear_cache()
    return dataset_fingerprints(open_dataset(root)).to_plain()


def episodes_file(root: Path) -> Path:
    return sorted((root / "meta" / "episodes").glob("*/*.parquet"))[0]


def rewrite(root: Path, **columns) -> None:
    """Replace (array) or drop (None) columns of the first episodes file."""
    path = episodes_file(root)
    table = pq.read_table(path)
    for name, values in columns.items():
        if name in table.column_names:
            table = table.drop_columns([name])
        if values is not None:
            table = table.append_column(name, values)
    pq.write_table(table, path)


def add_means(root: Path) -> None:
    """Give every episode of every episodes file a stored ``observation.state`` mean."""
    for path in sorted((root / "meta" / "episodes").glob("*/*.parquet")):
        table = pq.read_table(path)
        means = [[0.5 + 0.25 * e, -1.0 / (e + 3)] for e in table.column("episode_index").to_pylist()]
        pq.write_table(table.append_column(MEAN, pa.array(means, pa.list_(pa.float64()))), path)


@pytest.mark.parametrize("name", SHARED)
def test_the_shared_datasets_read_the_same(shared_dataset, name):
    root = shared_dataset(name)
    light = light_fingerprint_columns(root)
    assert light is not None
    assert light == reader_columns(root)
    assert len(light["episode"]) == len(open_dataset(root).episodes)
    assert any(light["content"])  # the recorded datasets store statistics: digests are compared


def test_a_multifile_v3_dataset_with_gaps_reads_the_same(tmp_path):
    root = make_v3_dataset(
        tmp_path / "ds", [5, 7, 3, 9, 4], episode_indices=[0, 2, 5, 6, 11], episodes_per_file=2, tasks=("a", "b")
    )
    add_means(root)
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert light["episode"] == [0, 2, 5, 6, 11] and light["length"] == [5, 7, 3, 9, 4]
    assert light["has_range"] is True and len(set(light["content"])) == 5


def test_a_v21_dataset_reads_the_same(tmp_path):
    root = make_v21_dataset(tmp_path / "ds", [4, 6, 5], episode_indices=[1, 3, 4])
    stats = [{"episode_index": 1, "stats": {"observation.state": {"mean": [0.5, 1]}}}, {"episode_index": 4}]
    (root / "meta" / "episodes_stats.jsonl").write_text("\n".join(json.dumps(line) for line in stats) + "\n")
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert [bool(c) for c in light["content"]] == [True, False, False]
    assert light["has_range"] is False and light["index_from"] == [0, 4, 10] and light["index_to"] == [4, 10, 15]


def test_tasks_statistics_and_ranges_of_every_shape_read_the_same(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5, 6, 7, 8])
    rewrite(
        root,
        tasks=pa.array([["pick"], [], None, ["pick", "place"], [""], ["place"]], pa.list_(pa.string())),
        **{MEAN: pa.array([[0.1, 0.2], [], [math.nan, 1.0], [1e39, 0.0], [0.25, None], None], pa.list_(pa.float64()))},
        dataset_from_index=None,
        dataset_to_index=None,
    )
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    # no tasks / empty tasks have no code; [""] is a task list of its own; first appearance numbers them
    assert light["task_code"][:3] == [0, -1, -1] and light["task_lists"][0] == ["pick"]
    assert [light["task_lists"][c] for c in light["task_code"][3:]] == [["pick", "place"], [""], ["place"]]
    # empty, NaN, beyond-float32, partly or wholly missing means have no digest; the ranges are the cumulative lengths
    assert [bool(c) for c in light["content"]] == [True, False, False, False, False, False]
    assert light["index_from"] == [0, 3, 7, 12, 18, 25]


def test_lists_of_uneven_lengths_are_not_taken_for_one_task_each(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [1, 1])
    rewrite(root, tasks=pa.array([[], ["pick", "pick"]], pa.list_(pa.string())))  # two tasks, two episodes
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert light["task_code"] == [-1, 1] and light["task_lists"] == [[""], ["pick", "pick"]]


def test_string_tasks_and_float32_statistics_read_the_same(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    rewrite(
        root,
        tasks=pa.array(["pick", None, "pick"], pa.string()),
        **{MEAN: pa.array([[0.1, 0.2], [0.3], [1.5, 2.5, 3.5]], pa.list_(pa.float32()))},
    )
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert light["task_code"] == [0, -1, 0] and light["task_lists"] == [["pick"], [""]]  # as the reader numbers them


def test_a_file_without_statistics_gives_its_episodes_no_digest(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5, 6], episodes_per_file=2)
    add_means(root)
    path = episodes_file(root)
    pq.write_table(pq.read_table(path).drop_columns([MEAN]), path)
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert light["content"][:2] == ["", ""] and all(light["content"][2:])


@pytest.mark.parametrize(
    "change",
    [
        {"episode_index": pa.array([2, 1, 0], pa.int64())},  # out of order: the reader sorts
        {"episode_index": pa.array([0, 1, 1], pa.int64())},  # repeated: the reader refuses
        {"length": pa.array([3, None, 5], pa.int64())},  # null length
        {"length": pa.array([3, 0, 5], pa.int64())},  # zero length: the reader refuses
        {"length": pa.array([3.0, 4.0, 5.0], pa.float64())},  # not integer
        {"tasks": pa.array([[1], [2], [3]], pa.list_(pa.int64()))},  # tasks of another type
        {"tasks": pa.array([["a", None], ["b"], ["c"]], pa.list_(pa.string()))},  # a null task string
        {MEAN: pa.array([[1, 2], [3, 4], [5, 6]], pa.list_(pa.int64()))},  # integer statistics
        {MEAN: pa.array([0.5, 0.1, 0.2], pa.float64())},  # not a list
    ],
)
def test_metadata_the_reader_repairs_or_refuses_is_left_to_it(tmp_path, change):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    rewrite(root, **change)
    assert light_fingerprint_columns(root) is None


def test_one_range_column_alone_is_ignored_as_the_reader_ignores_it(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    rewrite(root, dataset_to_index=None, dataset_from_index=pa.array([10, 20, 30], pa.int64()))
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert light["index_from"] == [0, 3, 7]


def test_files_that_disagree_on_the_range_columns_are_left_to_the_reader(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5, 6], episodes_per_file=2)
    path = episodes_file(root)
    pq.write_table(pq.read_table(path).drop_columns(["dataset_from_index", "dataset_to_index"]), path)
    assert light_fingerprint_columns(root) is None


def test_a_header_the_reader_refuses_gives_none(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4], codebase_version="v9.0")
    assert light_fingerprint_columns(root) is None
    assert light_fingerprint_columns(tmp_path / "nowhere") is None


def test_v21_lines_the_reader_sorts_or_refuses_are_left_to_it(tmp_path):
    root = make_v21_dataset(tmp_path / "ds", [4, 6])
    lines = (root / "meta" / "episodes.jsonl").read_text().splitlines()
    (root / "meta" / "episodes.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    assert light_fingerprint_columns(root) is None


def test_without_arro3_the_fast_path_steps_aside(tmp_path, monkeypatch):
    root = make_v3_dataset(tmp_path / "ds", [3, 4])
    monkeypatch.setitem(sys.modules, "arro3.io", None)  # import arro3.io raises ImportError
    assert light_fingerprint_columns(root) is None
    assert light_fingerprint_columns(make_v21_dataset(tmp_path / "v2", [3])) is not None  # json only


def test_reading_imports_neither_numpy_nor_pyarrow(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    code = (
        "import sys\n"
        "from strands_robots.dataset.light_fingerprints import light_fingerprint_columns\n"
        f"assert light_fingerprint_columns({str(root)!r})['length'] == [3, 4, 5]\n"
        "print(sorted(m for m in ('numpy', 'pyarrow') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


TASKS = st.lists(st.sampled_from(["pick", "place", "", "stack the red cube"]), max_size=3)
MEANS = st.one_of(
    st.none(),
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True, width=64),
            st.sampled_from([1e39, -3.4028235e38, 1.0000001, 5e-46]),
        ),
        max_size=4,
    ),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.tuples(st.integers(1, 50), st.one_of(st.none(), TASKS), MEANS), min_size=1, max_size=8),
    gaps=st.lists(st.integers(1, 3), min_size=8, max_size=8),
    ranges=st.booleans(),
)
def test_generated_metadata_reads_the_same_or_is_refused(tmp_path_factory, rows, gaps, ranges):
    root = make_v3_dataset(tmp_path_factory.mktemp("ds"), [length for length, _, _ in rows])
    indices, total = [], 0
    for gap in gaps[: len(rows)]:
        total += gap
        indices.append(total)
    lengths = [length for length, _, _ in rows]
    starts = [sum(lengths[:i]) * 2 for i in range(len(rows))]  # not the cumulative sums: read, not computed
    rewrite(
        root,
        episode_index=pa.array(indices, pa.int64()),
        tasks=pa.array([t for _, t, _ in rows], pa.list_(pa.string())),
        **{MEAN: pa.array([m for _, _, m in rows], pa.list_(pa.float64()))},
        dataset_from_index=pa.array(starts, pa.int64()) if ranges else None,
        dataset_to_index=pa.array([s + n for s, n in zip(starts, lengths, strict=True)], pa.int64())
        if ranges
        else None,
    )
    light = light_fingerprint_columns(root)
    assert light is not None
    assert light == reader_columns(root)


# -- metadata built to break the fast path: each answer the reader's, or None -----------------

CAMERA = "observation.images.front"


def with_camera(root: Path) -> Path:
    """Declare a video camera in the header and give the episodes file its four columns."""
    info = json.loads((root / "meta" / "info.json").read_text())
    info["features"][CAMERA] = {"dtype": "video", "shape": [24, 32, 3], "names": ["height", "width", "channels"]}
    (root / "meta" / "info.json").write_text(json.dumps(info))
    n = pq.read_metadata(episodes_file(root)).num_rows
    rewrite(
        root,
        **{f"videos/{CAMERA}/chunk_index": pa.array([0] * n), f"videos/{CAMERA}/file_index": pa.array([0] * n)},
        **{f"videos/{CAMERA}/from_timestamp": pa.array([0.1 * i for i in range(n)])},
        **{f"videos/{CAMERA}/to_timestamp": pa.array([0.1 * i + 0.1 for i in range(n)])},
    )
    return root


def reader_refuses(root: Path) -> bool:
    clear_cache()
    try:
        open_dataset(root)
    except Exception:
        return True
    return False


def test_columns_the_reader_reads_but_fingerprints_do_not_use_are_checked_as_it_checks_them(tmp_path):
    root = with_camera(make_v3_dataset(tmp_path / "ok", [3, 4, 5]))
    assert light_fingerprint_columns(root) == reader_columns(root)  # camera columns of the usual types
    changes = [
        {"data/chunk_index": pa.array([0, None, 0], pa.int64())},
        {"data/file_index": pa.array(["0", "0", "0"])},
        {f"videos/{CAMERA}/from_timestamp": pa.array(["0", "1", "2"])},
        {f"videos/{CAMERA}/to_timestamp": pa.array([True, False, True])},
        {f"videos/{CAMERA}/chunk_index": pa.array(["a", "b", "c"])},  # the reader refuses it (DatasetError)
    ]
    for i, change in enumerate(changes):
        root = with_camera(make_v3_dataset(tmp_path / f"ds{i}", [3, 4, 5]))
        rewrite(root, **change)
        assert reader_refuses(root), change
        assert light_fingerprint_columns(root) is None, change


@pytest.mark.parametrize(
    "change",
    [
        {"episode_index": pa.array([0, 1, 2**63 + 5], pa.uint64())},
        {"length": pa.array([3, 4, 2**64 - 1], pa.uint64())},
        {
            "dataset_from_index": pa.array([0, 3, 2**63], pa.uint64()),
            "dataset_to_index": pa.array([3, 7, 2**63 + 5], pa.uint64()),
        },
        {"length": pa.array([2**62] * 3, pa.int64()), "dataset_from_index": None, "dataset_to_index": None},
    ],
)
def test_integers_beyond_the_readers_int64_columns_are_left_to_it(tmp_path, change):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    rewrite(root, **change)
    # the reader's int64 columns cannot hold these (uint64 values, cumulative sum): it refuses them
    clear_cache()
    with pytest.raises(DatasetError, match="int64"):
        reader_columns(root)
    assert light_fingerprint_columns(root) is None


def test_repeated_column_names_are_left_to_the_reader(tmp_path):
    for i, name in enumerate(["episode_index", "tasks", MEAN]):
        root = make_v3_dataset(tmp_path / f"ds{i}", [3, 4, 5])
        path = episodes_file(root)
        table = pq.read_table(path)
        extra = table.column(name) if name in table.column_names else pa.array([[0.5]] * 3)
        columns = [*table.columns, extra] if name in table.column_names else [*table.columns, extra, extra]
        names = [*table.column_names, name] if name in table.column_names else [*table.column_names, name, name]
        pq.write_table(pa.Table.from_arrays(columns, names=names), path)
        if name == MEAN:  # the reader opens it; the statistics reader refuses it
            with pytest.raises(DatasetError, match="repeat"):
                reader_columns(root)
        else:
            assert reader_refuses(root)
        assert light_fingerprint_columns(root) is None


BAD_FOOTER = b"PAR1" + b"\x00" * 20 + b"\x15\x02" + b"\xff" * 40 + (42).to_bytes(4, "little") + b"PAR1"


@pytest.mark.parametrize(
    ("content", "quiet"),
    [(b"", True), (b"PAR1", True), ("truncated", True), ("no footer magic", True), (BAD_FOOTER, False)],
    ids=["empty", "too short", "truncated", "no footer magic", "bad footer"],
)
def test_an_episodes_file_that_is_not_parquet_gives_none_without_a_panic(tmp_path, capfd, content, quiet):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5, 6], episodes_per_file=2)
    path = episodes_file(root)
    data = path.read_bytes()
    if content == "truncated":
        content = data[: len(data) // 2]
    elif content == "no footer magic":
        content = data[:-4] + b"PAR0"
    path.write_bytes(content)
    assert light_fingerprint_columns(root) is None  # never arro3's PanicException (a BaseException)
    assert reader_refuses(root)
    if quiet:  # told by its magic bytes: arro3 never reads it, so prints no Rust backtrace
        assert "panicked" not in capfd.readouterr().err


def test_a_directory_named_like_an_episodes_file_gives_none(tmp_path, capfd):
    root = make_v3_dataset(tmp_path / "ds", [3, 4])
    (root / "meta" / "episodes" / "chunk-000" / "file-009.parquet").mkdir()
    assert light_fingerprint_columns(root) is None
    assert reader_refuses(root)
    assert "panicked" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (pa.list_(pa.string()), pa.large_list(pa.string())),  # the reader cannot concatenate these
        (pa.large_list(pa.string()), pa.list_(pa.large_string())),
        (pa.list_(pa.string()), pa.string()),
        (pa.string(), pa.large_string()),  # the reader can: still left to it (a rare shape)
    ],
)
def test_files_whose_tasks_types_differ_are_left_to_the_reader(tmp_path, first, second):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5, 6], episodes_per_file=2)
    for i, kind in enumerate((first, second)):
        path = sorted((root / "meta" / "episodes").glob("*/*.parquet"))[i]
        table = pq.read_table(path)
        values = table.column("tasks").to_pylist()
        if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
            values = [v[0] for v in values]
        pq.write_table(table.drop_columns(["tasks"]).append_column("tasks", pa.array(values, kind)), path)
    assert light_fingerprint_columns(root) is None


def test_files_that_disagree_on_a_data_column_are_left_to_the_reader(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5, 6], episodes_per_file=2)
    path = sorted((root / "meta" / "episodes").glob("*/*.parquet"))[1]
    table = pq.read_table(path)
    pq.write_table(
        table.drop_columns(["data/chunk_index"]).append_column("data/chunk_index", pa.array(["0", "0"])), path
    )
    assert reader_refuses(root)
    assert light_fingerprint_columns(root) is None


@pytest.mark.parametrize(
    "table",
    [
        pa.table({"task_index": [0, 0], "task": ["a", "b"]}),  # repeated task_index
        pa.table({"task_index": [0.5], "task": ["a"]}),  # not integer
        pa.table({"task_index": pa.array([None, 1], pa.int64()), "task": ["a", "b"]}),  # null
        pa.table({"x": [1]}),  # no task string column
        None,  # not parquet
    ],
)
def test_a_tasks_parquet_the_reader_refuses_gives_none(tmp_path, table):
    root = make_v3_dataset(tmp_path / "ds", [3, 4])
    if table is None:
        (root / "meta" / "tasks.parquet").write_bytes(b"garbage")
    else:
        pq.write_table(table, root / "meta" / "tasks.parquet")
    assert reader_refuses(root)
    assert light_fingerprint_columns(root) is None


def test_a_tasks_parquet_of_other_column_names_reads_the_same(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4])
    pq.write_table(pa.table({"name": ["a", "b"], "n": [7, 8]}), root / "meta" / "tasks.parquet")  # one string column
    assert light_fingerprint_columns(root) == reader_columns(root)
    (root / "meta" / "tasks.parquet").unlink()
    assert light_fingerprint_columns(root) == reader_columns(root)


def write_lines(path: Path, lines: list) -> None:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))


@pytest.mark.parametrize(
    "lines",
    [
        [],  # no episodes: the reader finds no episode_index column
        ["", "  "],
        [{"episode_index": 0, "tasks": ["a"], "length": 2**63}],  # pyarrow reads it as a float
        [{"episode_index": 2**64, "tasks": ["a"], "length": 3}],
        [{"episode_index": 0, "tasks": ["a"], "length": 3}, {"episode_index": 1, "tasks": "b", "length": 4}],
        [{"episode_index": 0, "tasks": ["a"], "length": 3}, {"episode_index": 1, "tasks": [1], "length": 4}],
        [{"episode_index": 0, "length": 3, "note": 1}, {"episode_index": 1, "length": 4, "note": "x"}],
        [{"episode_index": 0, "length": 3, "data/chunk_index": "x"}],
        ['{"episode_index": 0, "tasks": ["\\ud800"], "length": 3}'],  # a lone surrogate pyarrow cannot encode
        [
            '{"episode_index": 0, "tasks": ["a"], "tasks": "b", "length": 3}',
            {"episode_index": 1, "tasks": ["a"], "length": 3},
        ],
    ],
)
def test_v21_episode_lines_the_reader_refuses_give_none(tmp_path, lines):
    root = make_v21_dataset(tmp_path / "ds", [3, 4])
    write_lines(root / "meta" / "episodes.jsonl", lines)
    assert reader_refuses(root)
    assert light_fingerprint_columns(root) is None


def test_v21_lines_of_the_usual_shapes_read_the_same(tmp_path):
    root = make_v21_dataset(tmp_path / "ds", [3, 4])
    lines = [
        '{"length": 3, "episode_index": 0}',
        "",
        {"episode_index": 1, "tasks": None, "length": 4},
        {"episode_index": 2, "tasks": [], "length": 5},
        {"episode_index": 4, "tasks": [None, "pick \u00e9\U0001f916"], "length": 6},
        '{"episode_index": 5, "tasks": ["\\ud83e\\udd16 \\u00e9"], "length": 7}',  # escaped as json.dumps writes
        {"episode_index": 6, "tasks": ["a"], "length": 2**62},
    ]
    write_lines(root / "meta" / "episodes.jsonl", lines)
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert light["episode"] == [0, 1, 2, 4, 5, 6]


@pytest.mark.parametrize(
    "text",
    [
        "{bad}\n",
        '{"task_index": true, "task": "a"}\n',
        '{"task_index": 0, "task": "a"}\n{"task_index": 0, "task": "b"}\n',
        '{"task_index": 0}\n',
        "[0]\n",
    ],
)
def test_a_tasks_jsonl_the_reader_refuses_gives_none(tmp_path, text):
    root = make_v21_dataset(tmp_path / "ds", [3, 4])
    (root / "meta" / "tasks.jsonl").write_text(text)
    assert reader_refuses(root)
    assert light_fingerprint_columns(root) is None


def test_v21_statistics_lines_read_as_the_statistics_reader_reads_them(tmp_path):
    root = make_v21_dataset(tmp_path / "ds", [3, 4, 5])
    stats = root / "meta" / "episodes_stats.jsonl"

    def mean(index, value):
        return {"episode_index": index, "stats": {"observation.state": {"mean": value}}}

    write_lines(stats, [mean(0, [0.5]), mean(True, [0.25, 1.0]), mean(2.0, [1.0]), mean(-1, [2.0])])
    light = light_fingerprint_columns(root)
    assert light == reader_columns(root)
    assert [bool(c) for c in light["content"]] == [True, True, False]  # True is episode 1, 2.0 is no index
    refused = [
        [mean(0, [[1.0, 2.0], [3.0]])],  # ragged: the reader refuses it
        [mean(0, [1.0, [2.0]])],
        [{"episode_index": 0, "stats": [1]}],  # not an object: the reader refuses it
        [{"episode_index": 0, "stats": {"observation.state": [1.0]}}],
        [mean(2**70, [1.0])],  # beyond int64: the reader refuses it
    ]
    for lines in refused:
        write_lines(stats, lines)
        assert light_fingerprint_columns(root) is None, lines


def light_agrees_with_reader(root: Path) -> None:
    """The contract: the reader's columns, or None; None whenever the reader fails."""
    light = light_fingerprint_columns(root)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow to inf in a float32 cast
            expected = reader_columns(root)
    except Exception as exc:
        assert light is None, f"the reader fails ({exc!r}), the fast path answers"
        return
    assert light is None or light == expected


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 9),
    st.sampled_from([2**63 - 1, 2**63, -(2**63) - 1, 2**70, 3.0, 1e39, -0.0, 5e-46]),
    st.floats(allow_nan=False, width=32),
    st.text(alphabet="ab\x00\u00e9\u2028", max_size=2),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.just("mean"), inner)),
    max_leaves=4,
)
TASK_VALUES = st.one_of(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", ""])), max_size=2), JSON_VALUES)


def v2_line(position: int):
    return st.one_of(
        st.fixed_dictionaries(
            {
                "episode_index": st.one_of(st.just(position), JSON_VALUES),
                "length": st.one_of(st.integers(1, 9), JSON_VALUES),
            },
            optional={"tasks": TASK_VALUES, "note": JSON_VALUES},
        ),
        JSON_VALUES.filter(lambda value: value is not None),  # a first line of null crashes pyarrow's JSON reader
    )


V2_LINES = st.integers(1, 5).flatmap(lambda n: st.tuples(*[v2_line(i) for i in range(n)]))
STATS_LINES = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"episode_index": st.one_of(st.integers(-1, 5), JSON_VALUES)},
            optional={"stats": st.one_of(st.fixed_dictionaries({"observation.state": JSON_VALUES}), JSON_VALUES)},
        ),
        JSON_VALUES,
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=V2_LINES, stats=st.one_of(st.none(), STATS_LINES))
def test_generated_v21_lines_read_the_same_or_are_refused(tmp_path_factory, lines, stats):
    root = make_v21_dataset(tmp_path_factory.mktemp("ds"), [3])
    write_lines(root / "meta" / "episodes.jsonl", list(lines))
    if stats is not None:
        write_lines(root / "meta" / "episodes_stats.jsonl", stats)
    light_agrees_with_reader(root)


INT_TYPES = st.sampled_from([pa.int64(), pa.int32(), pa.uint64(), pa.float64(), pa.string()])
TASK_TYPES = st.sampled_from(
    [pa.list_(pa.string()), pa.large_list(pa.string()), pa.list_(pa.large_string()), pa.string(), pa.large_string()]
)
MEAN_TYPES = st.sampled_from(
    [pa.list_(pa.float64()), pa.list_(pa.float32()), pa.large_list(pa.float64()), pa.float64()]
)
EPISODES_FILE = st.fixed_dictionaries(
    {
        "rows": st.lists(
            st.tuples(
                st.integers(-1, 12),
                st.one_of(st.integers(1, 9), st.sampled_from([0, 2**62])),
                st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "a\x00"]), max_size=2)),
                st.one_of(st.none(), st.lists(st.sampled_from([0.5, -0.0, math.nan, 1e39, 5e-46]), max_size=2)),
            ),
            max_size=4,
        ),
        "index": INT_TYPES,
        "length": INT_TYPES,
        "tasks": st.one_of(st.none(), TASK_TYPES),
        "mean": st.one_of(st.none(), MEAN_TYPES),
        "ranges": st.booleans(),
        "chunk": st.sampled_from([None, pa.int64(), pa.int32(), pa.string()]),
    }
)


def episodes_table(spec: dict) -> pa.Table:
    rows = spec["rows"]

    def ints(values, kind):
        if kind == pa.string():
            return pa.array([str(v) for v in values], kind)
        if kind == pa.float64():
            return pa.array([float(v) for v in values], kind)
        if kind == pa.int32():
            values = [min(v, 2**31 - 1) for v in values]
        return pa.array([abs(v) for v in values] if kind == pa.uint64() else values, kind)

    columns = {
        "episode_index": ints([r[0] for r in rows], spec["index"]),
        "length": ints([r[1] for r in rows], spec["length"]),
    }
    if spec["tasks"] is not None:
        listed = pa.types.is_list(spec["tasks"]) or pa.types.is_large_list(spec["tasks"])
        values = [r[2] if listed else (r[2][0] if r[2] else None) for r in rows]
        columns["tasks"] = pa.array(values, spec["tasks"])
    if spec["mean"] is not None:
        listed = not pa.types.is_floating(spec["mean"])
        columns[MEAN] = pa.array([r[3] if listed else (r[3][0] if r[3] else None) for r in rows], spec["mean"])
    if spec["ranges"] and 3 * sum(r[1] for r in rows) < 2**63:
        starts = [3 * sum(r[1] for r in rows[:i]) for i in range(len(rows))]  # read, not the cumulative sums
        columns["dataset_from_index"] = pa.array(starts, pa.int64())
        columns["dataset_to_index"] = pa.array([s + r[1] for s, r in zip(starts, rows, strict=True)], pa.int64())
    if spec["chunk"] is not None:
        columns["data/chunk_index"] = pa.array(["0" if spec["chunk"] == pa.string() else 0] * len(rows), spec["chunk"])
    return pa.table(columns)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(EPISODES_FILE, min_size=1, max_size=3))
def test_generated_episodes_files_of_any_column_types_read_the_same_or_are_refused(tmp_path_factory, files):
    root = make_v3_dataset(tmp_path_factory.mktemp("ds"), [3])
    folder = root / "meta" / "episodes" / "chunk-000"
    for path in folder.iterdir():
        path.unlink()
    for i, spec in enumerate(files):
        pq.write_table(episodes_table(spec), folder / f"file-{i:03d}.parquet")
    light_agrees_with_reader(root)

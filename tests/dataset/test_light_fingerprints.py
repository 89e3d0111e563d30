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

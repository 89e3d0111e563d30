"""Malformed episodes metadata and statistics give a typed DatasetError naming the file.

Each case writes a real dataset with :mod:`tests.synth` and rewrites one metadata file with
pyarrow or json; the rule (bad input gets a typed error naming the file and the remedy,
nothing stored changes) is stated in docs/dataset.md.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots import episode_labels as el
from strands_robots.dataset import open_dataset
from strands_robots.dataset.cache import clear_cache
from strands_robots.dataset.stats import feature_range
from strands_robots.errors import DatasetError
from strands_robots.fingerprint.columns import dataset_fingerprints
from tests.synth import make_v3_dataset, make_v21_dataset

CAMERA = "observation.images.front"
BIG = 2**63
MEAN = "stats/observation.state/mean"


def _episodes_file(root: Path) -> Path:
    return sorted((root / "meta" / "episodes").glob("*/*.parquet"))[0]


def _rewrite(root: Path, change: Callable[[pa.Table], pa.Table]) -> None:
    path = _episodes_file(root)
    pq.write_table(change(pq.read_table(path)), path)


def _replace(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, values)


def _v3(root: Path, *, video: bool = False) -> None:
    make_v3_dataset(root, [3, 4, 5], video=video, cameras=(CAMERA,))


def _v21(root: Path) -> None:
    make_v21_dataset(root, [3, 4, 5])


def _stats_lines(root: Path, text: str | bytes) -> None:
    path = root / "meta" / "episodes_stats.jsonl"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _stats(root: Path, entries: list[object]) -> None:
    _stats_lines(root, "".join(json.dumps(e) + "\n" for e in entries))


def repeated_column(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: t.append_column("length", t.column("length")))


def repeated_mean_column(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: t.append_column(MEAN, pa.array([[0.5]] * 3)).append_column(MEAN, pa.array([[0.5]] * 3)))


def v3_struct_mean(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: t.append_column(MEAN, pa.array([{"a": 1.0}] * 3)))


def string_chunk_index(root: Path) -> None:
    _v3(root, video=True)
    key = f"videos/{CAMERA}/chunk_index"
    _rewrite(root, lambda t: _replace(t, key, pa.array(["a", "b", "c"])))


def null_chunk_index(root: Path) -> None:
    _v3(root, video=True)
    key = f"videos/{CAMERA}/chunk_index"
    _rewrite(root, lambda t: _replace(t, key, pa.nulls(3)))


def fixed_size_tasks(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: _replace(t, "tasks", pa.array([["x"], ["y"], ["x"]], pa.list_(pa.string(), 1))))


def list_view_tasks(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: _replace(t, "tasks", pa.array([["x"], ["y"], ["x"]], pa.list_view(pa.string()))))


def uint64_episode_index(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: _replace(t, "episode_index", pa.array([0, 1, BIG], pa.uint64())))


def uint64_length(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: _replace(t, "length", pa.array([3, 4, BIG + 5], pa.uint64())))


def uint64_dataset_index(root: Path) -> None:
    _v3(root)
    _rewrite(root, lambda t: _replace(t, "dataset_to_index", pa.array([3, 7, BIG], pa.uint64())))


def length_sum_overflow(root: Path) -> None:
    _v21(root)
    lines = [{"episode_index": e, "tasks": ["t"], "length": 2**62} for e in range(3)]
    (root / "meta" / "episodes.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def ragged_mean(root: Path) -> None:
    _v21(root)
    _stats(root, [{"episode_index": 0, "stats": {"observation.state": {"mean": [[1.0, 2.0], [3.0]]}}}])


def struct_mean(root: Path) -> None:
    _v21(root)
    _stats(root, [{"episode_index": 0, "stats": {"observation.state": {"mean": {"a": 1.0}}}}])


def list_stats(root: Path) -> None:
    _v21(root)
    _stats(root, [{"episode_index": 0, "stats": [1, 2]}])


def huge_stats_index(root: Path) -> None:
    _v21(root)
    _stats(root, [{"episode_index": 2**64, "stats": {"observation.state": {"mean": [1.0]}}}])


def bad_stats_line(root: Path) -> None:
    _v21(root)
    _stats_lines(root, '{"episode_index": 0, "stats": {}}\n{not json\n')


def invalid_utf8_stats(root: Path) -> None:
    _v21(root)
    _stats_lines(root, b'{"episode_index": 0, "stats": {"observation.state": {"mean": [1.0]}}, "n": "\xff"}\n')


def invalid_utf8_episodes(root: Path) -> None:
    _v21(root)
    path = root / "meta" / "episodes.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"tasks": [', b'"tasks": ["\xff", ', 1))


def surrogate_episodes(root: Path) -> None:
    _v21(root)
    lines = [{"episode_index": e, "tasks": ["t\ud800"], "length": 3} for e in range(3)]
    (root / "meta" / "episodes.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def surrogate_tasks(root: Path) -> None:
    _v21(root)
    (root / "meta" / "tasks.jsonl").write_text(json.dumps({"task_index": 0, "task": "t\ud800"}) + "\n")


def invalid_utf8_tasks(root: Path) -> None:
    _v21(root)
    (root / "meta" / "tasks.jsonl").write_bytes(b'{"task_index": 0, "task": "\xff"}\n')


CASES = {
    "repeated_column": (repeated_column, "repeat"),
    "repeated_mean_column": (repeated_mean_column, "repeat"),
    "v3_struct_mean": (v3_struct_mean, "mean"),
    "string_chunk_index": (string_chunk_index, "chunk_index"),
    "null_chunk_index": (null_chunk_index, "chunk_index"),
    "fixed_size_tasks": (fixed_size_tasks, "tasks"),
    "list_view_tasks": (list_view_tasks, "tasks"),
    "uint64_episode_index": (uint64_episode_index, "episode_index"),
    "uint64_length": (uint64_length, "length"),
    "uint64_dataset_index": (uint64_dataset_index, "dataset_to_index"),
    "length_sum_overflow": (length_sum_overflow, "length"),
    "ragged_mean": (ragged_mean, "mean"),
    "struct_mean": (struct_mean, "mean"),
    "list_stats": (list_stats, "stats"),
    "huge_stats_index": (huge_stats_index, "episode_index"),
    "bad_stats_line": (bad_stats_line, "line 2"),
    "invalid_utf8_stats": (invalid_utf8_stats, "UTF-8"),
    "invalid_utf8_episodes": (invalid_utf8_episodes, "UTF-8"),
    "surrogate_episodes": (surrogate_episodes, "UTF-8"),
    "surrogate_tasks": (surrogate_tasks, "UTF-8"),
    "invalid_utf8_tasks": (invalid_utf8_tasks, "UTF-8"),
}


def _open_and_fingerprint(root: Path) -> None:
    dataset = open_dataset(root)
    dataset_fingerprints(dataset)


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_metadata_is_a_dataset_error(tmp_path: Path, case: str) -> None:
    build, fragment = CASES[case]
    root = tmp_path / "ds"
    build(root)
    with pytest.raises(DatasetError) as caught:
        _open_and_fingerprint(root)
    message = str(caught.value)
    assert fragment in message
    assert str(root / "meta") in message


def _bump_mtimes(root: Path) -> None:
    """Move every metadata file's mtime on, so no fingerprint cache keyed by it is reused."""
    for path in [*(root / "meta").rglob("*.parquet"), *(root / "meta").glob("*.jsonl")]:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def _fresh_process() -> None:
    clear_cache()


#: One case per reading place: the v3 episodes parquet, the v2 episodes.jsonl, the v2 statistics.
E2E_CASES = {
    "v3 repeated column": (repeated_column, "repeat"),
    "v3 uint64 episode_index": (uint64_episode_index, "int64"),
    "v2 invalid UTF-8 episodes": (invalid_utf8_episodes, "UTF-8"),
    "v2 ragged stats mean": (ragged_mean, "mean"),
    "v2 stats not an object": (list_stats, "stats"),
}


@pytest.mark.parametrize("case", sorted(E2E_CASES))
def test_stale_episodes_on_malformed_metadata_warns_and_leaves_the_sidecar(tmp_path: Path, case: str) -> None:
    build, fragment = E2E_CASES[case]
    shadow = tmp_path / "shadow"
    build(shadow)  # the broken metadata, written beside a healthy copy of the same dataset
    root = tmp_path / "ds"
    if (shadow / "meta" / "episodes").is_dir():
        _v3(root, video=False)
    else:
        _v21(root)
    el.record_deterministic_verdicts(root, [{"episode": e, "success": e != 1} for e in (0, 1, 2)])
    sidecar = root / "episode_labels.json"
    before = sidecar.read_bytes()
    shutil.rmtree(root / "meta")
    shutil.copytree(shadow / "meta", root / "meta")
    _bump_mtimes(root)
    _fresh_process()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stale = el.stale_episodes(root)
    messages = [str(w.message) for w in caught]
    assert stale == {}
    assert any("could not be opened" in m and fragment in m for m in messages), messages
    assert sidecar.read_bytes() == before


@pytest.mark.parametrize("case", sorted(E2E_CASES))
def test_recording_verdicts_on_malformed_metadata_is_refused_and_stores_nothing(tmp_path: Path, case: str) -> None:
    build, fragment = E2E_CASES[case]
    root = tmp_path / "ds"
    build(root)
    _fresh_process()
    with pytest.raises(DatasetError, match=fragment):
        el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    assert not (root / "episode_labels.json").exists()


STATE = "observation.state"


def _min_max_lines(root: Path, bad: str) -> None:
    _v21(root)
    good = json.dumps({"episode_index": 0, "stats": {STATE: {"min": [0.0, -1.0], "max": [1.0, 2.0]}}})
    _stats_lines(root, good + "\n" + bad + "\n")


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ("{not json", "line 2 is not JSON"),
        ("[1, 2]", "line 2 is not a JSON object"),
        ('{"episode_index": 1, "stats": [1]}', "stats is list"),
        ('{"episode_index": 1, "stats": {"observation.state": [1.0]}}', "is list, not an object"),
    ],
)
def test_feature_range_refuses_bad_statistics_lines(tmp_path: Path, bad: str, fragment: str) -> None:
    root = tmp_path / "ds"
    _min_max_lines(root, bad)
    with pytest.raises(DatasetError, match=fragment) as caught:
        feature_range(root, STATE)
    assert "episodes_stats.jsonl" in str(caught.value)


def test_feature_range_reads_good_statistics_lines(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _min_max_lines(root, json.dumps({"episode_index": 1, "stats": {STATE: {"min": [-0.5, 0.0], "max": [0.5, 3.0]}}}))
    lo, hi = feature_range(root, STATE)
    assert lo.tolist() == [-0.5, -1.0] and hi.tolist() == [1.0, 3.0]


def test_feature_range_refuses_a_repeated_statistics_column(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _v3(root)
    low, high = pa.array([[0.0]] * 3), pa.array([[1.0]] * 3)
    _rewrite(
        root,
        lambda t: (
            t.append_column(f"stats/{STATE}/min", low)
            .append_column(f"stats/{STATE}/max", high)
            .append_column(f"stats/{STATE}/max", high)
        ),
    )
    with pytest.raises(DatasetError, match="repeat"):
        feature_range(root, STATE)


def test_large_uint64_lengths_that_fit_int64_give_exact_index_ranges(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _v3(root)
    _rewrite(
        root,
        lambda t: _replace(t, "length", pa.array([1, 2**62, 3], pa.uint64())).drop_columns(
            ["dataset_from_index", "dataset_to_index"]
        ),
    )
    episodes = open_dataset(root).episodes
    assert episodes.index_from.tolist() == [0, 1, 2**62 + 1]
    assert episodes.index_to.tolist() == [1, 2**62 + 1, 2**62 + 4]

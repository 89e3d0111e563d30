"""The stale check (docs/sidecar-format.md, ``fingerprint``): what a fingerprint records, which
edits make a label stale and the reason given, and what is never stale."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots import episode_labels as el
from strands_robots.dataset import open_dataset
from strands_robots.dataset.cache import clear_cache
from strands_robots.episode_labels.document import open_store
from strands_robots.errors import DatasetError
from strands_robots.fingerprint import metadata_digest, stale_records
from strands_robots.fingerprint.columns import Fingerprinter
from strands_robots.storage.record_store import Change
from tests.episode_labels.helpers import TOY_VERDICTS
from tests.synth import make_v3_dataset, make_v21_dataset

EPISODES_FILE = "meta/episodes/chunk-000/file-000.parquet"
MEAN = "stats/observation.state/mean"


def _touch_meta(root: Path) -> None:
    for path in (root / "meta").rglob("*"):
        if path.is_file():
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def _edit_episodes(root: Path, column: str, fn) -> None:
    path = root / EPISODES_FILE
    table = pq.read_table(path)
    values = fn(table.column(column).to_pylist())
    table = table.set_column(
        table.column_names.index(column), column, pa.array(values, table.schema.field(column).type)
    )
    pq.write_table(table, path)
    _touch_meta(root)


def _labelled(root: Path) -> None:
    el.record_deterministic_verdicts(root, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(root, episode, quality="high")


def _v3(root: Path) -> Path:
    make_v3_dataset(root, [5, 7, 3, 9, 4], episode_indices=[0, 2, 5, 6, 11], episodes_per_file=2, tasks=("a", "b"))
    for path in sorted((root / "meta" / "episodes").glob("*/*.parquet")):
        table = pq.read_table(path)
        means = [[0.5 + e, -1.0 / (e + 3)] for e in table.column("episode_index").to_pylist()]
        pq.write_table(table.append_column(MEAN, pa.array(means, pa.list_(pa.float64()))), path)
    return root


def test_a_fingerprint_holds_the_episode_values_and_the_metadata_digest(toy_dataset):
    dataset = open_dataset(toy_dataset)
    fingerprinter = Fingerprinter(dataset)
    _labelled(toy_dataset)
    records = el.read_labels(toy_dataset)["episodes"]
    for episode in dataset.episodes:
        info = dataset.episodes[episode]
        expected = {"length": info.length, "index_range": list(info.index_range), "tasks": list(info.tasks)}
        assert {k: fingerprinter(episode)[k] for k in expected} == expected
        assert len(fingerprinter(episode)["content"]) == 16
        assert records[str(episode)]["fingerprint"] == {**fingerprinter(episode), "meta": metadata_digest(toy_dataset)}
    assert fingerprinter.present([2, 0, 99]) == {2: fingerprinter(2), 0: fingerprinter(0)}


@pytest.mark.parametrize(
    ("column", "edit", "key", "changed"),
    [
        ("length", lambda v: [v[0], v[1] + 1, v[2]], "length", 1),
        ("dataset_to_index", lambda v: [v[0], v[1], v[2] + 5], "index_range", 2),
        ("tasks", lambda v: [v[0], ["Another task"], v[2]], "tasks", 1),
    ],
)
def test_an_edit_of_an_episodes_values_makes_its_labels_stale(toy_dataset, column, edit, key, changed):
    _labelled(toy_dataset)
    assert el.stale_episodes(toy_dataset) == {}
    before = Fingerprinter(open_dataset(toy_dataset))(changed)[key]
    _edit_episodes(toy_dataset, column, edit)
    now = Fingerprinter(open_dataset(toy_dataset))(changed)[key]
    assert el.stale_episodes(toy_dataset) == {changed: f"{key} was {before!r} when labelled, now {now!r}"}
    with pytest.warns(el.StaleLabelsWarning, match=f"{key} was"):
        assert changed not in el.filter_episodes(toy_dataset, require_success=False, min_quality="low")


def test_an_unknown_key_is_ignored_and_the_first_differing_key_named(toy_dataset):
    _labelled(toy_dataset)

    def edit(document):
        document["episodes"]["0"]["fingerprint"] = {"length": 1, "camera_serial": "X1"}  # a key the dataset has not
        return Change(records=["0"], fields=[]), None

    open_store(toy_dataset).update(edit)
    length = open_dataset(toy_dataset).episodes[0].length
    assert el.stale_episodes(toy_dataset) == {0: f"length was 1 when labelled, now {length}"}


def test_a_record_without_a_fingerprint_and_a_deleted_episode(toy_dataset):
    fingerprints = {0: None, 1: {}, 2: "not a dict", 7: {"length": 3}}
    assert stale_records(toy_dataset, fingerprints) == {7: "episode 7 is no longer in the dataset"}
    assert stale_records(toy_dataset, {0: {"length": -1, "tasks": ["x"]}}, keys=("tasks",)) == {
        0: f"tasks was ['x'] when labelled, now {list(open_dataset(toy_dataset).episodes[0].tasks)!r}"
    }


@pytest.mark.parametrize("make", [_v3, make_v21_dataset], ids=["v3.0", "v2.1"])
def test_a_copied_or_touched_dataset_keeps_its_labels_fresh(tmp_path, make):
    root = make(tmp_path / "ds", [4, 6, 5, 3]) if make is make_v21_dataset else make(tmp_path / "ds")
    episodes = list(open_dataset(root).episodes)
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in episodes])
    el.annotate_episodes(root, [{"episode": e, "quality": "high"} for e in episodes])
    el.flush(root)
    copy = Path(shutil.copytree(root, tmp_path / "copy"))
    _touch_meta(copy)
    assert el.stale_episodes(copy) == {}
    assert el.filter_episodes(copy) == sorted(episodes)


def test_files_left_by_earlier_versions_are_ignored(toy_dataset):
    _labelled(toy_dataset)
    for name in (".episode_labels.json.fingerprints.json", ".episode_labels.json.fingerprints.npz"):
        (toy_dataset / name).write_bytes(b"left by an earlier version")
    _edit_episodes(toy_dataset, "length", lambda v: [v[0], v[1] + 1, v[2]])
    assert list(el.stale_episodes(toy_dataset)) == [1]


def test_a_dangling_episodes_file_warns_and_leaves_labels_unchecked(tmp_path):
    root = _v3(tmp_path / "ds")
    episodes = list(open_dataset(root).episodes)
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in episodes])
    # an episodes file the reader lists and cannot open (a symlink into a pruned cache)
    os.symlink(tmp_path / "pruned.parquet", root / "meta" / "episodes" / "chunk-000" / "file-009.parquet")
    clear_cache()  # a later process (this one's dataset cache does not see a file it cannot stat)
    with pytest.warns(UserWarning, match="file-009.parquet.*labels were not checked for staleness"):
        assert el.stale_episodes(root) == {}


def _corrupt_tasks(root: Path) -> None:
    (root / "meta" / "tasks.parquet").write_bytes(b"not parquet")


def _truncate_episodes_file(root: Path) -> None:
    path = sorted((root / "meta" / "episodes").glob("*/*.parquet"))[0]
    path.write_bytes(path.read_bytes()[:40])


@pytest.mark.parametrize("corrupt", [_corrupt_tasks, _truncate_episodes_file], ids=["tasks.parquet", "episodes file"])
def test_verdicts_on_a_dataset_the_reader_refuses_store_nothing(tmp_path, corrupt):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5], episodes_per_file=2)
    corrupt(root)
    with pytest.raises(DatasetError):
        el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    assert sorted(p.name for p in root.iterdir()) == ["data", "meta"]


def test_labels_of_a_dataset_the_reader_now_refuses_are_not_checked(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [3, 4, 5])
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in (0, 1, 2)])
    _corrupt_tasks(root)
    with pytest.warns(UserWarning, match="could not be opened"):
        assert el.stale_episodes(root) == {}

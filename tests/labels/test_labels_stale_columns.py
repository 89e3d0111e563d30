"""Stale detection by fingerprint columns: the same answer as the record-by-record rule,
the cached dataset columns go stale when ``meta/`` changes, and a sidecar without
fingerprints (another tool's) is never walked for staleness."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strands_robots import episode_labels as el
from strands_robots.dataset import light_fingerprints, open_dataset
from strands_robots.dataset.cache import clear_cache
from strands_robots.dataset.signature import metadata_digest
from strands_robots.dataset.stats import episode_content_digests
from strands_robots.episode_labels import index as index_module
from strands_robots.episode_labels import rows
from strands_robots.episode_labels import stale as stale_module
from strands_robots.episode_labels.fingerprint import Fingerprinter
from strands_robots.storage.record_store import WRITE_THROUGH_BYTES, Change
from tests.labels.helpers import TOY_VERDICTS

EPISODES_FILE = "meta/episodes/chunk-000/file-000.parquet"


def _forget_process_caches() -> None:
    """What a new process starts with (the files beside the sidecar stay)."""
    stale_module.clear_caches()
    index_module._memory.clear()
    clear_cache()


def _edit_episodes(root, column: str, fn) -> None:
    path = root / EPISODES_FILE
    table = pq.read_table(path)
    values = fn(table.column(column).to_pylist())
    table = table.set_column(
        table.column_names.index(column), column, pa.array(values, table.schema.field(column).type)
    )
    pq.write_table(table, path)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))


def _record_by_record(root) -> dict[int, str]:
    """The rule of ``Fingerprinter.stale_reason`` applied to every record."""
    fingerprinter = Fingerprinter(open_dataset(root))
    document = el.read_labels(root)
    stale = {}
    for key, record in document["episodes"].items():
        reason = fingerprinter.stale_reason(int(key), record.get("fingerprint"))
        if reason:
            stale[int(key)] = reason
    return stale


def _labelled(root) -> None:
    el.record_deterministic_verdicts(root, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(root, episode, quality="high")


def test_the_dataset_columns_give_the_per_episode_fingerprints(toy_dataset):
    dataset = open_dataset(toy_dataset)
    digests = episode_content_digests(toy_dataset)
    fingerprinter = Fingerprinter(dataset)
    for episode in dataset.episodes:
        info = dataset.episodes[episode]
        expected = {
            "length": info.length,
            "index_range": list(info.index_range),
            "tasks": list(info.tasks),
            "content": digests[episode],
        }
        assert fingerprinter(episode) == expected
    assert fingerprinter.many([2, 0]) == {2: fingerprinter(2), 0: fingerprinter(0)}


@pytest.mark.parametrize(
    ("column", "edit", "key"),
    [
        ("length", lambda v: [v[0], v[1] + 1, v[2]], "length"),
        ("dataset_to_index", lambda v: [v[0], v[1], v[2] + 5], "index_range"),
        ("tasks", lambda v: [v[0], ["Another task"], v[2]], "tasks"),
    ],
)
def test_columns_agree_with_the_record_by_record_rule(toy_dataset, column, edit, key):
    _labelled(toy_dataset)
    assert el.stale_episodes(toy_dataset) == {}
    _edit_episodes(toy_dataset, column, edit)
    _forget_process_caches()
    stale = el.stale_episodes(toy_dataset)
    assert stale == _record_by_record(toy_dataset)
    changed = 1 if column != "dataset_to_index" else 2
    assert list(stale) == [changed] and stale[changed].startswith(f"{key} was ")


def test_an_unusual_fingerprint_is_checked_record_by_record(toy_dataset):
    _labelled(toy_dataset)
    document = el.read_labels(toy_dataset)
    document["episodes"]["0"]["fingerprint"] = {"length": 1, "camera_serial": "X1"}  # a key the columns do not hold
    el.open_store(toy_dataset).transform(lambda _old: document)
    _forget_process_caches()
    stale = el.stale_episodes(toy_dataset)
    assert stale == _record_by_record(toy_dataset)
    assert stale[0] == f"length was 1 when labelled, now {open_dataset(toy_dataset).episodes[0].length}"


@pytest.mark.parametrize("form", ["json", "npz"])
def test_the_cached_dataset_columns_go_stale_when_meta_changes(toy_dataset, monkeypatch, form):
    if form == "npz":  # a large dataset's cache, read by the columnar index
        monkeypatch.setattr(stale_module, "JSON_CACHE_EPISODES", -1)
        monkeypatch.setattr(rows, "SMALL_BYTES", 0)
    _labelled(toy_dataset)
    assert el.filter_episodes(toy_dataset) == [0, 1]
    cache = toy_dataset / f".episode_labels.json.fingerprints.{form}"
    assert cache.is_file()
    assert len(list(toy_dataset.glob(".episode_labels.json.fingerprints.*"))) == 1
    # a new process with the cache beside the index does not open the dataset at all
    _forget_process_caches()
    opened = []
    real = stale_module.open_dataset_for_checks
    monkeypatch.setattr(stale_module, "open_dataset_for_checks", lambda root: opened.append(root) or real(root))
    import strands_robots.dataset.light_fingerprints as light

    read = []
    real_light = light.light_fingerprint_columns
    monkeypatch.setattr(light, "light_fingerprint_columns", lambda root: read.append(root) or real_light(root))
    assert el.filter_episodes(toy_dataset) == [0, 1]
    assert opened == [] and read == []
    # meta/ changes: the cache no longer applies, the metadata is read again (without the
    # dataset reader: well-formed metadata), the label is stale
    _edit_episodes(toy_dataset, "length", lambda v: [v[0] + 2, v[1], v[2]])
    _forget_process_caches()
    with pytest.warns(el.StaleLabelsWarning, match="length was"):
        assert el.filter_episodes(toy_dataset) == [1]
    assert len(read) == 1 and opened == []
    # and within one process too (no forgetting): restoring meta/ clears the staleness
    _edit_episodes(toy_dataset, "length", lambda v: [v[0] - 2, v[1], v[2]])
    assert el.stale_episodes(toy_dataset) == {}


def test_a_new_label_is_checked_without_rereading_the_dataset(toy_dataset, monkeypatch):
    _labelled(toy_dataset)
    assert el.stale_episodes(toy_dataset) == {}
    _edit_episodes(toy_dataset, "length", lambda v: [v[0], v[1], v[2] + 1])
    assert list(el.stale_episodes(toy_dataset)) == [2]
    el.annotate_episode(toy_dataset, 2, quality="low")  # the stored fingerprint stays the old one
    assert list(el.stale_episodes(toy_dataset)) == [2]
    el.record_deterministic_verdicts(toy_dataset, [TOY_VERDICTS[2]])  # re-recording refreshes it
    assert el.stale_episodes(toy_dataset) == {}


def test_typed_and_plain_index_builds_agree(tmp_path):
    """The typed one-pass build and the plain-dict build give the same columns."""
    rng = np.random.default_rng(3)
    verdicts = [{"episode": int(i), "success": bool(rng.random() < 0.6)} for i in rng.permutation(300)]
    el.record_deterministic_verdicts(tmp_path, verdicts)
    for i in range(0, 300, 3):
        el.annotate_episode(
            tmp_path, i, quality=("low", "medium", "high")[i % 3], success_opinion=bool(i % 2), model="m"
        )
    for row in el.list_disputes(tmp_path)[::4]:
        el.review_episode(tmp_path, row["episode"], decision="overrule_verdict", reviewer="r", quality="high")
    document = el.read_labels(tmp_path)
    for i in range(0, 300, 7):
        document["episodes"][str(i)]["fingerprint"] = {
            "length": i,
            "index_range": [i, i + 5],
            "tasks": ["a", "b"] if i % 2 else ["c"],
            "content": f"{i:016x}",
        }
    document["episodes"]["7"]["fingerprint"] = {"content": "short"}
    el.open_store(tmp_path).transform(lambda _old: document)
    data = (tmp_path / "episode_labels.json").read_bytes()
    typed, typed_tasks, typed_meta = index_module._build(data)
    plain, plain_tasks, plain_meta = index_module._build_from_document(el.read_labels(tmp_path))
    for name in index_module.COLUMNS:
        assert np.array_equal(typed[name], plain[name]), name
    assert typed_tasks == plain_tasks
    assert typed_meta is None and plain_meta is None  # no fingerprint names a metadata digest
    assert typed["fp_keys"][7] == index_module.FP_OTHER


def test_a_cold_filter_without_a_journal_computes_no_digest(tmp_path):
    """The sha256 of the canonical file is only needed to check a journal against it."""
    el.record_deterministic_verdicts(tmp_path, TOY_VERDICTS)
    el.annotate_episode(tmp_path, 1, quality="high")
    code = (
        "import hashlib, sys\n"
        "from strands_robots import episode_labels as el\n"
        "from strands_robots.episode_labels import index, rows\n"
        "rows.SMALL_BYTES = 0  # the columnar index (a small sidecar is read whole)\n"
        "calls = []\n"
        "real = hashlib.sha256\n"
        "hashlib.sha256 = lambda *a: calls.append(1) or real(*a)\n"
        f"assert el.filter_episodes({str(tmp_path)!r}) == [1]\n"
        "assert calls == [], calls\n"
        f"assert index._memory[str(el.open_store({str(tmp_path)!r}).path)].digest is None\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_fingerprints_of_many_episodes_are_each_episodes_fingerprint(toy_dataset):
    """``many`` (the columns read once) gives what one call per episode gives."""
    fingerprinter = Fingerprinter(open_dataset(toy_dataset))
    episodes = [2, 0, 1, 0]
    assert fingerprinter.many(episodes) == {e: fingerprinter(e) for e in episodes}
    columns = fingerprinter.columns
    assert columns.records(range(len(columns.episode))) == [columns.record(p) for p in range(len(columns.episode))]
    no_range = dataclasses.replace(columns, has_range=False, content=columns.content[:0])
    assert no_range.records([0, 1]) == [no_range.record(0), no_range.record(1)]


def _must_not_read(*args, **kwargs):
    raise AssertionError("the dataset's metadata was read")


def test_the_index_holds_the_one_metadata_digest_and_a_cold_check_reads_nothing(toy_dataset, monkeypatch):
    monkeypatch.setattr(rows, "SMALL_BYTES", 0)  # the columnar index, as for a large sidecar
    _labelled(toy_dataset)
    digest = metadata_digest(toy_dataset)
    store = el.open_store(toy_dataset)
    store.write_through_bytes = 0  # later writes go to the journal
    try:
        _forget_process_caches()
        assert index_module.label_index(store).fp_meta == digest
        for cache in toy_dataset.glob(".episode_labels.json.fingerprints.*"):
            cache.unlink()  # a copy without the files beside the sidecar
        os.utime(toy_dataset / EPISODES_FILE)  # touched, not changed
        _forget_process_caches()
        with monkeypatch.context() as patch:
            patch.setattr(light_fingerprints, "light_fingerprint_columns", _must_not_read)
            patch.setattr(stale_module, "open_dataset_for_checks", _must_not_read)
            assert el.stale_episodes(toy_dataset) == {}
            assert el.filter_episodes(toy_dataset) == [0, 1]
        # a journaled record whose fingerprint names no digest: the index no longer vouches
        document = el.read_labels(toy_dataset)
        hand = {k: v for k, v in document["episodes"]["1"]["fingerprint"].items() if k != "meta"}
        hand["length"] += 1  # and it is stale
        store.update(lambda doc: (doc["episodes"]["1"].__setitem__("fingerprint", hand), _change("1"))[1])
        assert store.journal.exists()
        index = index_module.label_index(store)
        assert index.fp_meta is None
        stale = el.stale_episodes(toy_dataset)
        assert list(stale) == [1] and stale[1].startswith("length was")
    finally:
        store.write_through_bytes = WRITE_THROUGH_BYTES


def _change(key):
    return Change(records=[key], fields=[]), None


def test_typed_and_plain_builds_agree_on_the_metadata_digest(tmp_path):
    el.record_deterministic_verdicts(tmp_path, TOY_VERDICTS)
    document = el.read_labels(tmp_path)
    for key in ("0", "1", "2"):
        document["episodes"][key]["fingerprint"] = {"length": 3, "meta": "6428cb071cf9bd53"}
    el.open_store(tmp_path).transform(lambda _old: document)
    data = (tmp_path / "episode_labels.json").read_bytes()
    assert index_module._build(data)[2] == "6428cb071cf9bd53"
    assert index_module._build_from_document(el.read_labels(tmp_path))[2] == "6428cb071cf9bd53"
    document["episodes"]["2"]["fingerprint"]["meta"] = "0000000000000000"  # two digests: none vouches
    el.open_store(tmp_path).transform(lambda _old: document)
    data = (tmp_path / "episode_labels.json").read_bytes()
    assert index_module._build(data)[2] is None
    assert index_module._build_from_document(el.read_labels(tmp_path))[2] is None


def test_a_sidecar_without_fingerprints_skips_the_stale_walk(toy_dataset, monkeypatch):
    """A file written by another tool (no fingerprints) beside meta/: filter never walks the
    whole document for staleness (that walk would load a 500 MB file into Python objects)."""
    from strands_robots.episode_labels import filtering

    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high")
    calls = []
    monkeypatch.setattr(filtering, "stale_episodes", lambda *a, **k: calls.append(1) or {})
    assert el.filter_episodes(toy_dataset) == [0, 1]
    assert calls == [1]  # our own records carry fingerprints: checked
    document = el.read_labels(toy_dataset)
    for record in document["episodes"].values():
        del record["fingerprint"]
    el.open_store(toy_dataset).transform(lambda _old: document)
    assert el.filter_episodes(toy_dataset) == [0, 1]
    assert calls == [1]  # no fingerprints: not walked

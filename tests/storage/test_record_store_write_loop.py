"""A process writing in a loop: what the write path skips, and that it never skips a change.

A store that appended to its journal knows the journal's stamp (device, inode, size, mtime,
ctime) as its own append left it; while the journal still has that stamp, nothing was
appended since and the next write reads nothing back (docs/performance.md, section 1,
"In-process cache"). Any other stamp is checked by the appended-only rule as before.
"""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots.errors import LabelValidationError, SidecarError
from strands_robots.storage import record_store
from strands_robots.storage.atomic import check_target
from strands_robots.storage.codec import dump_line, json_copy
from strands_robots.storage.jsonl import append_encoded, append_jsonl, read_jsonl
from tests.storage import store_helpers
from tests.storage.store_helpers import journal_store, put


def test_a_writer_in_a_loop_reads_nothing_back_and_every_write_is_in_the_journal(tmp_path, monkeypatch):
    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.update(put("0", 0))
    reads, checks = [], []
    real_read, real_check = record_store.read_lines, record_store.appended_since
    monkeypatch.setattr(record_store, "read_lines", lambda *a, **k: reads.append(a) or real_read(*a, **k))
    monkeypatch.setattr(record_store, "appended_since", lambda *a: checks.append(a) or real_check(*a))
    for i in range(1, 21):
        store.update(put(str(i % 7), i))
    assert reads == [] and checks == []
    expected = {str(k): {"v": max(i for i in range(21) if i % 7 == k)} for k in range(7)}
    assert store.read()["episodes"] == expected
    assert journal_store(path).read()["episodes"] == expected  # a new reader: from the journal on disk
    lines, _ = read_jsonl(store.journal)
    assert len(lines) == 22 and lines[0]["journal"] == 2  # header + 21 writes, one line each


def test_another_writers_append_is_read_even_after_a_write_of_ours(tmp_path, monkeypatch):
    path = tmp_path / "labels.json"
    ours, theirs = journal_store(path), journal_store(path)  # two processes' caches
    ours.update(put("1", 1))
    theirs.update(put("2", 2))  # the journal grew: our stamp is stale
    reads = []
    real_read = record_store.read_lines
    monkeypatch.setattr(
        record_store, "read_lines", lambda *a, **k: reads.append(k.get("offset", 0)) or real_read(*a, **k)
    )
    ours.update(put("3", 3))
    assert len(reads) == 1 and reads[0] > 0  # only the lines after our own offset were read
    assert ours.read()["episodes"] == {"1": {"v": 1}, "2": {"v": 2}, "3": {"v": 3}}


def test_a_journal_replaced_by_one_of_the_same_size_and_mtime_is_read_again(tmp_path):
    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.update(put("1", 1))
    store.update(put("2", 5))
    text = store.journal.read_bytes()
    st = os.stat(store.journal)
    other = tmp_path / "other"
    other.write_bytes(text.replace(b'{"v":5}', b'{"v":6}'))  # same length, another inode
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, store.journal)
    assert os.stat(store.journal).st_size == st.st_size and os.stat(store.journal).st_mtime_ns == st.st_mtime_ns
    assert store.read()["episodes"] == {"1": {"v": 1}, "2": {"v": 6}}


def test_a_fold_by_another_process_is_noticed(tmp_path):
    path = tmp_path / "labels.json"
    ours, theirs = journal_store(path), journal_store(path)
    ours.update(put("1", 1))
    theirs.update(put("2", 2))
    assert theirs.flush() is True  # the journal is gone, the canonical file rewritten
    ours.update(put("3", 3))
    assert json.loads(path.read_text())["episodes"] == {"1": {"v": 1}, "2": {"v": 2}}
    assert journal_store(path).read()["episodes"] == {"1": {"v": 1}, "2": {"v": 2}, "3": {"v": 3}}


ops = st.lists(
    st.tuples(st.sampled_from(["write", "read", "flush"]), st.integers(0, 2), st.integers(0, 4), st.integers(0, 99)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(steps=ops)
def test_three_processes_caches_always_read_what_was_written(tmp_path_factory, steps):
    """Writers, readers and folds interleaved over three caches of one file: every read
    of every cache gives every write so far."""
    path = tmp_path_factory.mktemp("loop") / "labels.json"
    stores = [journal_store(path) for _ in range(3)]
    model: dict[str, dict[str, int]] = {}
    for action, who, key, value in steps:
        store = stores[who]
        if action == "write":
            store.update(put(str(key), value))
            model[str(key)] = {"v": value}
        elif action == "flush":
            store.flush()
        assert store.read()["episodes"] == model
    assert journal_store(path).read()["episodes"] == model


def test_append_encoded_returns_the_files_stat_after_the_append(tmp_path):
    path = tmp_path / "log.jsonl"
    assert check_target(path) is False  # nothing there yet
    end, st = append_encoded(path, b'{"a":1}\n', valid_end=0)
    assert end == 8 and (st.st_ino, st.st_size) == (os.stat(path).st_ino, 8)
    assert check_target(path) is True
    with open(path, "ab") as handle:
        handle.write(b'{"torn')  # a crash mid-append
    end, st = append_encoded(path, b'{"b":2}\n', valid_end=8)
    assert end == 16 and st.st_size == 16 and path.read_bytes() == b'{"a":1}\n{"b":2}\n'
    assert append_jsonl(path, [{"c": 3}]) == 24
    assert read_jsonl(path)[0] == [{"a": 1}, {"b": 2}, {"c": 3}]


def test_append_encoded_refuses_a_symlink_and_writes_nothing(tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_bytes(b"")
    link = tmp_path / "log.jsonl"
    link.symlink_to(target)
    with pytest.raises(SidecarError, match="symbolic link"):
        append_encoded(link, b'{"a":1}\n', valid_end=0)
    assert target.read_bytes() == b""


json_values = store_helpers.json_values(max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_dump_line_is_byte_for_byte_json_dumps(value):
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    assert dump_line(value) == (text + "\n").encode("utf-8")


def _containers(value):
    if isinstance(value, dict | list):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_json_copy_is_an_equal_value_sharing_no_dict_or_list(value):
    copy = json_copy(value)
    assert copy == value and dump_line(copy) == dump_line(value)
    originals = {id(c) for c in _containers(value)}
    assert not any(id(c) in originals for c in _containers(copy))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_dump_line_refuses_a_non_finite_number_inside_a_record(bad):
    with pytest.raises(LabelValidationError, match="NaN or infinite"):
        dump_line({"op": "put", "record": {"cumulative_reward": bad}})


def test_dump_line_refuses_a_lone_surrogate():
    with pytest.raises(LabelValidationError, match="not valid Unicode"):
        dump_line({"note": "\ud800"})


def test_a_torn_tail_left_by_another_writer_is_cut_off_by_the_next_write(tmp_path):
    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.update(put("1", 1))
    size = os.stat(store.journal).st_size
    with open(store.journal, "ab") as handle:
        handle.write(b'{"op":"put","key":"2","rec')  # another writer killed mid-append
    store.update(put("3", 3))
    lines = store.journal.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(line.startswith(b"{") for line in lines[:-1])
    assert os.stat(store.journal).st_size > size
    assert journal_store(path).read()["episodes"] == {"1": {"v": 1}, "3": {"v": 3}}


def test_a_symlink_put_at_the_journals_path_is_refused_not_written_through(tmp_path):
    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.update(put("1", 1))
    elsewhere = tmp_path / "elsewhere"
    os.replace(store.journal, elsewhere)
    store.journal.symlink_to(elsewhere)  # the same bytes, reached through a link
    before = elsewhere.read_bytes()
    with pytest.raises(SidecarError, match="symbolic link"):
        store.update(put("2", 2))
    assert elsewhere.read_bytes() == before
    store.journal.unlink()
    os.replace(elsewhere, store.journal)  # put back: the write that returned is still there
    assert store.read()["episodes"] == {"1": {"v": 1}}
    assert store.flush() is True

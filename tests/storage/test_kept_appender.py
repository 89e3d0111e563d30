"""The journal kept open between appends: one open for a loop of writes, never a write to a
file that is no longer at the path, a bounded number of descriptors, none inherited by a fork."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from strands_robots.storage import jsonl
from strands_robots.storage.jsonl import KeptAppender, read_jsonl
from tests.storage.store_helpers import journal_store, put


def _open_files(under: Path) -> list[str]:
    fd_dir = f"/proc/{os.getpid()}/fd"
    targets = []
    for fd in os.listdir(fd_dir):
        with contextlib.suppress(FileNotFoundError):
            targets.append(os.readlink(os.path.join(fd_dir, fd)))
    return sorted(t for t in targets if t.startswith(str(under)))


def test_a_loop_of_writes_opens_the_journal_once(tmp_path, monkeypatch):
    path = tmp_path / "labels.json"
    store = journal_store(path)
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    for i in range(20):
        store.update(put(str(i), i))
    assert opened.count(str(store.journal)) == 1
    assert _open_files(tmp_path).count(str(store.journal)) == 1
    assert len(read_jsonl(store.journal)[0]) == 21  # header + 20 lines
    assert journal_store(path).read()["episodes"] == {str(i): {"v": i} for i in range(20)}


def test_a_journal_folded_by_another_process_is_never_written_through_the_old_descriptor(tmp_path):
    path = tmp_path / "labels.json"
    ours, theirs = journal_store(path), journal_store(path)
    ours.update(put("1", 1))
    theirs.update(put("2", 2))
    assert theirs.flush() is True  # the journal ours holds open is unlinked
    ours.update(put("3", 3))  # a new journal
    assert [line.get("key") for line in read_jsonl(ours.journal)[0]] == [None, "3"]
    assert not any(t.endswith("(deleted)") for t in _open_files(tmp_path))
    assert journal_store(path).read()["episodes"] == {"1": {"v": 1}, "2": {"v": 2}, "3": {"v": 3}}


def test_a_fold_closes_the_journal(tmp_path):
    store = journal_store(tmp_path / "labels.json")
    store.update(put("1", 1))
    assert str(store.journal) in _open_files(tmp_path)
    assert store.flush() is True
    assert str(store.journal) not in _open_files(tmp_path) and not store.journal.exists()


def test_idle_journals_are_closed_beyond_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_OPEN_APPENDERS", 4)
    stores = [journal_store(tmp_path / f"s{i}.json") for i in range(10)]
    for i, store in enumerate(stores):
        store.update(put("0", i))
    journals = [t for t in _open_files(tmp_path) if t.endswith(".journal")]
    assert len(journals) == 4 and str(stores[-1].journal) in journals
    for i, store in enumerate(stores):  # the closed ones reopen their file
        store.update(put("1", i))
        assert journal_store(store.path).read()["episodes"] == {"0": {"v": i}, "1": {"v": i}}
    for store in stores:
        store.flush()


def test_a_forked_child_closes_the_journals_it_inherited(tmp_path):
    store = journal_store(tmp_path / "labels.json")
    store.update(put("1", 1))
    assert str(store.journal) in _open_files(tmp_path)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's exit code is the assertion
        os._exit(0 if str(store.journal) not in _open_files(tmp_path) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    store.update(put("2", 2))  # the parent's descriptor is still its own
    assert journal_store(store.path).read()["episodes"] == {"1": {"v": 1}, "2": {"v": 2}}
    store.flush()


def test_an_appender_told_nothing_looks_the_file_up_and_cuts_a_torn_tail(tmp_path):
    path = tmp_path / "log.jsonl"
    appender = KeptAppender(path)
    end, st = appender.append(b'{"a":1}\n', valid_end=0)
    assert end == 8 and st.st_size == 8
    with open(path, "ab") as handle:
        handle.write(b'{"to')
    end, st = appender.append(b'{"b":2}\n', valid_end=8)  # not known: fstat finds the torn tail
    assert end == 16 and path.read_bytes() == b'{"a":1}\n{"b":2}\n'
    end, _ = appender.append(b'{"c":3}\n', valid_end=16, known=(st.st_dev, st.st_ino))
    assert end == 24 and read_jsonl(path)[0] == [{"a": 1}, {"b": 2}, {"c": 3}]
    appender.close()
    assert str(path) not in _open_files(tmp_path)

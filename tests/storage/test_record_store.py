"""The shared storage layer: journal, fold, stale journals, torn tails, a copied directory's
journal, failed writes."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.errors import SidecarError, StorageError
from strands_robots.storage.atomic import atomic_write_bytes
from strands_robots.storage.codec import dump_canonical
from strands_robots.storage.record_store import Change, RecordStore
from strands_robots.storage.side_files import conflicts_path, journal_path
from tests.storage.store_helpers import journal_store, put


def _validate(document, path):
    if not isinstance(document, dict) or document.get("schema_version") != 1:
        raise SidecarError(f"{path} is foreign")


def _store(path: Path, write_through: int = 0) -> RecordStore:
    return RecordStore(
        path,
        validate=_validate,
        empty=lambda: {"schema_version": 1, "episodes": {}},
        write_through_bytes=write_through,
    )


def _put(key: str, value: int):
    def mutate(document):
        document["episodes"][key] = {"v": value}
        return Change(records=[key], fields=[]), None

    return mutate


def test_small_documents_are_written_through(tmp_path):
    store = _store(tmp_path / "labels.json", write_through=1 << 20)
    store.update(_put("1", 1))
    assert json.loads((tmp_path / "labels.json").read_text())["episodes"] == {"1": {"v": 1}}
    assert not store.journal.exists()


def test_journal_entries_are_merged_by_a_fresh_reader_and_folded_on_flush(tmp_path):
    path = tmp_path / "labels.json"
    first = _store(path, write_through=1 << 20)
    first.update(_put("0", 0))  # creates the canonical file (write-through while empty)
    writer = _store(path)
    for i in range(1, 4):
        writer.update(_put(str(i), i))
    assert writer.journal.exists()
    assert json.loads(path.read_text())["episodes"] == {"0": {"v": 0}}  # canonical not yet rewritten
    reader = _store(path)
    assert reader.read()["episodes"] == {str(i): {"v": i} for i in range(4)}
    assert reader.flush() is True
    assert not writer.journal.exists()
    assert json.loads(path.read_text())["episodes"] == {str(i): {"v": i} for i in range(4)}
    writer.update(_put("4", 4))  # the writer's cache notices the fold
    assert _store(path).read()["episodes"]["4"] == {"v": 4}


def test_a_journal_for_a_file_rewritten_in_place_keeps_its_entries_as_conflicts(tmp_path):
    path = tmp_path / "labels.json"
    _store(path, write_through=1 << 20).update(_put("0", 0))
    writer = _store(path)
    writer.update(_put("1", 1))
    # another tool rewrites the canonical file in place (same inode): the journal's base is lost
    newer = {"schema_version": 1, "episodes": {"7": {"v": 7}}}
    path.write_bytes(dump_canonical(newer))
    os.utime(path, ns=(1, 1))
    assert _store(path).read()["episodes"] == {"7": {"v": 7}}  # never replayed blindly
    assert not writer.journal.exists()
    conflicts = [json.loads(line) for line in (conflicts_path(tmp_path / "labels.json")).read_text().splitlines()]
    assert [(c["key"], c["ours"], c["theirs"], c["base_known"]) for c in conflicts] == [("1", {"v": 1}, None, False)]


def test_a_torn_journal_tail_is_ignored_and_cut_off(tmp_path):
    path = tmp_path / "labels.json"
    _store(path, write_through=1 << 20).update(_put("0", 0))
    writer = _store(path)
    writer.update(_put("1", 1))
    with open(writer.journal, "ab") as handle:
        handle.write(b'{"op": "put", "key": "2", "rec')  # a crash mid-append
    assert _store(path).read()["episodes"] == {"0": {"v": 0}, "1": {"v": 1}}
    _store(path).update(_put("3", 3))
    lines = writer.journal.read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)
    assert _store(path).read()["episodes"] == {"0": {"v": 0}, "1": {"v": 1}, "3": {"v": 3}}


def test_a_copied_dataset_keeps_journaled_labels(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(3000)])
    el.annotate_episode(root, 5, quality="low", note="journaled")
    assert (journal_path(root / "episode_labels.json")).exists()
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)  # new inodes and mtimes, same bytes
    assert el.read_labels(copy)["episodes"]["5"]["judge"]["note"] == "journaled"
    assert not list(copy.glob("*.stale-*"))


def test_failed_replace_leaves_file_and_directory_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "labels.json"
    path.write_bytes(b"old\n")

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(StorageError, match="free disk space"):
        atomic_write_bytes(path, b"new\n")
    assert path.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.json"]


def test_failed_journal_append_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "labels.json"
    _store(path, write_through=1 << 20).update(_put("0", 0))
    store = _store(path)
    store.update(_put("1", 1))
    journal_before = store.journal.read_bytes()
    real_fsync = os.fdatasync

    def failing_fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", failing_fsync)
    with pytest.raises(StorageError):
        store.update(_put("2", 2))
    monkeypatch.setattr(os, "fdatasync", real_fsync)
    assert store.journal.read_bytes() == journal_before
    assert _store(path).read()["episodes"] == {"0": {"v": 0}, "1": {"v": 1}}


@pytest.mark.parametrize("kind", ["symlink", "directory"])
def test_symlink_or_directory_sidecar_is_refused(tmp_path, kind):
    path = tmp_path / "labels.json"
    if kind == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_bytes(dump_canonical({"schema_version": 1, "episodes": {}}))
        path.symlink_to(target)
    else:
        path.mkdir()
    with pytest.raises(SidecarError, match="symbolic link|directory"):
        _store(path).update(_put("0", 0))


def test_the_cached_identity_is_the_one_of_the_bytes_read(tmp_path, monkeypatch):
    """Another tool replacing the file while we parse it: the cache pairs the bytes read with
    that file's identity (fstat of the open descriptor), so our next write reads the new file
    and keeps the other tool's record."""
    from strands_robots.storage import record_store

    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.write_through_bytes = 1 << 30  # write-through: each write rewrites the whole file
    store.update(put("1", 1))
    real = record_store.load_json_bytes
    replaced = []

    def other_tool_replaces_it(data, where):
        if not replaced:
            replaced.append(1)
            other = json.loads(path.read_text())
            other["episodes"]["2"] = {"v": "theirs"}
            tmp = tmp_path / "other.tmp"
            tmp.write_text(json.dumps(other))
            os.replace(tmp, path)
        return real(data, where)

    store = journal_store(path)
    store.write_through_bytes = 1 << 30
    monkeypatch.setattr(record_store, "load_json_bytes", other_tool_replaces_it)
    assert "2" not in store.read()["episodes"]  # parsed the bytes it read
    monkeypatch.setattr(record_store, "load_json_bytes", real)
    store.update(put("3", 3))
    assert json.loads(path.read_text())["episodes"] == {"1": {"v": 1}, "2": {"v": "theirs"}, "3": {"v": 3}}


def test_a_replacement_just_after_the_open_is_never_paired_with_the_old_bytes(tmp_path, monkeypatch):
    """The identity must come from the descriptor the bytes were read from, not from a second
    look at the path: another tool replaces the file the instant our reader has opened it
    (hooked at the open itself, ``os.open`` or ``io.open``, whichever the reader uses), so a
    reader that stats the path anywhere after opening it (before the read, after it, after
    parsing) pairs the new file's identity with the old bytes. While a journal is pending the
    cache is trusted as long as that identity holds, so every later read (a review server's,
    for minutes) would serve the old bytes without the other tool's record."""
    import io

    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.update(put("1", 1))
    store.flush()  # the canonical file holds 1
    store.update(put("4", 4))  # a pending journal entry on top of it
    store = journal_store(path)  # a fresh reader (another process, a restarted server)
    replaced: list[int] = []

    def other_tool_replaces_it() -> None:  # as strands-robots 0.5.3 does: read, add, replace
        replaced.append(1)  # first: the other tool's own reads and writes are not hooked
        other = json.loads(path.read_bytes())
        other["episodes"]["2"] = {"v": "theirs"}
        tmp = tmp_path / "other.tmp"
        tmp.write_text(json.dumps(other))
        os.replace(tmp, path)

    def ours(target) -> bool:
        return not replaced and not isinstance(target, int) and os.fspath(target) == os.fspath(path)

    real_os_open, real_io_open = os.open, io.open

    def os_open(target, flags, *args, **kwargs):
        fd = real_os_open(target, flags, *args, **kwargs)
        if ours(target) and not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            other_tool_replaces_it()
        return fd

    def io_open(target, mode="r", *args, **kwargs):
        handle = real_io_open(target, mode, *args, **kwargs)
        if ours(target) and set(mode) <= set("rbt"):
            other_tool_replaces_it()
        return handle

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)

    def episodes(document):  # a cached read, as the label index and the pages do
        return sorted(document["episodes"])

    assert store.query(episodes) == ["1", "4"]  # the bytes it opened, and the journal
    monkeypatch.undo()
    assert replaced == [1]  # the other tool did replace the file between our open and the end of our read
    assert store.query(episodes) == ["1", "2", "4"]
    assert store.read()["episodes"] == {"1": {"v": 1}, "2": {"v": "theirs"}, "4": {"v": 4}}
    store.update(put("3", 3))
    store.flush()
    assert json.loads(path.read_bytes())["episodes"] == {
        "1": {"v": 1},
        "2": {"v": "theirs"},
        "3": {"v": 3},
        "4": {"v": 4},
    }


def test_a_file_replaced_between_the_check_and_the_rename_is_merged_not_lost(tmp_path, monkeypatch):
    """Another tool without a lock (strands-robots 0.5.3) renames its file over ours right after
    our last check and right before our own rename: its record must survive our write (the
    rename exchanges the two files, so the one displaced is read and merged)."""
    from strands_robots.storage import atomic

    path = tmp_path / "labels.json"
    store = journal_store(path)
    store.write_through_bytes = 1 << 30
    store.update(put("1", 1))
    real_replace, real_rename_with = os.replace, atomic.rename_with
    interfered = []

    def other_tool_writes_first(source) -> None:
        if interfered or Path(source).name == "other.tmp":  # only our own temp file, once
            return
        interfered.append(1)
        other = json.loads(path.read_text())
        other["episodes"]["2"] = {"v": "theirs"}
        (tmp_path / "other.tmp").write_text(json.dumps(other))
        real_replace(tmp_path / "other.tmp", path)

    def replace(source, target, *args, **kwargs):
        other_tool_writes_first(source)
        return real_replace(source, target, *args, **kwargs)

    def rename_with(source, target, flags):
        other_tool_writes_first(source)
        return real_rename_with(source, target, flags)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(atomic, "rename_with", rename_with)
    store.update(put("3", 3))
    assert interfered
    assert json.loads(path.read_text())["episodes"] == {"1": {"v": 1}, "2": {"v": "theirs"}, "3": {"v": 3}}
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_an_exchange_hands_over_the_file_it_displaced(tmp_path):
    from strands_robots.storage.atomic import atomic_write_chunks

    path = tmp_path / "f.json"
    path.write_bytes(b"before\n")
    seen = []

    def swap_in_another(_written) -> bool:
        (tmp_path / "x").write_bytes(b"another tool\n")
        os.replace(tmp_path / "x", path)
        return True

    digest = atomic_write_chunks(
        path, [b"ours\n"], before_replace=swap_in_another, displaced=lambda name: seen.append(Path(name).read_bytes())
    )
    assert digest is not None and path.read_bytes() == b"ours\n"
    assert seen == [b"another tool\n"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]

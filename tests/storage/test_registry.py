"""One process registry for every store type, emptied in a forked child (so forked pool
workers write with their own locks and stores); the store's public journal view used by the
label index."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import warnings
from pathlib import Path

from strands_robots import episode_labels as el
from strands_robots.episode_labels.document import open_store
from strands_robots.outcomes.store import OutcomeStore
from strands_robots.storage.record_store import RecordStore
from tests.processes import in_new_process


def test_every_store_type_is_one_instance_per_file_and_fresh_in_a_fork(tmp_path):
    outcome = OutcomeStore.open(tmp_path / "episode_outcomes.jsonl")
    assert OutcomeStore.open(str(tmp_path / "." / "episode_outcomes.jsonl")) is outcome
    labels = open_store(tmp_path)
    assert open_store(tmp_path) is labels and isinstance(labels, RecordStore)

    def child() -> tuple[bool, bool, bool]:
        fresh = OutcomeStore.open(tmp_path / "episode_outcomes.jsonl")
        return fresh is outcome, open_store(tmp_path) is labels, OutcomeStore.open(fresh.path) is fresh

    assert in_new_process(child) == (False, False, True)  # its own instances, still one per file
    assert OutcomeStore.open(tmp_path / "episode_outcomes.jsonl") is outcome  # the parent keeps its own


def _annotate_in_child(args: tuple[str, int]) -> str:
    root, episode = args
    return el.annotate_episode(root, episode, quality="high")["judge"]["quality"]


def test_forked_pool_workers_can_write(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(4)])
    el.filter_episodes(root)  # the parent holds cached locks and stores before forking
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a threaded process
        with mp.get_context("fork").Pool(2) as pool:
            assert pool.map(_annotate_in_child, [(str(root), i) for i in range(4)]) == ["high"] * 4
    assert el.filter_episodes(root) == [0, 1, 2, 3]


def test_journal_tail_gives_the_ops_since_an_offset_and_none_for_a_replaced_file(tmp_path):
    el.record_deterministic_verdicts(tmp_path, [{"episode": i, "success": True} for i in range(3)])
    store = open_store(tmp_path)
    store.write_through_bytes = 0  # journal every write
    el.annotate_episode(tmp_path, 1, quality="high")
    with store.reading():
        digest = hashlib.sha256(store.path.read_bytes()).hexdigest()
        tail = store.journal_tail(lambda: digest, None, 0)
        assert tail is not None and tail.ino == os.stat(store.journal).st_ino
        assert [op["key"] for op in tail.ops if op.get("op") == "put"] == ["1"]
        assert store.journal_tail(lambda: digest, tail.ino, tail.end).ops == []
        assert store.journal_tail(lambda: "0" * 64, None, 0) is None  # written for another canonical file
    el.flush(tmp_path)
    with store.reading():
        assert store.journal_tail(lambda: digest, None, 0).ino is None


def test_an_absolute_path_seen_before_finds_the_instance_abspath_finds(tmp_path, monkeypatch):
    from strands_robots.storage.registry import ProcessRegistry

    registry: ProcessRegistry[list[str]] = ProcessRegistry()
    made: list[str] = []

    def factory(path):
        made.append(str(path))
        return [str(path)]

    target = tmp_path / "s.json"
    first = registry.get(target, factory)
    assert registry.get(Path(str(target)), factory) is first  # another Path object, same text
    assert registry.get(str(target), factory) is first
    assert registry.get(tmp_path / "x" / ".." / "s.json", factory) is first  # normalised like abspath
    monkeypatch.chdir(tmp_path)
    assert registry.get(Path("s.json"), factory) is first  # relative: through abspath
    assert made == [str(target)] and first == [str(target)]
    assert in_new_process(lambda: registry.get(target, factory) is first) is False  # a forked child starts empty

"""episode_outcomes.jsonl: append-only, crash-safe, the fingerprint kept out
of the public label, incremental index (what every store promises is tests/storage/test_store_contract.py's)."""

from __future__ import annotations

import json
import multiprocessing
import os

from strands_robots.outcomes import (
    current_outcomes,
    get_outcome,
    outcome_history,
    outcomes_path,
    set_outcome,
)
from strands_robots.outcomes import store as store_module
from strands_robots.outcomes.store import HEADER, OutcomeStore
from strands_robots.storage.jsonl import append_jsonl
from tests.processes import in_new_process


def test_every_version_is_appended_never_rewritten(dataset, doc_label):
    set_outcome(dataset, 0, **doc_label)
    first = outcomes_path(dataset).read_bytes()
    set_outcome(dataset, 0, outcome="failure")
    set_outcome(dataset, 3, outcome="aborted")
    data = outcomes_path(dataset).read_bytes()
    assert data.startswith(first)
    assert len(data.splitlines()) == 4  # header + 3 versions


def test_a_torn_tail_is_ignored_and_cut_off_by_the_next_write(dataset):
    set_outcome(dataset, 3, outcome="failure")
    path = outcomes_path(dataset)
    good = path.read_bytes()
    with open(path, "ab") as handle:  # a crash in the middle of an append
        handle.write(b'{"kind":"outcome","episode_index":4,"uid":"torn')

    def a_new_process() -> list[int]:
        episodes = list(current_outcomes(dataset))
        set_outcome(dataset, 4, outcome="aborted")
        return episodes

    assert in_new_process(a_new_process) == [3]
    data = path.read_bytes()
    assert data.startswith(good) and b"torn" not in data
    assert [json.loads(line)["kind"] for line in data.splitlines()] == ["header", "outcome", "outcome"]
    assert in_new_process(lambda: get_outcome(dataset, 4)["outcome"]) == "aborted"


def test_the_fingerprint_is_stored_but_not_part_of_the_label(dataset):
    set_outcome(dataset, 3, outcome="failure")
    stored = OutcomeStore.open(outcomes_path(dataset)).refresh().current(3)
    assert stored["fingerprint"]["length"] == 90
    assert "fingerprint" not in get_outcome(dataset, 3)  # the public label keeps its fields


def test_the_index_reads_only_the_appended_tail(dataset, monkeypatch):
    offsets: list[int] = []
    real = store_module.read_jsonl

    def spy(path, *, offset=0):
        offsets.append(offset)
        return real(path, offset=offset)

    monkeypatch.setattr(store_module, "read_jsonl", spy)
    set_outcome(dataset, 3, outcome="failure")
    size = outcomes_path(dataset).stat().st_size
    offsets.clear()
    for _ in range(3):
        current_outcomes(dataset)
    assert offsets == []  # nothing new: no read at all
    # another writer (a separate store instance stands for another process) appends a version
    other = OutcomeStore(outcomes_path(dataset))
    other.write(lambda s: ([{**s.current(3), "version": 2, "outcome": "aborted"}], None))
    offsets.clear()
    assert get_outcome(dataset, 3)["outcome"] == "aborted"
    assert offsets == [size]  # only the new line was read


def test_a_replaced_file_is_read_again(dataset):
    set_outcome(dataset, 3, outcome="failure")
    set_outcome(dataset, 4, outcome="failure")
    path = outcomes_path(dataset)
    lines = path.read_bytes().splitlines(keepends=True)
    tmp = path.with_name("replacement")
    tmp.write_bytes(lines[0] + lines[2])  # only episode 4 left, new inode
    os.replace(tmp, path)
    assert list(current_outcomes(dataset)) == [4]


def _label_many(args):
    root, episodes = args
    for episode in episodes:
        for outcome in ("failure", "slow_success"):
            set_outcome(root, episode, outcome=outcome)


def test_concurrent_writers_lose_nothing(dataset):
    jobs = [(str(dataset), [3, 4, 5]), (str(dataset), [6, 7, 8]), (str(dataset), [3, 9])]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        pool.map(_label_many, jobs)
    current = current_outcomes(dataset)
    assert sorted(current) == [3, 4, 5, 6, 7, 8, 9]
    assert all(label["outcome"] == "slow_success" for label in current.values())
    assert [h["version"] for h in outcome_history(dataset, 3)] == [4, 3, 2, 1]
    assert [h["version"] for h in outcome_history(dataset, 5)] == [2, 1]


def test_reading_every_current_label_is_linear(tmp_path, monkeypatch):
    """20,000 labelled episodes with 2 versions each: one parse, then only the new lines."""
    path = tmp_path / "episode_outcomes.jsonl"
    base = {
        "kind": "outcome",
        "uid": "u",
        "outcome": "failure",
        "subtasks": [],
        "hand_actions": {"left": [], "right": []},
        "leakage_groups": {},
        "source_metadata": {},
        "source": "human",
    }
    records = [HEADER]
    for version in (1, 2):
        records += [{**base, "episode_index": e, "version": version} for e in range(20_000)]
    append_jsonl(path, records)
    parsed = []
    real = store_module.read_jsonl

    def counting(*args, **kwargs):
        lines, end = real(*args, **kwargs)
        parsed.append(len(lines))
        return lines, end

    monkeypatch.setattr(store_module, "read_jsonl", counting)
    first = current_outcomes(tmp_path)
    again = current_outcomes(tmp_path)
    assert len(first) == len(again) == 20_000 and first[19_999]["version"] == 2
    assert parsed == [40_001]  # the header and every line once; the second read parses nothing
    append_jsonl(path, [{**base, "episode_index": 7, "version": 3}])
    assert current_outcomes(tmp_path)[7]["version"] == 3
    assert parsed == [40_001, 1]  # only the appended line

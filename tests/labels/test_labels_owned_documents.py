"""Documents handed to callers are theirs: mutating them never changes the store, whether
the call parsed the file (handed over without a copy) or found it cached (a copy)."""

from __future__ import annotations

import os

from strands_robots import episode_labels as el
from strands_robots.storage.record_store import WRITE_THROUGH_BYTES


def _verdicts(n: int) -> list[dict]:
    return [{"episode": i, "success": i % 2 == 0, "steps": 300, "seed": i} for i in range(n)]


def test_read_labels_cold_and_warm_are_the_callers(tmp_path):
    el.record_deterministic_verdicts(tmp_path, _verdicts(3))
    sidecar = tmp_path / "episode_labels.json"
    copy = tmp_path / "copy.json"
    copy.write_bytes(sidecar.read_bytes())
    os.replace(copy, sidecar)  # the same bytes under a new inode: the next read parses the file
    first = el.read_labels(tmp_path)
    first["episodes"]["0"]["deterministic"]["success"] = "mutated"
    first["episodes"].clear()
    el.annotate_episode(tmp_path, 1, quality="high")  # warms the cache
    second = el.read_labels(tmp_path)  # a copy of the cache
    second["episodes"]["1"]["judge"]["quality"] = "mutated"
    third = el.read_labels(tmp_path)
    assert third["episodes"]["0"]["deterministic"]["success"] is True
    assert third["episodes"]["1"]["judge"]["quality"] == "high"
    assert len(third["episodes"]) == 3


def test_the_document_record_deterministic_verdicts_returns_is_the_callers(tmp_path):
    n = 2000  # large enough to journal
    returned = el.record_deterministic_verdicts(tmp_path, _verdicts(n))
    assert (tmp_path / "episode_labels.json").stat().st_size > WRITE_THROUGH_BYTES
    again = el.record_deterministic_verdicts(tmp_path, [{"episode": 5, "success": False}])
    assert again["episodes"]["5"]["deterministic"] == {"success": False, "failure": False}
    returned["episodes"]["7"]["deterministic"]["success"] = "mutated"
    again["episodes"]["8"]["deterministic"]["success"] = "mutated"
    document = el.read_labels(tmp_path)
    assert document["episodes"]["7"]["deterministic"]["success"] is False
    assert document["episodes"]["8"]["deterministic"]["success"] is True
    assert document["episodes"]["5"]["deterministic"]["success"] is False
    el.flush(tmp_path)
    assert el.read_labels(tmp_path)["episodes"]["5"]["deterministic"] == {"success": False, "failure": False}

"""JSON nested deeper than the format can hold is a SidecarError, never a RecursionError: in
the sidecar it is refused untouched; in one journal line it is kept aside as other bad lines
are, and the acknowledged labels around it stay reachable."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.episode_labels.document import open_store
from strands_robots.errors import SidecarError
from strands_robots.storage.codec import load_json_bytes
from strands_robots.storage.side_files import journal_path, rejected_path
from tests.processes import in_new_process

DEEP = "[" * 10_000 + "]" * 10_000  # 20 KB: 10 KB of opening brackets


def test_deep_nesting_is_a_sidecar_error():
    with pytest.raises(SidecarError, match="nested deeper"):
        load_json_bytes(DEEP.encode(), "x.json")


def test_a_deeply_nested_sidecar_is_refused_by_every_reader(tmp_path):
    data = ('{"schema_version": 1, "benchmark": "", "episodes": {"0": ' + DEEP + "}}").encode()
    (tmp_path / "episode_labels.json").write_bytes(data)
    for call in (lambda: el.read_labels(tmp_path), lambda: el.filter_episodes(tmp_path), lambda: el.flush(tmp_path)):
        with pytest.raises(SidecarError, match="nested deeper"):
            call()
    for command in (["show", str(tmp_path)], ["filter", str(tmp_path)], ["flush", str(tmp_path)]):
        result = CliRunner().invoke(app, command)  # main() prints a SidecarError's message and exits 2
        assert isinstance(result.exception, SidecarError) and "nested deeper" in str(result.exception), command
    assert (tmp_path / "episode_labels.json").read_bytes() == data


def test_a_deeply_nested_journal_line_is_kept_aside_and_the_pending_labels_stay(tmp_path):
    el.record_deterministic_verdicts(tmp_path, [{"episode": i, "success": True} for i in range(3)])
    open_store(tmp_path).write_through_bytes = 0
    el.annotate_episode(tmp_path, 0, quality="high", note="before")
    with open(journal_path(tmp_path / "episode_labels.json"), "ab") as handle:
        handle.write(('{"op": "put", "key": "1", "record": ' + DEEP + "}\n").encode())
    el.annotate_episode(tmp_path, 2, quality="low", note="after")
    # a new process reads the journal from disk
    episodes, flushed = in_new_process(lambda: (el.read_labels(tmp_path)["episodes"], el.flush(tmp_path)))
    assert episodes["0"]["judge"]["note"] == "before" and episodes["2"]["judge"]["note"] == "after"
    assert "judge" not in episodes["1"]
    assert flushed is True
    (kept,) = rejected_path(tmp_path / "episode_labels.json").read_text().splitlines()
    assert json.loads(kept)["reason"] == "the line is not valid JSON"
    on_disk = json.loads((tmp_path / "episode_labels.json").read_text())["episodes"]
    assert on_disk["0"]["judge"]["note"] == "before" and on_disk["2"]["judge"]["note"] == "after"

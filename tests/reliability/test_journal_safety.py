"""The journal never loses an acknowledged label and never folds a bad line.

- every journal line is screened before it is applied: a bad line is skipped, kept in
  ``.episode_labels.json.journal.rejected`` and never folded into the canonical file;
- when another tool (strands-robots 0.5.3 writes with a temp file + ``os.replace``)
  rewrites the file while our journal has pending entries, they are merged per record;
- a batch is all or nothing even when the append and the cut-back both fail;
- a fold that fails after a durable append does not report the write as failed.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.episode_labels.document import open_store
from strands_robots.errors import SidecarError, StorageError
from strands_robots.storage import atomic, record_store
from strands_robots.storage.side_files import conflicts_path, journal_path, rejected_path

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A sidecar with verdicts for episodes 0-5, judge labels on 0 and 1, in journal mode."""
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": i != 3} for i in range(6)], benchmark="b")
    el.annotate_episodes(root, [{"episode": 0, "quality": "high"}, {"episode": 1, "quality": "low"}])
    store = open_store(root)
    store.write_through_bytes = 0  # every later write goes to the journal
    yield root
    store.write_through_bytes = record_store.WRITE_THROUGH_BYTES


def journal(root: Path) -> Path:
    return journal_path(root / "episode_labels.json")


def canonical(root: Path) -> dict:
    return json.loads((root / "episode_labels.json").read_text())


def append_line(root: Path, line: bytes) -> None:
    with open(journal(root), "ab") as handle:
        handle.write(line + b"\n")


def other_tool_write(root: Path, document: dict) -> None:
    """Write the sidecar as strands-robots 0.5.3 does: temp file in the directory + os.replace."""
    path = root / "episode_labels.json"
    fd, tmp = tempfile.mkstemp(dir=root, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
    os.replace(tmp, path)


GOOD = {"episode_index": 4, "deterministic": {"success": True}, "judge": {"quality": "medium"}}
BAD_LINES = {
    "quality-out-of-vocabulary": {"op": "put", "key": "2", "record": {**GOOD, "judge": {"quality": "superb"}}},
    "key-not-an-index": {"op": "put", "key": "two", "record": GOOD},
    "key-with-leading-zero": {"op": "put", "key": "04", "record": GOOD},
    "key-is-an-int": {"op": "put", "key": 4, "record": GOOD},
    "key-missing": {"op": "put", "record": GOOD},
    "record-missing": {"op": "put", "key": "4"},
    "record-not-an-object": {"op": "put", "key": "4", "record": [1, 2]},
    "record-index-mismatch": {"op": "put", "key": "2", "record": GOOD},
    "verdict-not-boolean": {"op": "put", "key": "4", "record": {**GOOD, "deterministic": {"success": "yes"}}},
    "replace-all-episodes": {"op": "set", "field": "episodes", "value": {}},
    "future-schema-version": {"op": "set", "field": "schema_version", "value": 2},
    "benchmark-not-text": {"op": "set", "field": "benchmark", "value": 7},
    "set-without-field": {"op": "set", "value": 1},
    "unknown-op": {"op": "drop", "key": "0"},
    "no-op": {"key": "0", "record": None},
    "not-an-object": [1, 2, 3],
    "a-string": "put",
    "a-number": 3,
    "batch-with-one-bad": {
        "op": "batch",
        "entries": [
            {"op": "put", "key": "5", "record": {"episode_index": 5, "deterministic": {"success": True}}},
            {"op": "put", "key": "4", "record": {**GOOD, "judge": {"quality": "wow"}}},
        ],
    },
    "batch-empty": {"op": "batch", "entries": []},
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_a_bad_journal_line_is_skipped_kept_aside_and_never_folded(root, name):
    el.annotate_episode(root, 4, quality="medium")  # a good pending line (and the header)
    append_line(root, json.dumps(BAD_LINES[name]).encode())
    el.annotate_episode(root, 2, quality="low")  # a good line after the bad one
    before = canonical(root)["episodes"]
    assert el.read_labels(root)["episodes"]["2"]["judge"]["quality"] == "low"
    assert el.filter_episodes(root, min_quality="low") == [0, 1, 2, 4]
    assert el.flush(root) is True
    after = canonical(root)
    assert after["schema_version"] == 1 and after["benchmark"] == "b"
    assert after["episodes"]["4"]["judge"]["quality"] == "medium"
    assert after["episodes"]["2"]["judge"]["quality"] == "low"
    assert set(after["episodes"]) == set(before) == {str(i) for i in range(6)}
    assert "deterministic" in after["episodes"]["5"]  # the half-bad batch changed nothing
    rejected = [json.loads(line) for line in (rejected_path(root / "episode_labels.json")).read_text().splitlines()]
    assert len(rejected) == 1 and rejected[0]["entry"] == BAD_LINES[name] and rejected[0]["reason"]
    el.annotate_episode(root, 5, quality="high")  # the sidecar stays writable
    assert el.read_labels(root)["episodes"]["5"]["judge"]["quality"] == "high"
    assert open_store(root).problems()["rejected"] == 1


def test_an_undecodable_middle_line_is_kept_aside(root):
    el.annotate_episode(root, 4, quality="medium")
    append_line(root, b'{"op": "put", "key": "2", "rec')
    el.annotate_episode(root, 2, quality="low")
    assert el.flush(root) is True
    assert canonical(root)["episodes"]["2"]["judge"]["quality"] == "low"
    (kept,) = (rejected_path(root / "episode_labels.json")).read_text().splitlines()
    assert json.loads(kept)["reason"] == "the line is not valid JSON"


def test_a_journal_line_without_key_is_no_key_error_in_another_process(root):
    el.annotate_episode(root, 4, quality="medium")
    append_line(root, json.dumps(BAD_LINES["key-missing"]).encode())
    code = "import sys\nfrom strands_robots import episode_labels as el\nprint(el.filter_episodes(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "KeyError" not in done.stderr and json.loads(done.stdout) == [0, 4]
    assert "line 3 is not applied: a 'put' entry without 'key'" in done.stderr
    result = runner.invoke(app, ["filter", str(root)])  # a read-only command folds it, the bad line aside
    assert result.exit_code == 0 and json.loads(result.stdout) == [0, 4]
    assert not journal(root).exists()
    assert canonical(root)["episodes"]["4"]["judge"]["quality"] == "medium"
    assert (rejected_path(root / "episode_labels.json")).exists()


# --- another tool rewrote the file while our journal has pending entries ---------------


def test_pending_entries_are_replayed_over_another_tools_rewrite(root):
    el.annotate_episode(root, 2, quality="medium", note="ours")  # pending in our journal
    el.annotate_episode(root, 4, quality="high", note="ours")
    el.annotate_episode(root, 1, quality="high", note="ours, conflicting")
    assert journal(root).exists()
    theirs = canonical(root)  # the other tool reads the canonical file (without our journal) ...
    theirs["episodes"]["0"]["judge"]["note"] = "theirs"  # ... changes records we did not touch,
    theirs["episodes"]["1"]["judge"] = {"quality": "medium", "note": "theirs"}  # one we did,
    theirs["episodes"]["6"] = {"episode_index": 6, "deterministic": {"success": True}}  # adds one
    other_tool_write(root, theirs)
    merged = el.read_labels(root)["episodes"]
    assert merged["0"]["judge"]["note"] == "theirs"
    assert merged["2"]["judge"]["note"] == "ours" and merged["4"]["judge"]["note"] == "ours"
    assert merged["1"]["judge"]["note"] == "theirs"  # a real conflict keeps theirs in the file ...
    assert "6" in merged
    assert not journal(root).exists()
    on_disk = canonical(root)["episodes"]
    assert on_disk["2"]["judge"]["note"] == "ours" and on_disk["6"]["deterministic"]["success"] is True
    (conflict,) = [json.loads(x) for x in (conflicts_path(root / "episode_labels.json")).read_text().splitlines()]
    assert conflict["key"] == "1" and conflict["ours"]["judge"]["note"] == "ours, conflicting"  # ... and ours here
    assert conflict["theirs"]["judge"]["note"] == "theirs" and conflict["base"]["judge"]["quality"] == "low"
    shown = runner.invoke(app, ["show", str(root)])
    assert shown.exit_code == 0, shown.output
    assert "1 conflict" in shown.output and "episode_labels.json.conflicts.jsonl" in shown.output


def test_the_same_change_by_both_tools_is_no_conflict(root):
    el.annotate_episode(root, 4, quality="high")
    document = el.read_labels(root)
    other_tool_write(root, document)  # e.g. the other tool folded our pending label itself
    assert el.read_labels(root)["episodes"]["4"]["judge"]["quality"] == "high"
    assert not (conflicts_path(root / "episode_labels.json")).exists()
    assert not journal(root).exists()


def test_a_merge_in_a_read_only_directory_is_read_merged_and_changes_nothing(root, monkeypatch):
    el.annotate_episode(root, 4, quality="high")
    theirs = canonical(root)
    theirs["episodes"]["0"]["judge"]["note"] = "theirs"
    other_tool_write(root, theirs)
    files = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    monkeypatch.setattr(os, "unlink", read_only)
    for _ in range(2):  # not cached: read merged again, never written over
        merged = el.read_labels(root)["episodes"]
        assert merged["4"]["judge"]["quality"] == "high" and merged["0"]["judge"]["note"] == "theirs"
        assert el.filter_episodes(root, min_quality="high") == [0, 4]
    with pytest.raises(StorageError, match="Nothing was changed and the journal is kept"):
        el.annotate_episode(root, 5, quality="low")
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == files


# --- read-only commands fold a journal orphaned by a killed process ---------------------

KILLED_WRITER = r"""
import os, sys
from strands_robots import episode_labels as el
from strands_robots.episode_labels.document import open_store
root = sys.argv[1]
open_store(root).write_through_bytes = 0
el.annotate_episode(root, 4, quality="high", note="before the kill")
os._exit(0)  # no atexit fold: like SIGKILL
"""


@pytest.mark.parametrize("command", ["show", "filter"])
def test_read_only_commands_fold_an_orphaned_journal(tmp_path, command):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(6)])
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(root)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert journal(root).exists()
    result = runner.invoke(app, [command, str(root), *(["--min-quality", "high"] if command == "filter" else [])])
    assert result.exit_code == 0, result.output
    assert not journal(root).exists()
    assert canonical(root)["episodes"]["4"]["judge"]["note"] == "before the kill"


# --- faults while writing -------------------------------------------------------------


def test_a_short_write_then_a_failing_truncate_stores_nothing_of_the_batch(root, monkeypatch):
    el.annotate_episode(root, 4, quality="low")  # the journal exists (header + one line)
    before = el.read_labels(root)
    real_write = os.write

    def short_write(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    def failing_truncate(fd, length):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "write", short_write)
    monkeypatch.setattr(os, "ftruncate", failing_truncate)
    batch = [{"episode": i, "quality": "high", "note": "batch " * 40} for i in (0, 1, 2, 4, 5)]
    with pytest.raises(StorageError) as caught:
        el.annotate_episodes(root, batch)
    monkeypatch.undo()
    message = str(caught.value)
    assert "none of the new records is stored" in message and "Nothing was changed" not in message
    assert el.read_labels(root) == before  # all or nothing: nothing
    el.annotate_episode(root, 2, quality="high")  # the next write cuts the torn tail off
    assert el.read_labels(root)["episodes"]["2"]["judge"]["quality"] == "high"
    el.flush(root)
    assert canonical(root)["episodes"]["5"].get("judge") is None


def test_a_fold_failing_after_a_durable_append_does_not_report_a_failure(root, monkeypatch, caplog):
    monkeypatch.setattr(record_store, "MIN_FOLD_BYTES", 0)  # a journal longer than the file is folded
    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst).endswith("episode_labels.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_replace(src, dst)

    def failing_rename_with(src, dst, flags):
        return failing_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    monkeypatch.setattr(atomic, "rename_with", failing_rename_with)  # the sidecar's install step
    note = "long " * 1000  # the journal line outgrows the canonical file: the append is followed by a fold
    result = el.annotate_episode(root, 0, quality="medium", note=note, keep_history=True)  # no error: stored
    assert result["judge"]["quality"] == "medium"
    assert "stored in" in caplog.text and "folding it" in caplog.text
    monkeypatch.undo()
    record = el.read_labels(root)["episodes"]["0"]
    assert record["judge"]["quality"] == "medium" and len(record["judge_history"]) == 1
    assert el.flush(root) is True
    assert len(canonical(root)["episodes"]["0"]["judge_history"]) == 1


def test_a_failing_unlink_in_flush_is_a_typed_error_that_says_the_labels_are_stored(root, monkeypatch):
    el.annotate_episode(root, 4, quality="high")
    real_unlink = os.unlink

    def failing_unlink(path, *args, **kwargs):
        if str(path).endswith(".journal"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", failing_unlink)
    with pytest.raises(StorageError, match="the labels are stored in") as caught:
        el.flush(root)
    assert "Nothing was changed" not in str(caught.value)
    monkeypatch.undo()
    assert canonical(root)["episodes"]["4"]["judge"]["quality"] == "high"
    assert el.read_labels(root)["episodes"]["4"]["judge"]["quality"] == "high"  # the leftover is harmless
    assert not journal(root).exists()
    assert not (conflicts_path(root / "episode_labels.json")).exists()


def test_a_huge_number_already_in_the_file_is_refused_without_blaming_the_caller(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    text = '{"schema_version": 1, "benchmark": "", "episodes": {"0": {"episode_index": 0, '
    text += '"deterministic": {"success": true, "cumulative_reward": 1e400}}}}'
    (root / "episode_labels.json").write_text(text)
    for call in (
        lambda: el.annotate_episode(root, 0, quality="high"),
        lambda: el.read_labels(root),
        lambda: el.record_deterministic_verdicts(root, [{"episode": 1, "success": True}]),
    ):
        with pytest.raises(SidecarError, match="1e400 is out of range") as caught:
            call()
        assert "left untouched" in str(caught.value) and "pass a finite" not in str(caught.value)
    assert (root / "episode_labels.json").read_text() == text


@pytest.mark.parametrize("kind", ["fifo", "directory", "invalid-utf8"])
@pytest.mark.parametrize("operation", ["filter", "read", "annotate", "flush"])
def test_a_sidecar_path_that_is_no_json_file_is_a_typed_refusal_never_a_hang(tmp_path, kind, operation):
    import signal

    root = tmp_path / "ds"
    root.mkdir()
    path = root / "episode_labels.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b'{"schema_version": 1, "benchmark": "\xff\xfe", "episodes": {}}\n')
    call = {
        "filter": lambda: el.filter_episodes(root),
        "read": lambda: el.read_labels(root),
        "annotate": lambda: el.annotate_episode(root, 0, quality="high"),
        "flush": lambda: el.flush(root),
    }[operation]
    previous = signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("hung")))
    signal.alarm(10)
    try:
        with pytest.raises(SidecarError) as caught:
            call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    text = str(caught.value)
    assert ("move it away" in text) or ("left untouched" in text), text
    assert (kind == "fifo") == path.is_fifo() and (kind == "directory") == path.is_dir()

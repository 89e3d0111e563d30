"""``existing_store`` answers what the files call for, however often a root was seen: a
missing root is a ``RootNotFoundError``, a root with neither the sidecar nor its journal is
"no labels yet" (``LabelsNotFoundError``), and otherwise the store of that sidecar.

Documents handed to callers are theirs: mutating them never changes the store, whether
the call parsed the file (handed over without a copy) or found it cached (a copy)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strands_robots.episode_labels as el
from strands_robots.episode_labels import document
from strands_robots.errors import LabelsNotFoundError, RootNotFoundError
from strands_robots.storage.record_store import WRITE_THROUGH_BYTES
from strands_robots.storage.side_files import journal_path


def _answer(root, labels_dir=None):
    try:
        store = document.existing_store(root, labels_dir)
    except (LabelsNotFoundError, RootNotFoundError) as exc:
        return type(exc).__name__, str(exc)
    return "store", store


def _expected(root: Path) -> str:
    """What the files call for."""
    if not root.is_dir():
        return "RootNotFoundError"
    sidecar = root / "episode_labels.json"
    return "store" if sidecar.exists() or journal_path(sidecar).exists() else "LabelsNotFoundError"


events = st.lists(
    st.sampled_from(["verdicts", "remove_sidecar", "remove_root", "make_root", "journal_only"]), max_size=8
)


@settings(max_examples=80, deadline=None)
@given(steps=events, spelling=st.sampled_from([str, Path]))
def test_a_root_seen_before_gives_what_the_files_call_for_now(tmp_path_factory, steps, spelling):
    base = tmp_path_factory.mktemp("paths")
    root = base / "ds"
    root.mkdir()
    given_root = spelling(str(root))
    for step in ["verdicts", *steps]:
        if step == "verdicts" and root.is_dir():
            el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
        elif step == "remove_sidecar":
            if (root / "episode_labels.json").exists():
                el.flush(root)
            for path in (root / "episode_labels.json", journal_path(root / "episode_labels.json")):
                path.unlink(missing_ok=True)
        elif step == "remove_root":
            shutil.rmtree(root, ignore_errors=True)
        elif step == "make_root":
            root.mkdir(exist_ok=True)
        elif step == "journal_only" and (root / "episode_labels.json").exists():
            el.flush(root)
            (root / "episode_labels.json").unlink()
        kind, answer = _answer(given_root)
        assert kind == _expected(root), (steps, answer)
        if kind == "store":
            assert answer.path == root / "episode_labels.json"
        elif kind == "RootNotFoundError":
            assert answer.startswith(f"Dataset root {root} is not an existing directory"), answer
        else:
            assert "Record deterministic verdicts first" in answer, answer
    shutil.rmtree(base, ignore_errors=True)


def test_a_removed_root_is_the_typed_error_the_first_call_gives(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    assert document.existing_store(str(root)).path == root / "episode_labels.json"
    el.flush(root)
    shutil.rmtree(root)
    with pytest.raises(RootNotFoundError, match="is not an existing directory"):
        document.existing_store(str(root))
    with pytest.raises(RootNotFoundError, match="is not an existing directory"):
        el.annotate_episode(str(root), 0, quality="high")


def test_a_removed_sidecar_is_no_labels_yet(tmp_path):
    el.record_deterministic_verdicts(tmp_path, [{"episode": 0, "success": True}])
    el.annotate_episode(tmp_path, 0, quality="high")
    (tmp_path / "episode_labels.json").unlink()
    with pytest.raises(LabelsNotFoundError, match="Record deterministic verdicts first"):
        el.annotate_episode(tmp_path, 0, quality="low")


def test_a_relative_root_follows_the_working_directory(tmp_path, monkeypatch):
    for name in ("a", "b"):
        (tmp_path / name / "ds").mkdir(parents=True)
        el.record_deterministic_verdicts(tmp_path / name / "ds", [{"episode": 0, "success": name == "a"}])
    monkeypatch.chdir(tmp_path / "a")
    assert document.existing_store("ds").path == tmp_path / "a" / "ds" / "episode_labels.json"
    monkeypatch.chdir(tmp_path / "b")
    assert document.existing_store("ds").path == tmp_path / "b" / "ds" / "episode_labels.json"
    assert el.read_labels("ds")["episodes"]["0"]["deterministic"]["success"] is False


def test_a_labels_dir_seen_before_is_checked_again(tmp_path):
    root, labels = tmp_path / "ds", tmp_path / "labels"
    root.mkdir()
    labels.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}], labels_dir=labels)
    first = document.existing_store(str(root), str(labels))
    assert first.path == labels / "episode_labels.json"
    assert document.existing_store(str(root), str(labels)) is first
    os.rename(labels, tmp_path / "gone")
    with pytest.raises(RootNotFoundError):
        document.existing_store(str(root), str(labels))


# -- documents handed to callers ----------------------------------------------------------------


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

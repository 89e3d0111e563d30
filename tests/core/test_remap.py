"""The one mapping rule, mapping_after_delete, and the transactional remap over every sidecar."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots import outcomes, segments
from strands_robots.cli.main import app
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, RemapConflictError, StorageError
from strands_robots.remap import EpisodeMapping, mapping_after_delete, remap_dataset
from strands_robots.storage import remap_txn
from strands_robots.storage.side_files import remap_intent_path, state_dir
from tests.storage.remap_helpers import delete_episodes_meta, labelled_dataset, sidecar_bytes, state

REPO = Path(__file__).resolve().parents[2]
STORES = {"labels": el.remap, "outcomes": outcomes.remap, "segments": segments.remap}

#: After delete_episodes([0, 3]) of the 5-episode dataset: 1 -> 0, 2 -> 1, 4 -> 2.
AFTER_DELETE = {
    "labels": {0: "episode 1", 1: "episode 2", 2: "episode 4"},
    "outcomes": {0: "expert_success"},
    "segments": {0: "a1"},
}


@pytest.fixture
def root(tmp_path):
    return labelled_dataset(tmp_path / "ds")


# -- the mapping rule ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "table"),
    [({"0": 1, "1": 0}, {0: 1, 1: 0}), ({0: 2, "5": 3}, {0: 2, 5: 3}), ({}, {})],
)
def test_keys_may_be_decimal_text_values_must_be_integers(given, table):
    assert EpisodeMapping.parse(given).table == table


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"0": "1"}, 'write the new index as a JSON number, e.g. {"0": 1}'),
        ({"0": -1}, "must be non-negative"),
        ({"-2": 0}, "must be non-negative"),
        ({"0": True}, "not a non-negative integer"),
        ({"x": 1}, "{old_episode_index: new_episode_index}"),
        ({"0": 1, "1": 1}, "both to 1; it must be one-to-one"),
        ({0: 1, "0": 2}, "names one old episode twice"),
        ([1, 2], "mapping must be an object, got list"),
        ({"0": 2**64}, "beyond the largest episode_index"),
    ],
)
def test_bad_mappings_are_refused_with_the_remedy(given, message):
    with pytest.raises(LabelValidationError) as info:
        EpisodeMapping.parse(given)
    assert message in str(info.value)


@pytest.mark.parametrize("store", sorted(STORES))
def test_every_store_applies_the_same_rule(root, store):
    before = sidecar_bytes(root)
    for bad, message in [({"0": "1"}, "JSON number"), ({"1": -1}, "non-negative"), ({"0": 1, "1": 1}, "one-to-one")]:
        with pytest.raises(LabelValidationError, match=message):
            STORES[store](root, bad)
    assert sidecar_bytes(root) == before


def test_a_built_mapping_parses_as_itself():
    assert EpisodeMapping.parse(mapping_after_delete(3, [1])).table == {0: 0, 2: 1}


def test_mapping_after_delete_renumbers_survivors_in_order():
    mapping = mapping_after_delete(10, [7, 3])
    assert mapping.table == {0: 0, 1: 1, 2: 2, 4: 3, 5: 4, 6: 5, 8: 6, 9: 7}
    assert mapping.deleted == {3, 7}
    assert mapping_after_delete(3, []).table == {0: 0, 1: 1, 2: 2}
    assert mapping_after_delete(2, [0, 1]).table == {}
    with pytest.raises(LabelValidationError, match="not below total_episodes=10"):
        mapping_after_delete(10, [10])
    with pytest.raises(LabelValidationError, match="non-negative"):
        mapping_after_delete(10, [-1])


# -- remap over every sidecar --------------------------------------------------------------------


def test_remap_after_delete_moves_every_sidecar_and_clears_staleness(root):
    delete_episodes_meta(root, [0, 3])
    assert sorted(el.stale_episodes(root)) == [3, 4]  # equal lengths, no stats: only the missing ones show
    result = remap_dataset(root, mapping_after_delete(5, [0, 3]))
    assert result.counts == {"episode_labels": 3, "outcomes": 1, "segments": 1}
    assert state(root) == AFTER_DELETE
    assert el.stale_episodes(root) == {}
    assert not remap_intent_path(root).exists()
    assert not [p for p in os.listdir(state_dir(root)) if ".remap-" in p or p == "remap-intent.json"]


def test_cli_remap_deleted(root):
    delete_episodes_meta(root, [0, 3])
    result = CliRunner().invoke(app, ["remap", str(root), "--deleted", "0,3"])
    assert result.exit_code == 0, result.output
    assert "episode_labels: 3 records kept" in result.output
    assert "outcomes: 1 records kept" in result.output
    assert state(root) == AFTER_DELETE


def test_cli_remap_deleted_without_metadata_needs_the_total(tmp_path):
    el.record_deterministic_verdicts(tmp_path, [{"episode": i, "success": True} for i in range(4)])
    result = CliRunner().invoke(app, ["remap", str(tmp_path), "--deleted", "1"])
    assert isinstance(result.exception, LabelValidationError) and "--total-episodes" in str(result.exception)
    result = CliRunner().invoke(app, ["remap", str(tmp_path), "--deleted", "1", "--total-episodes", "4"])
    assert result.exit_code == 0, result.output
    assert sorted(el.read_labels(tmp_path)["episodes"]) == ["0", "1", "2"]


def test_an_empty_mapping_is_refused_unless_dropping_is_allowed(root):
    before = sidecar_bytes(root)
    with pytest.raises(LabelValidationError, match="would drop the labels of 5 episode"):
        remap_dataset(root, {})
    (root / "empty.json").write_text("{}")
    result = CliRunner().invoke(app, ["remap", str(root), str(root / "empty.json")])
    assert isinstance(result.exception, LabelValidationError) and "--allow-drop" in str(result.exception)
    assert {k: v for k, v in sidecar_bytes(root).items() if k != "empty.json"} == before
    result = CliRunner().invoke(app, ["remap", str(root), str(root / "empty.json"), "--allow-drop"])
    assert result.exit_code == 0, result.output
    assert state(root) == {"labels": {}, "outcomes": {}, "segments": {}}


def test_targets_the_dataset_lacks_are_refused_with_the_remedy(root):
    before = sidecar_bytes(root)
    with pytest.raises(EpisodeNotFoundError) as info:
        remap_dataset(root, {str(i): i for i in range(4)} | {"4": 99})
    assert "[99]" in str(info.value) and "--deleted 3,7" in str(info.value)
    assert sidecar_bytes(root) == before


def test_dry_run_writes_nothing(root):
    delete_episodes_meta(root, [0, 3])
    before = sidecar_bytes(root)
    result = remap_dataset(root, mapping_after_delete(5, [0, 3]), dry_run=True)
    assert result.counts == {"episode_labels": 3, "outcomes": 1, "segments": 1}
    assert sidecar_bytes(root) == before


# -- failures and kills between sidecars ---------------------------------------------------------


def test_a_failure_while_staging_changes_nothing(root, monkeypatch):
    delete_episodes_meta(root, [0, 3])
    before = sidecar_bytes(root)
    real = remap_txn.atomic_write_bytes
    calls = []

    def failing(path, data):
        calls.append(Path(path).name)
        if "episode_segments.json.remap-" in Path(path).name:  # the 2nd staged sidecar: disk full
            raise StorageError(f"could not write {path}: No space left on device; free disk space.")
        real(path, data)

    monkeypatch.setattr(remap_txn, "atomic_write_bytes", failing)
    with pytest.raises(StorageError, match="No space left"):
        remap_dataset(root, mapping_after_delete(5, [0, 3]))
    assert any("episode_labels.json.remap-" in c for c in calls)
    assert sidecar_bytes(root) == before  # rolled back: no intent, no staged file
    monkeypatch.setattr(remap_txn, "atomic_write_bytes", real)
    remap_dataset(root, mapping_after_delete(5, [0, 3]))
    assert state(root) == AFTER_DELETE


def failing_install(monkeypatch, sidecar: str, error: OSError) -> list[str]:
    """Installing the staged, renumbered ``sidecar`` fails with ``error`` (the disk filled,
    an I/O error) once the remap has committed; returns the names of the sidecars installed."""
    real = os.replace
    installed: list[str] = []

    def replace(src, dst, *args, **kwargs):
        if Path(src).name.startswith(Path(dst).name + ".remap-"):  # a staged sidecar installed
            if Path(dst).name == sidecar:
                raise error
            installed.append(Path(dst).name)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return installed


def test_a_failure_between_sidecars_is_completed_by_a_rerun(root, monkeypatch):
    delete_episodes_meta(root, [0, 3])
    installed = failing_install(monkeypatch, "episode_segments.json", OSError(28, "No space left on device"))
    with pytest.raises(StorageError, match="run the same remap again"):
        remap_dataset(root, mapping_after_delete(5, [0, 3]))
    assert installed == ["episode_labels.json"]
    assert remap_intent_path(root).exists()
    monkeypatch.undo()
    # a different mapping is not applied over the interrupted one
    with pytest.raises(LabelValidationError, match="was found and completed first"):
        remap_dataset(root, mapping_after_delete(5, [4]))
    assert state(root) == AFTER_DELETE
    assert not remap_intent_path(root).exists()


def interrupted_delete(root, monkeypatch, sidecar: str) -> None:
    """Episodes 0 and 3 deleted; the remap stops after it committed, before installing ``sidecar``."""
    delete_episodes_meta(root, [0, 3])
    failing_install(monkeypatch, sidecar, OSError(5, "Input/output error"))
    with pytest.raises(StorageError):
        remap_dataset(root, mapping_after_delete(5, [0, 3]))
    monkeypatch.undo()


def test_a_write_to_a_sidecar_a_committed_remap_has_not_installed_is_refused(root, monkeypatch):
    interrupted_delete(root, monkeypatch, "episode_labels.json")
    before = sidecar_bytes(root)
    with pytest.raises(RemapConflictError, match="has not installed episode_labels.json yet; nothing was written"):
        el.record_deterministic_verdicts(root, [{"episode": 1, "success": False}])
    assert sidecar_bytes(root) == before
    remap_dataset(root, mapping_after_delete(5, [0, 3]))  # the same remap completes it
    assert state(root) == AFTER_DELETE


def test_rerunning_the_interrupted_remap_completes_it_once(root, monkeypatch):
    interrupted_delete(root, monkeypatch, "episode_segments.json")
    result = CliRunner().invoke(app, ["remap", str(root), "--deleted", "0,3"])
    assert result.exit_code == 0, result.output
    assert "an interrupted remap was found and completed" in result.output
    assert state(root) == AFTER_DELETE  # not renumbered twice
    lines = (root / "episode_outcomes.jsonl").read_text().splitlines()
    assert sum('"kind":"remap"' in line for line in lines) == 1


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from strands_robots.remap import mapping_after_delete, remap_dataset
    from strands_robots.storage import remap_txn

    where = sys.argv[2]
    if where == "install":  # killed once the labels are installed, before the segments are
        real_replace = os.replace
        def replace(src, dst, *args, **kwargs):
            if ".remap-" in str(src) and str(dst).endswith("episode_segments.json"):
                os.kill(os.getpid(), signal.SIGKILL)
            return real_replace(src, dst, *args, **kwargs)
        os.replace = replace
    else:
        real = remap_txn.atomic_write_bytes
        def write(path, data):
            real(path, data)
            if "episode_labels.json.remap-" in str(path):
                os.kill(os.getpid(), signal.SIGKILL)
        remap_txn.atomic_write_bytes = write
    remap_dataset(sys.argv[1], mapping_after_delete(5, [0, 3]))
    """
)


@pytest.mark.parametrize("where", ["install", "staging"])
def test_a_remap_killed_between_sidecars_is_finished_by_a_rerun(root, where):
    delete_episodes_meta(root, [0, 3])
    before = sidecar_bytes(root)
    proc = subprocess.run([sys.executable, "-c", KILLER, str(root), where], cwd=REPO, capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    intent = json.loads(remap_intent_path(root).read_text())
    assert intent["phase"] == ("committed" if where == "install" else "staging")
    if where == "staging":
        assert {k: v for k, v in sidecar_bytes(root).items() if "remap" not in k} == before
    result = remap_dataset(root, mapping_after_delete(5, [0, 3]))
    assert result.recovered == ("completed" if where == "install" else "rolled back")
    assert state(root) == AFTER_DELETE
    assert not [p for p in os.listdir(state_dir(root)) if ".remap-" in p or p == "remap-intent.json"]

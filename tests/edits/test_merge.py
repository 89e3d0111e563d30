"""Carrying the sidecars of several datasets into the dataset a merge made of them
(``remap MERGED --from A --from B``), and a given mapping checked against the found one
(docs/editing.md, "merge")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.errors import LabelValidationError, MappingMismatchError
from strands_robots.outcomes import current_outcomes, export_outcomes, outcome_history, set_outcome
from strands_robots.remap import applied_remaps, remap_dataset
from strands_robots.segments import get_segmentation, save_segmentation
from tests.storage.remap_helpers import LENGTH, SEGMENT, delete_episodes_files, sidecar_bytes
from tests.synth import make_v3_dataset


def _part(merged: Path, root: Path, deleted: list[int]) -> Path:
    """The dataset files of ``merged`` without ``deleted`` (renumbered as lerobot does)."""
    root.mkdir()
    shutil.copytree(merged / "meta", root / "meta")
    shutil.copytree(merged / "data", root / "data")
    delete_episodes_files(root, deleted)
    return root


def _merge(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``merged`` (4 recordings: 0..3, no sidecar) and the two datasets it is made of, labelled:
    ``a`` holds recordings 1 and 3 (its episodes 0, 1), ``b`` recordings 0 and 2."""
    merged = make_v3_dataset(tmp_path / "merged", [LENGTH] * 4)
    a = _part(merged, tmp_path / "a", [0, 2])
    b = _part(merged, tmp_path / "b", [1, 3])
    for name, root in (("a", a), ("b", b)):
        el.record_deterministic_verdicts(root, [{"episode": e, "success": e == 0} for e in range(2)], benchmark=name)
        for e in range(2):
            el.annotate_episode(root, e, quality="high", note=f"{name}{e}")
    set_outcome(a, 1, outcome="failure")
    set_outcome(a, 1, outcome="expert_success")  # a history of two versions
    set_outcome(b, 0, outcome="failure")
    save_segmentation(b, 1, SEGMENT, annotator="b-annotator")
    export_outcomes(a)
    return merged, a, b


def test_merge_carries_each_source_to_the_episodes_its_recordings_became(tmp_path: Path) -> None:
    merged, a, b = _merge(tmp_path)
    before = {a: sidecar_bytes(a), b: sidecar_bytes(b)}
    result = remap_dataset(merged, source=[a, b])
    assert result.counts == {"episode_labels": 4, "outcomes": 2, "segments": 1}
    notes = {int(k): r["judge"]["note"] for k, r in el.read_labels(merged)["episodes"].items()}
    assert notes == {0: "b0", 1: "a0", 2: "b1", 3: "a1"}
    assert el.read_labels(merged)["benchmark"] == "a + b"
    assert {e: o["outcome"] for e, o in current_outcomes(merged).items()} == {0: "failure", 3: "expert_success"}
    assert [v["outcome"] for v in outcome_history(merged, 3)] == ["expert_success", "failure"]  # newest first
    assert get_segmentation(merged, 2)["annotator"] == "b-annotator"
    assert (merged / "meta" / "avala_sequence_outcomes.jsonl").is_file()  # a had the export
    assert el.stale_episodes(merged) == {}
    assert {a: sidecar_bytes(a), b: sidecar_bytes(b)} == before  # the sources never change
    after = sidecar_bytes(merged)
    again = remap_dataset(merged, source=[a, b])
    assert again.already_applied and sidecar_bytes(merged) == after
    (entry,) = applied_remaps(merged)
    assert entry["source"] == [str(a.resolve()), str(b.resolve())]


def test_merge_on_the_command_line(tmp_path: Path) -> None:
    merged, a, b = _merge(tmp_path)
    runner = CliRunner()
    done = runner.invoke(app, ["remap", str(merged), "--from", str(a), "--from", str(b)])
    assert done.exit_code == 0, done.output
    assert "episode_labels: 4 records kept" in done.stdout
    assert el.read_labels(merged)["episodes"]["1"]["judge"]["note"] == "a0"
    again = runner.invoke(app, ["remap", str(merged), "--from", str(a), "--from", str(b)])
    assert again.exit_code == 0 and "already applied" in again.stdout


def test_merge_with_a_deleted_recording_needs_allow_drop(tmp_path: Path) -> None:
    merged, a, b = _merge(tmp_path)
    delete_episodes_files(merged, [3])  # recording 3 (a's episode 1) is not in the merged dataset
    with pytest.raises(LabelValidationError, match=rf"{a}.*\[1\].*--allow-drop"):
        remap_dataset(merged, source=[a, b])
    assert not (merged / "episode_labels.json").exists()
    remap_dataset(merged, source=[a, b], allow_drop=True)
    notes = {int(k): r["judge"]["note"] for k, r in el.read_labels(merged)["episodes"].items()}
    assert notes == {0: "b0", 1: "a0", 2: "b1"}
    assert sorted(current_outcomes(merged)) == [0]


def test_one_recording_labelled_in_two_sources_is_refused(tmp_path: Path) -> None:
    merged, a, b = _merge(tmp_path)
    twin = tmp_path / "twin"
    shutil.copytree(a, twin)  # a second labelling of a's recordings
    with pytest.raises(LabelValidationError, match=r"several sources.*never a guess"):
        remap_dataset(merged, source=[a, twin])
    assert not (merged / "episode_labels.json").exists()
    with pytest.raises(LabelValidationError, match="named twice"):
        remap_dataset(merged, source=[a, a])


def test_a_mapping_that_disagrees_with_the_found_one_is_refused(tmp_path: Path) -> None:
    merged, a, _ = _merge(tmp_path)
    runner = CliRunner()
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"0": 0, "1": 3}')  # a's episode 0 holds recording 1, not 0
    refused = runner.invoke(app, ["remap", str(merged), str(wrong), "--from", str(a), "--allow-drop"])
    assert isinstance(refused.exception, MappingMismatchError)  # a LabelsError: exit 2 (cli.main.run)
    assert "0 -> 0 (its recording is episode 1)" in str(refused.exception)
    assert f"strands-labels remap {merged} --from {a}`" in str(refused.exception)
    assert not (merged / "episode_labels.json").exists()  # nothing changed
    right = tmp_path / "right.json"
    right.write_text('{"0": 1, "1": 3}')
    done = runner.invoke(app, ["remap", str(merged), str(right), "--from", str(a)])
    assert done.exit_code == 0, done.output
    notes = {int(k): r["judge"]["note"] for k, r in el.read_labels(merged)["episodes"].items()}
    assert notes == {1: "a0", 3: "a1"}

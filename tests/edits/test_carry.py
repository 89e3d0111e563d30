"""Carrying every sidecar from the dataset before an edit (``remap --from``): the mapping is
found by the recording's fingerprint, never guessed (docs/editing.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.errors import EpisodeNotFoundError, LabelValidationError, NothingToRemapError
from strands_robots.fingerprint.match import match_episodes
from strands_robots.outcomes import get_outcome
from strands_robots.remap import applied_remaps, mapping_after_delete, remap_dataset
from strands_robots.segments import get_segmentation
from tests.storage.remap_helpers import delete_episodes_files, delete_episodes_meta, labelled_dataset, sidecar_bytes
from tests.synth import make_v3_dataset


def _edited(tmp_path: Path, deleted: list[int], episodes: int = 5) -> tuple[Path, Path]:
    """``old`` with every sidecar; ``new``: its dataset files after ``delete_episodes(deleted)``, no sidecar."""
    old = labelled_dataset(tmp_path / "old", episodes)
    new = tmp_path / "new"
    shutil.copytree(old / "meta", new / "meta")
    shutil.copytree(old / "data", new / "data")
    delete_episodes_files(new, deleted)
    return old, new


def test_carry_after_delete_moves_each_label_to_its_recording(tmp_path: Path) -> None:
    old, new = _edited(tmp_path, [1])
    before = sidecar_bytes(old)
    with pytest.raises(LabelValidationError, match=r"\[1\].*--allow-drop"):
        remap_dataset(new, source=old)
    assert not (new / "episode_labels.json").exists()
    result = remap_dataset(new, source=old, allow_drop=True)
    assert result.counts == {"episode_labels": 4, "outcomes": 1, "segments": 1}
    assert sidecar_bytes(old) == before  # the source is never changed
    # old 0,2,3,4 -> new 0,1,2,3: notes name the old episode
    assert [el.read_labels(new)["episodes"][str(e)]["judge"]["note"] for e in range(4)] == [
        f"episode {o}" for o in (0, 2, 3, 4)
    ]
    assert get_outcome(new, 2)["outcome"] == "failure"  # old 3
    assert get_segmentation(new, 2)["annotator"] == "a3"
    with pytest.raises(EpisodeNotFoundError):
        get_segmentation(new, 1)
    assert el.stale_episodes(new) == {}


def test_the_outcome_export_is_carried_when_the_source_had_one(tmp_path: Path) -> None:
    """The source's meta/avala_sequence_outcomes.jsonl is written again for the edited dataset,
    each line under the episode its recording became."""
    import json

    from strands_robots.outcomes import export_outcomes

    old, new = _edited(tmp_path, [1])
    export_outcomes(old)
    remap_dataset(new, source=old, allow_drop=True)
    lines = [json.loads(line) for line in (new / "meta/avala_sequence_outcomes.jsonl").read_text().splitlines()]
    assert [(line["episode_index"], line.get("outcome")) for line in lines] == [
        (0, None),
        (1, None),
        (2, "failure"),  # old 3
        (3, None),
    ]


def test_same_remap_twice_changes_nothing(tmp_path: Path) -> None:
    old, new = _edited(tmp_path, [0])
    remap_dataset(new, source=old, allow_drop=True)
    after = sidecar_bytes(new)
    again = remap_dataset(new, source=old, allow_drop=True)
    assert again.already_applied and sidecar_bytes(new) == after
    assert len(applied_remaps(new)) == 1


def test_deleted_twice_on_labels_only_root_shifts_once(tmp_path: Path) -> None:
    root = tmp_path / "labels"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(10)])
    for e in range(10):
        el.annotate_episode(root, e, quality="high", note=f"recording {e}")
    mapping = mapping_after_delete(10, [3, 7])
    remap_dataset(root, mapping)
    assert remap_dataset(root, mapping).already_applied
    assert el.read_labels(root)["episodes"]["3"]["judge"]["note"] == "recording 4"


def test_deleted_twice_on_a_dataset_root_shifts_once(tmp_path: Path) -> None:
    """``remap ROOT --deleted 1`` where ROOT holds the dataset (meta/, fingerprints checked):
    the second run says "already applied" and changes no byte."""
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    root = labelled_dataset(tmp_path / "ds", 5)
    delete_episodes_files(root, [1])  # edited where it stands: the sidecars still number the old episodes
    runner = CliRunner()
    first = runner.invoke(app, ["remap", str(root), "--deleted", "1", "--allow-drop"])
    assert first.exit_code == 0 and "episode_labels: 4 records kept" in first.stdout, first.output
    after = sidecar_bytes(root)
    again = runner.invoke(app, ["remap", str(root), "--deleted", "1", "--allow-drop"])
    assert again.exit_code == 0 and "already applied" in again.stdout, again.output
    assert sidecar_bytes(root) == after
    assert [el.read_labels(root)["episodes"][str(e)]["judge"]["note"] for e in range(4)] == [
        f"episode {o}" for o in (0, 2, 3, 4)
    ]
    assert el.stale_episodes(root) == {}


def test_nothing_to_carry_says_where_it_looked(tmp_path: Path) -> None:
    old = make_v3_dataset(tmp_path / "old", [30, 40])
    new = tmp_path / "new"
    shutil.copytree(old, new)
    with pytest.raises(NothingToRemapError, match=str(old.resolve())):
        remap_dataset(new, source=old)


def test_remap_of_a_root_without_sidecars_says_where_it_looked(tmp_path: Path) -> None:
    """``remap ROOT --deleted 1`` after an in-place edit (sidecars in ROOT_old): exit 2 naming
    the directory it looked in and the carry command, not "0 records kept"."""
    from tests.cli.test_cli_user_facing import cli, one_line

    old, new = _edited(tmp_path, [1])
    moved, root = tmp_path / "ds_old", tmp_path / "ds"
    old.rename(moved)
    new.rename(root)
    with pytest.raises(NothingToRemapError, match=rf"{root}.*remap {root} --from {moved}"):
        remap_dataset(root, mapping_after_delete(5, [1]))
    done = cli("remap", root, "--deleted", "1")
    message = one_line(done.stderr)
    assert done.returncode == 2 and "records kept" not in done.stdout, (done.stdout, message)
    assert f"nothing to remap: {root.resolve()}" in message and f"strands-labels remap {root} --from {moved}" in message
    assert sorted(p.name for p in root.iterdir()) == ["data", "meta"]  # nothing created
    bare = tmp_path / "labels"
    bare.mkdir()
    done = cli("remap", bare, "--deleted", "1", "--total-episodes", "3")
    assert done.returncode == 2 and f"nothing to remap: {bare.resolve()}" in one_line(done.stderr)
    assert list(bare.iterdir()) == []


def test_match_is_never_a_guess() -> None:
    a = {"length": 10, "content": "aa", "tasks": ["t"]}
    b = {"length": 10, "content": "bb", "tasks": ["t"]}
    renamed = {"length": 10, "content": "bb", "tasks": ["u"]}
    found = match_episodes({0: a, 1: b, 2: {"length": 3}}, {0: renamed, 1: a})
    assert found.table == {0: 1, 1: 0} and found.unmatched == [2] and found.retasked == {1: (["t"], ["u"])}
    twice = match_episodes({0: a, 1: a}, {0: a})
    assert twice.table == {} and twice.ambiguous == {0: [0], 1: [0]}
    shared = match_episodes({0: a}, {0: a, 1: a})
    assert shared.ambiguous == {0: [0, 1]}


def test_cli_remap_from_reports_and_is_idempotent(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    runner = CliRunner()
    old, new = _edited(tmp_path, [2])
    first = runner.invoke(app, ["remap", str(new), "--from", str(old), "--allow-drop"])
    assert first.exit_code == 0, first.output
    assert "episode_labels: 4 records kept" in first.output
    again = runner.invoke(app, ["remap", str(new), "--from", str(old), "--allow-drop"])
    assert again.exit_code == 0 and "already applied" in again.output
    empty = tmp_path / "empty"
    shutil.copytree(new / "meta", empty / "meta")
    refused = runner.invoke(app, ["remap", str(new), "--from", str(empty)])
    assert isinstance(refused.exception, NothingToRemapError)  # a LabelsError: exit 2 (cli.main.run)
    assert str(empty.resolve()) in str(refused.exception)


def test_root_left_without_sidecars_by_an_in_place_edit_names_the_remap(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from strands_robots.cli.main import app
    from strands_robots.errors import LabelsNotFoundError

    old, new = _edited(tmp_path, [1])
    moved = tmp_path / "ds_old"
    root = tmp_path / "ds"
    old.rename(moved)  # lerobot's in-place delete: the original, sidecars included, is ROOT_old
    new.rename(root)
    with pytest.raises(LabelsNotFoundError, match=rf"remap {root} --from {moved}"):
        el.read_labels(root)
    from strands_robots.outcomes import outcome_history
    from strands_robots.segments import segmentation_history

    for read in (get_outcome, outcome_history, get_segmentation, segmentation_history):  # Python readers too
        with pytest.raises(EpisodeNotFoundError, match=rf"remap {root} --from {moved}"):
            read(root, 1)
    shown = CliRunner().invoke(app, ["outcome", "list", str(root)])
    assert f"strands-labels remap {root} --from {moved}" in shown.stderr


def test_outcome_list_and_segments_show_flag_stale_records(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    old, _ = _edited(tmp_path, [1])
    delete_episodes_meta(old, [0, 1, 2])  # edited in place without a remap: episode 3 is gone
    runner = CliRunner()
    outcomes = runner.invoke(app, ["outcome", "list", str(old)])
    assert outcomes.exit_code == 0, outcomes.output
    assert "episode 3: stale, run remap" in outcomes.stderr
    segments = runner.invoke(app, ["segments", "show", str(old)])
    assert "episode 3: stale, run remap" in segments.stderr
    validated = runner.invoke(app, ["segments", "validate", str(old)])
    assert "episode 3: stale, run remap" in validated.stderr


def test_no_label_on_a_stale_record(tmp_path: Path) -> None:
    from strands_robots.errors import StaleRecordError
    from strands_robots.tools.episode_judge import read_predicate_verdict, write_label

    old, _ = _edited(tmp_path, [1])
    before = sidecar_bytes(old)
    delete_episodes_meta(old, [0, 1, 2])  # edited in place, not remapped: episodes 1-4 are gone
    with pytest.raises(StaleRecordError, match="remap"):
        el.annotate_episode(old, 3, quality="low")
    with pytest.raises(StaleRecordError, match="remap"):
        el.annotate_episodes(old, [{"episode": 0, "quality": "low"}, {"episode": 4, "quality": "low"}])
    refused = write_label(str(old), 3, "low")
    assert refused["status"] == "error" and "remap" in str(refused["content"])
    verdict = read_predicate_verdict(str(old), 3)
    assert "STALE" in str(verdict["content"]) and "authoritative;" not in str(verdict["content"])
    assert sidecar_bytes(old) == before  # nothing was written


def test_filter_with_stale_labels_names_remap_and_strict_refuses(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from strands_robots.cli.main import app
    from strands_robots.episode_labels import filter_episodes
    from strands_robots.errors import StaleRecordError

    old, _ = _edited(tmp_path, [1])
    assert filter_episodes(old) == [0, 2, 4]
    delete_episodes_meta(old, [0, 1, 2])  # edited in place, not remapped: only episode 0 is left
    runner = CliRunner()
    loose = runner.invoke(app, ["filter", str(old)])
    assert loose.exit_code == 0 and loose.stdout.strip() == "[0]"
    assert f"strands-labels remap {old} --from OLD_ROOT" in loose.stderr
    strict = runner.invoke(app, ["filter", str(old), "--strict"])
    assert strict.exit_code == 3 and "no longer match" in strict.stderr
    with pytest.raises(StaleRecordError):
        filter_episodes(old, strict=True)
    for fmt in ("lerobot", "lerobot-delete"):
        empty = runner.invoke(app, ["filter", str(old), "--outcome", "expert_success", "--format", fmt])
        assert empty.exit_code == 1 and "no episode was selected" in empty.stderr
        assert "--dataset.episodes" not in empty.stdout


def test_strict_filter_refuses_labels_it_cannot_read_or_check(tmp_path: Path) -> None:
    """--strict (strict=True): a label write the store refused (kept aside, never applied) and a
    dataset the labels cannot be checked against are errors (exit 3), not a quieter selection."""
    import json

    from typer.testing import CliRunner

    from strands_robots.cli.main import app
    from strands_robots.episode_labels import filter_episodes
    from strands_robots.episode_labels.document import open_store
    from strands_robots.errors import UncheckedLabelsWarning, UnreadableRecordError
    from strands_robots.storage import record_store
    from strands_robots.storage.side_files import journal_path

    runner = CliRunner()
    root = labelled_dataset(tmp_path / "refused", 3)
    store = open_store(root)
    store.write_through_bytes = 0  # the next writes go to the journal
    try:
        el.annotate_episode(root, 0, quality="high", note="pending")
        with open(journal_path(root / "episode_labels.json"), "ab") as journal:  # a line another writer tore
            journal.write(b'{"op": "put", "key": "1", "record": {"episode_index": 1, "judge": {"quality": "wow"}}}\n')
        assert el.flush(root) is True
    finally:
        store.write_through_bytes = record_store.WRITE_THROUGH_BYTES
    assert runner.invoke(app, ["filter", str(root)]).exit_code == 0
    refused = runner.invoke(app, ["filter", str(root), "--strict"])
    assert refused.exit_code == 3 and "refused and never applied" in refused.stderr, refused.stderr
    assert refused.stdout == ""
    with pytest.raises(UnreadableRecordError, match="1 label write"):
        filter_episodes(root, strict=True)

    broken = labelled_dataset(tmp_path / "broken", 3)
    info = json.loads((broken / "meta/info.json").read_text())
    info["codebase_version"] = "v9.9"  # a version this reader refuses: no fingerprint can be compared
    (broken / "meta/info.json").write_text(json.dumps(info))
    with pytest.warns(UncheckedLabelsWarning):
        assert filter_episodes(broken) == [0, 2]
    with pytest.raises(UnreadableRecordError, match="could not be opened.*strict selection refuses"):
        filter_episodes(broken, strict=True)
    unchecked = runner.invoke(app, ["filter", str(broken), "--strict"])
    assert unchecked.exit_code == 3 and "info" in unchecked.stderr and unchecked.stdout == "", unchecked.stderr


def test_remap_killed_at_random_points_loses_no_acknowledged_label(tmp_path: Path) -> None:
    """A bounded run of benchmarks/remap_crash.py (the 100-trial figure is in docs/editing.md)."""
    import random

    from benchmarks.remap_crash import trial

    rng = random.Random(3)
    results = [trial(tmp_path / f"t{i}", rng.uniform(0.4, 1.2)) for i in range(4)]
    assert not [r for r in results if r["wedged"]], results
    assert not [r for r in results if r.get("lost_ack") or r.get("wrong")], results
    assert all(r["again"] for r in results)


def test_the_judge_command_skips_a_stale_record(tmp_path: Path) -> None:
    """``strands-labels judge`` after an edit without a remap: each episode whose verdict record
    describes another recording is a skipped row naming remap, and gets no label."""
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    root = make_v3_dataset(tmp_path / "ds", [30, 40, 50, 60, 70])
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(5)])
    delete_episodes_files(root, [1])  # episodes 1-3 now hold the recordings of 2-4; 4 is gone
    stale = el.stale_episodes(root)
    assert sorted(stale) == [1, 2, 3, 4]
    done = CliRunner().invoke(app, ["judge", str(root)])
    said = " ".join((done.stdout + done.stderr).split())
    assert said.count("label not written: StaleRecordError") == 3, said  # rows 1-3; 4 has no episode now
    assert said.count("--from OLD_ROOT") == 3
    judged = {int(k) for k, r in el.read_labels(root)["episodes"].items() if "judge" in r}
    assert judged == {0}


def test_no_review_on_a_stale_record(tmp_path: Path) -> None:
    from strands_robots.errors import StaleRecordError

    old, _ = _edited(tmp_path, [1])
    before = sidecar_bytes(old)
    delete_episodes_meta(old, [0, 1, 2])
    with pytest.raises(StaleRecordError, match="remap"):
        el.review_episode(old, 3, decision="grade_only", quality="low", reviewer="ana")
    assert sidecar_bytes(old) == before


def test_sidecars_the_edit_copied_are_carried_again_from_the_source(tmp_path: Path) -> None:
    """recompute_stats / reencode_videos to a new root copy the whole root, sidecars included."""
    old = labelled_dataset(tmp_path / "old", 3)
    new = tmp_path / "new"
    shutil.copytree(old, new)
    before = sidecar_bytes(old)
    assert remap_dataset(new, source=old, dry_run=True).counts == {"episode_labels": 3}
    result = remap_dataset(new, source=old)
    assert result.counts == {"episode_labels": 3, "outcomes": 1, "segments": 1}
    assert [el.read_labels(new)["episodes"][str(e)]["judge"]["note"] for e in range(3)] == [
        f"episode {e}" for e in range(3)
    ]
    assert get_outcome(new, 1)["outcome"] == "expert_success"
    assert sidecar_bytes(old) == before
    assert remap_dataset(new, source=old).already_applied
    el.annotate_episode(new, 0, quality="low", note="changed after the copy")
    other = shutil.copytree(old, tmp_path / "other")
    with pytest.raises(LabelValidationError, match="already holds"):  # not a copy of other's: never overwritten
        remap_dataset(new, source=other)
    assert el.read_labels(new)["episodes"]["0"]["judge"]["note"] == "changed after the copy"

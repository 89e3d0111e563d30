"""Regression tests from an adversarial review: remap under concurrency and against
fingerprints, stale detection for equal-length episodes, copied datasets, forked
children, blind grades, unbounded indices, null blocks, CLI errors."""

from __future__ import annotations

import multiprocessing as mp
import shutil
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.dataset.signature import metadata_digest
from strands_robots.errors import LabelsNotFoundError, LabelValidationError, SidecarError

TOY_VERDICTS = [{"episode": 0, "success": True}, {"episode": 1, "success": True}, {"episode": 2, "success": False}]


def _delete_first_episode(root: Path) -> None:
    """Rewrite meta/episodes the way LeRobot's delete_episodes([0]) renumbers it."""
    path = root / "meta/episodes/chunk-000/file-000.parquet"
    table = pq.read_table(path).slice(1)
    columns = {name: table.column(name) for name in table.column_names}
    columns["episode_index"] = pa.array([i - 1 for i in table.column("episode_index").to_pylist()], pa.int64())
    for name in ("dataset_from_index", "dataset_to_index"):
        columns[name] = pa.array([i - 90 for i in table.column(name).to_pylist()], pa.int64())
    pq.write_table(pa.table(columns), path)


def test_equal_length_episodes_are_stale_after_renumbering(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high")
    fingerprint = el.read_labels(toy_dataset)["episodes"]["1"]["fingerprint"]
    assert set(fingerprint) == {"length", "index_range", "tasks", "content", "meta"}
    assert fingerprint["meta"] == metadata_digest(toy_dataset)  # the metadata it was read from
    assert el.filter_episodes(toy_dataset) == [0, 1]
    _delete_first_episode(toy_dataset)
    stale = el.stale_episodes(toy_dataset)
    assert sorted(stale) == [0, 1, 2]
    assert "content" in stale[0] and "no longer in the dataset" in stale[2]
    with pytest.warns(el.StaleLabelsWarning):
        assert el.filter_episodes(toy_dataset) == []
    # the right mapping carries the labels across and clears the staleness
    with pytest.raises(LabelValidationError, match="would drop the labels of 1 episode"):
        el.remap(toy_dataset, {"1": 0, "2": 1})  # episode 0 was deleted: that must be said
    assert el.remap(toy_dataset, {"1": 0, "2": 1}, allow_drop=True) == 2
    assert el.stale_episodes(toy_dataset) == {}
    assert el.filter_episodes(toy_dataset) == [0]
    assert el.deterministic_verdict(toy_dataset, 1)["success"] is False


def test_a_mapping_that_contradicts_the_fingerprints_is_refused(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    before = (toy_dataset / "episode_labels.json").read_bytes()
    with pytest.raises(LabelValidationError, match="contradicts the labels' fingerprints"):
        el.remap(toy_dataset, {"0": 1, "1": 0, "2": 2})
    assert (toy_dataset / "episode_labels.json").read_bytes() == before


def _identity_remap(root: str, rounds: int) -> None:
    for _ in range(rounds):
        el.remap(root, {str(i): i for i in range(300)})


def test_remap_beside_a_writer_loses_nothing(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(300)])
    ctx = mp.get_context("forkserver")
    remapper = ctx.Process(target=_identity_remap, args=(str(root), 40))
    remapper.start()
    for episode in range(300):
        el.annotate_episode(root, episode, quality="medium")
    remapper.join(timeout=120)
    assert remapper.exitcode == 0
    document = el.read_labels(root)
    assert sum("judge" in r for r in document["episodes"].values()) == 300


def test_a_copied_dataset_keeps_journaled_labels(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(3000)])
    el.annotate_episode(root, 5, quality="low", note="journaled")
    assert (root / ".episode_labels.json.journal").exists()
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)  # new inodes and mtimes, same bytes
    assert el.read_labels(copy)["episodes"]["5"]["judge"]["note"] == "journaled"
    assert not list(copy.glob("*.stale-*"))


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


def test_a_blind_grade_survives_a_later_judge_label(tmp_path):
    root = tmp_path / "ds"
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(3)])
    for episode, grade in enumerate(["high", "low", "medium"]):
        el.review_episode(root, episode, decision="grade_only", reviewer="ana", quality=grade)
    for episode in range(3):
        el.annotate_episode(root, episode, quality="high")
    result = el.measure_agreement(root)
    assert result["episodes_compared"] == 3
    assert result["quality_agreement"] == pytest.approx(1 / 3)
    assert el.filter_episodes(root) == [0, 2]  # the human's low on episode 1 counts
    el.record_deterministic_verdicts(root, [{"episode": 1, "success": True, "steps": 5}])  # a new verdict
    assert el.filter_episodes(root) == [0, 1, 2]


@pytest.mark.parametrize(
    "entry, match",
    [
        ({"episode": 2**70, "success": True}, "largest episode_index"),
        ({"episode": 0, "success": True, "cumulative_reward": 10**400}, "finite"),
        ({"episode": 0, "success": True, "seed": 2**80}, "seed"),
    ],
)
def test_out_of_range_numbers_are_refused(tmp_path, entry, match):
    with pytest.raises(LabelValidationError, match=match):
        el.record_deterministic_verdicts(tmp_path, [entry])


@pytest.mark.parametrize(
    "document",
    [
        '{"schema_version": 1, "benchmark": "", "episodes": {"0": {"episode_index": 0, "deterministic": null}}}',
        '{"schema_version": 1, "benchmark": "", "episodes": {"0": {"episode_index": 0, "judge": null}}}',
        '{"schema_version": 1, "benchmark": 5, "episodes": {}}',
    ],
)
def test_hand_edited_null_blocks_are_refused_by_every_reader(tmp_path, document):
    (tmp_path / "episode_labels.json").write_text(document)
    for call in (el.read_labels, el.filter_episodes, lambda r: el.annotate_episode(r, 0, quality="low")):
        with pytest.raises(SidecarError):
            call(tmp_path)
    assert (tmp_path / "episode_labels.json").read_text() == document


runner = CliRunner()


def test_cli_without_a_sidecar_says_what_to_do(tmp_path):
    assert issubclass(LabelsNotFoundError, FileNotFoundError)
    for argv in (
        ["filter", str(tmp_path)],
        ["show", str(tmp_path)],
        ["annotate", str(tmp_path), "0", "--quality", "high"],
    ):
        result = runner.invoke(app, argv)
        assert result.exit_code != 0
        assert isinstance(result.exception, LabelsNotFoundError)
        assert "Record deterministic verdicts first" in str(result.exception)


def test_cli_filter_out_writes_the_chosen_format_and_reports_bad_paths(tmp_path):
    el.record_deterministic_verdicts(tmp_path, [{"episode": 3, "success": True}])
    el.annotate_episode(tmp_path, 3, quality="high")
    out = tmp_path / "args.txt"
    assert runner.invoke(app, ["filter", str(tmp_path), "--format", "lerobot", "--out", str(out)]).exit_code == 0
    assert out.read_text() == '--dataset.episodes="[3]"\n'
    result = runner.invoke(app, ["filter", str(tmp_path), "--out", str(tmp_path / "missing" / "x.json")])
    assert isinstance(result.exception, LabelValidationError)
    assert "writable" in str(result.exception)


def test_cli_remap_refuses_before_writing_when_any_sidecar_is_unusable(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    (toy_dataset / "episode_segments.json").write_text('{"something": "else"}')
    (toy_dataset / "mapping.json").write_text('{"0": 0, "1": 1, "2": 2}')
    before = (toy_dataset / "episode_labels.json").read_bytes()
    result = runner.invoke(app, ["remap", str(toy_dataset), str(toy_dataset / "mapping.json")])
    assert isinstance(result.exception, SidecarError)
    assert (toy_dataset / "episode_labels.json").read_bytes() == before


def test_reads_work_in_a_read_only_directory_and_writes_say_why_not(tmp_path, monkeypatch):
    import errno

    from strands_robots.errors import StorageError
    from strands_robots.storage import lock as lock_module

    el.record_deterministic_verdicts(tmp_path, [{"episode": 0, "success": True}])
    el.annotate_episode(tmp_path, 0, quality="high")

    class ReadOnlyLock:
        timeout = 1.0

        def acquire(self, timeout=None):
            raise OSError(errno.EROFS, "Read-only file system")

        def release(self):
            raise AssertionError("never acquired")

    monkeypatch.setattr(lock_module, "_file_lock", lambda sidecar: ReadOnlyLock())
    assert el.filter_episodes(tmp_path) == [0]
    assert el.read_labels(tmp_path)["episodes"]["0"]["judge"]["quality"] == "high"
    assert el.list_disputes(tmp_path) == []
    with pytest.raises(StorageError, match="--labels-dir"):
        el.annotate_episode(tmp_path, 0, quality="low")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"outcomes": "bogus"}, "expert_success"),
        ({"evaluation_membership": "tran"}, "Did you mean: 'tran' -> 'train'?"),
    ],
)
def test_a_typo_in_an_outcome_filter_is_refused_not_an_empty_list(tmp_path, kwargs, match):
    el.record_deterministic_verdicts(tmp_path, [{"episode": 0, "success": True}])
    el.annotate_episode(tmp_path, 0, quality="high")
    with pytest.raises(LabelValidationError, match=match):
        el.filter_episodes(tmp_path, **kwargs)


def test_a_sidecar_without_fingerprints_skips_the_stale_walk(toy_dataset, monkeypatch):
    """A file written by another tool (no fingerprints) beside meta/: filter never walks the
    whole document for staleness (that walk would load a 500 MB file into Python objects)."""
    from strands_robots.episode_labels import filtering

    el.record_deterministic_verdicts(toy_dataset, TOY_VERDICTS)
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high")
    calls = []
    monkeypatch.setattr(filtering, "stale_episodes", lambda *a, **k: calls.append(1) or {})
    assert el.filter_episodes(toy_dataset) == [0, 1]
    assert calls == [1]  # our own records carry fingerprints: checked
    document = el.read_labels(toy_dataset)
    for record in document["episodes"].values():
        del record["fingerprint"]
    el.open_store(toy_dataset).transform(lambda _old: document)
    assert el.filter_episodes(toy_dataset) == [0, 1]
    assert calls == [1]  # no fingerprints: not walked

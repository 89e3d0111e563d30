"""Labels are written only where asked (docs/sidecar-format.md, "Labels directory"): a ROOT that
is not a dataset is refused unless it is declared labels-only, a new --labels-dir is created,
errors name the right directory, and a read that fails creates no file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.errors import LabelsNotFoundError, RootNotFoundError
from tests.cli.test_cli_user_facing import cli, one_line


def _verdicts(tmp_path: Path) -> Path:
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps([{"episode": 0, "success": True}, {"episode": 1, "success": False}]))
    return path


def test_verdicts_on_a_folder_that_is_not_a_dataset_is_refused(tmp_path):
    folder = tmp_path / "not_a_dataset"
    folder.mkdir()
    done = cli("verdicts", folder, _verdicts(tmp_path))
    assert done.returncode == 2
    assert "has no LeRobot metadata" in one_line(done.stderr) and "--total-episodes" in one_line(done.stderr)
    assert list(folder.iterdir()) == []
    labels_only = cli("verdicts", folder, _verdicts(tmp_path), "--total-episodes", "4")
    assert labels_only.returncode == 0, labels_only.stderr
    assert sorted(el.read_labels(folder)["episodes"]) == ["0", "1"]
    beyond = cli("annotate", folder, 7, "--quality", "high", "--total-episodes", "4")
    assert beyond.returncode == 2 and "--total-episodes 4" in one_line(beyond.stderr)
    assert cli("annotate", folder, 0, "--quality", "high").returncode == 2  # still not a dataset


def test_a_new_labels_dir_is_created_and_errors_name_it(mixed_lengths, tmp_path):
    new = tmp_path / "labels" / "run1"
    (tmp_path / "labels").mkdir()
    done = cli("verdicts", mixed_lengths, _verdicts(tmp_path), "--labels-dir", new)
    assert done.returncode == 0, done.stderr
    assert (new / "episode_labels.json").is_file() and not (mixed_lengths / "episode_labels.json").exists()
    orphan = tmp_path / "gone" / "deeper"
    failed = cli("verdicts", mixed_lengths, _verdicts(tmp_path), "--labels-dir", orphan)
    message = one_line(failed.stderr)
    assert failed.returncode == 2 and f"Labels directory {orphan}" in message and "Dataset root" not in message
    assert not orphan.parent.exists()


def test_a_read_that_fails_creates_no_file(mixed_lengths, tmp_path):
    labels = tmp_path / "labels"
    labels.mkdir()
    before = sorted(p.name for p in mixed_lengths.rglob("*"))
    with pytest.raises(LabelsNotFoundError):
        el.filter_episodes(mixed_lengths, labels_dir=labels)
    with pytest.raises(LabelsNotFoundError):
        el.filter_episodes(mixed_lengths)
    assert list(labels.rglob("*")) == []
    assert sorted(p.name for p in mixed_lengths.rglob("*")) == before
    with pytest.raises(RootNotFoundError, match="Labels directory"):
        el.filter_episodes(mixed_lengths, labels_dir=tmp_path / "missing")


# --- every command that writes refuses a folder that is not a dataset --------------------------------

#: Each write command of ``strands-labels`` with the arguments it is run with on a folder that
#: is not a dataset (``{nd}``); ``{files}`` holds valid inputs, ``{out}`` a target outside.
WRITES = {
    "verdicts": ["verdicts", "{nd}", "{files}/verdicts.json"],
    "annotate": ["annotate", "{nd}", "0", "--quality", "high"],
    "resolve": ["resolve", "{nd}", "0", "--decision", "grade_only", "--quality", "high", "--reviewer", "a"],
    "remap": ["remap", "{nd}", "--deleted", "1"],
    "judge": ["judge", "{nd}"],
    "report": ["report", "{nd}", "--out", "{out}"],
    "outcome set": ["outcome", "set", "{nd}", "0", "--outcome", "success"],
    "outcome import": ["outcome", "import", "{nd}", "{files}/outcomes.jsonl"],
    "outcome split": ["outcome", "split", "{nd}"],
    "outcome verdicts": ["outcome", "verdicts", "{nd}", "--record"],
    "outcome export": ["outcome", "export", "{nd}"],
    "segments import": ["segments", "import", "{nd}", "{files}/segments.jsonl", "--annotator", "a"],
    "segments import-lerobot": ["segments", "import-lerobot", "{nd}"],
    "segments export-lerobot": ["segments", "export-lerobot", "{nd}", "--out", "{out}"],
    "ssc build": ["ssc", "build", "{nd}", "--out", "{out}"],
    "ssc check": ["ssc", "check", "{nd}", "--out", "{out}"],
}
#: Commands that write nothing of their own (``flush`` folds what is stored: nothing stored,
#: nothing created) and the two pages (they open the dataset before serving: tests/web).
NOT_WRITES = {
    "info", "filter", "agreement", "show", "flush", "disputes", "review", "segment",
    "outcome get", "outcome history", "outcome list", "outcome recovery", "ssc events",
    "segments validate", "segments show", "segments export", "segments pool", "segments templates", "segments page",
    "segments prefill", "segments agreement",
}  # fmt: skip
#: The commands that take ``--total-episodes`` (a labels-only root) and succeed with it.
LABELS_ONLY = {
    "verdicts": ["verdicts", "{nd}", "{files}/verdicts.json", "--total-episodes", "4"],
    "segments import": ["segments", "import", "{nd}", "{files}/segments.jsonl", "--annotator", "a", "--total-episodes", "4"],
}  # fmt: skip


def _commands() -> list[str]:
    import typer

    from strands_robots.cli.main import app

    def walk(command, prefix: tuple[str, ...] = ()):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from walk(sub, (*prefix, name))
        else:
            yield " ".join(prefix)

    return sorted(walk(typer.main.get_command(app)))


def test_every_command_is_classified_as_a_writer_or_not():
    assert sorted(WRITES.keys() | NOT_WRITES) == _commands()
    assert not WRITES.keys() & NOT_WRITES


@pytest.fixture
def not_a_dataset(tmp_path) -> dict[str, Path]:
    files = tmp_path / "files"
    files.mkdir()
    (files / "verdicts.json").write_text(json.dumps([{"episode": 0, "success": True}]))
    (files / "outcomes.jsonl").write_text(json.dumps({"episode_index": 0, "outcome": "success"}) + "\n")
    segments = {"episode_index": 0, "length": 10, "segments": [{"start": 0, "end": 10, "label": "pick up the cup"}]}
    (files / "segments.jsonl").write_text(json.dumps(segments) + "\n")
    nd = tmp_path / "not_a_dataset"
    nd.mkdir()
    return {"nd": nd, "files": files, "out": tmp_path / "out"}


def _run(argv: list[str], paths: dict[str, Path]):
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    return CliRunner().invoke(app, [a.format(**paths) for a in argv])


@pytest.mark.parametrize("command", sorted(WRITES))
def test_a_write_command_refuses_a_folder_that_is_not_a_dataset(not_a_dataset, command):
    from strands_robots.errors import LabelsError

    done = _run(WRITES[command], not_a_dataset)
    assert done.exit_code != 0, done.output
    assert isinstance(done.exception, LabelsError | SystemExit), repr(done.exception)
    message = one_line(done.output + (str(done.exception) if isinstance(done.exception, LabelsError) else ""))
    assert "meta" in message, message  # names the remedy: the dataset root, the folder holding meta/
    assert list(not_a_dataset["nd"].iterdir()) == [] and not not_a_dataset["out"].exists()


@pytest.mark.parametrize("command", sorted(LABELS_ONLY))
def test_a_declared_labels_only_root_is_written(not_a_dataset, command):
    done = _run(LABELS_ONLY[command], not_a_dataset)
    assert done.exit_code == 0, (done.output, done.exception)
    assert sorted(p.name for p in not_a_dataset["nd"].iterdir() if p.name != ".strands-labels") == [
        {"verdicts": "episode_labels.json", "segments import": "episode_segments.json"}[command]
    ]


def test_the_segments_cli_message_names_the_option(not_a_dataset):
    done = _run(WRITES["segments import"], not_a_dataset)
    message = one_line(str(done.exception))
    assert "`strands-labels segments import`" in message and "--total-episodes N" in message
    assert "total_episodes=" not in message


def test_the_python_writers_refuse_a_folder_that_is_not_a_dataset(not_a_dataset):
    from strands_robots import outcomes as oc
    from strands_robots import segments as sg
    from strands_robots.errors import DatasetError, EpisodeNotFoundError, LabelValidationError

    nd, files = not_a_dataset["nd"], not_a_dataset["files"]
    with pytest.raises(LabelValidationError, match=r"no LeRobot metadata.*total_episodes=N"):
        sg.import_segmentations(nd, files / "segments.jsonl", annotator="a")
    with pytest.raises(LabelValidationError, match=r"no LeRobot metadata"):
        sg.import_segmentations(nd, files / "segments.jsonl", annotator="a", dry_run=True)
    with pytest.raises(DatasetError, match="length"):
        sg.save_segmentation(nd, 0, [{"start": 0, "end": 10, "label": "pick up the cup"}], annotator="a")
    with pytest.raises(DatasetError, match="not a LeRobot dataset"):
        oc.split_by_groups(nd)
    with pytest.raises(DatasetError, match="not a LeRobot dataset"):
        oc.set_outcome(nd, 0, outcome="success")
    assert list(nd.iterdir()) == []
    with pytest.raises(LabelValidationError, match="total_episodes=0 is not a whole number of at least 1"):
        sg.import_segmentations(nd, files / "segments.jsonl", annotator="a", total_episodes=0)
    report = sg.import_segmentations(nd, files / "segments.jsonl", annotator="a", total_episodes=4)
    assert [(r.episode_index, r.status) for r in report.episodes] == [(0, "imported")]
    assert sg.get_segmentation(nd, 0)["length"] == 10
    beyond = [{"episode_index": 4, "length": 10, "segments": [{"start": 0, "end": 10, "label": "pick up the cup"}]}]
    refused = sg.import_segmentations(nd, beyond, annotator="a", total_episodes=4)
    assert refused.episodes[0].status == "failed" and "episodes 0-3" in refused.episodes[0].errors[0]
    no_length = [{"episode_index": 1, "segments": [{"start": 0, "end": 10, "label": "pick up the cup"}]}]
    refused = sg.import_segmentations(nd, no_length, annotator="a", total_episodes=4)
    assert 'add "length": <frames> to its line' in refused.episodes[0].errors[0]
    assert EpisodeNotFoundError  # the beyond-count refusal's type, reported per episode


def test_flush_and_failed_reads_create_nothing(not_a_dataset, mixed_lengths):
    for root in (not_a_dataset["nd"], mixed_lengths):
        before = sorted(p.name for p in root.rglob("*"))
        for argv in (["flush", str(root)], ["filter", str(root)], ["show", str(root)]):
            _run(argv, not_a_dataset)
        assert el.flush(root) is False
        assert sorted(p.name for p in root.rglob("*")) == before


# --- an output file is never written through a link at its name -----------------------------------

#: Every file a command writes at a name the person gives (``{link}``) or at its default name
#: beside the dataset (``OUTPUT_DEFAULTS``), with the arguments it is run with.
OUTPUTS = {
    "filter --out": ["filter", "{ds}", "--out", "{link}"],
    "segments export --out": ["segments", "export", "{ds}", "--out", "{link}"],
    "outcome export --out": ["outcome", "export", "{ds}", "--out", "{link}"],
    "outcome export": ["outcome", "export", "{ds}"],
    "ssc build --out": ["ssc", "build", "{ds}", "--gripper", "right=observation.state:kRightHandIndex", "--out", "{link}"],
    "ssc check --out": ["ssc", "check", "{ds}", "--gripper", "right=observation.state:kRightHandIndex", "--out", "{link}"],
}  # fmt: skip
OUTPUT_DEFAULTS = {"outcome export": "meta/avala_sequence_outcomes.jsonl"}


@pytest.fixture(scope="module")
def labelled_copy(tmp_path_factory) -> Path:
    from strands_robots import outcomes as oc
    from strands_robots import segments as sg
    from tests.conftest import toy_copy

    root = toy_copy(tmp_path_factory.mktemp("outputs") / "ds")
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(3)])
    el.annotate_episode(root, 0, quality="high")
    oc.set_outcome(root, 0, outcome="expert_success", labeled_by="tester")
    segments = [
        {"start": 0, "end": 30, "template_id": "P1", "slots": {"theme": "yellow bottle", "source": "table"}},
        {"start": 30, "end": 60, "template_id": "L2", "slots": {"theme": "yellow bottle", "destination": "table"}},
        {"start": 60, "end": 90, "template_id": "TASK_COMPLETE", "slots": {}, "modifiers": {}, "note": None},
    ]
    sg.save_segmentation(root, 0, segments, annotator="tester")
    el.flush(root)
    return root


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
@pytest.mark.parametrize("command", OUTPUTS)
def test_an_output_is_refused_by_name_where_a_link_stands(labelled_copy, tmp_path, command, dangling):
    from typer.testing import CliRunner

    from strands_robots.cli.main import app
    from strands_robots.errors import SidecarError

    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim"
    if not dangling:
        victim.write_bytes(b"not yours")
    link = labelled_copy / OUTPUT_DEFAULTS[command] if command in OUTPUT_DEFAULTS else tmp_path / "out.json"
    link.symlink_to(victim)
    try:
        args = [a.format(ds=labelled_copy, link=link) for a in OUTPUTS[command]]
        result = CliRunner().invoke(app, args)
    finally:
        link.unlink()
    assert isinstance(result.exception, SidecarError), (result.exception, result.output[-500:])
    assert str(link) in str(result.exception) and "symbolic link" in str(result.exception)
    assert sorted(p.name for p in outside.iterdir()) == ([] if dangling else ["victim"])
    assert dangling or victim.read_bytes() == b"not yours"
    done = CliRunner().invoke(app, args)  # the link removed, as the message says: the file is written there
    assert done.exit_code == 0, (done.exception, done.output[-500:])
    assert link.is_file() and not link.is_symlink()
    link.unlink()

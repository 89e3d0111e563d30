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

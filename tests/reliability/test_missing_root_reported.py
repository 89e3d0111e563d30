"""A missing dataset root (or labels_dir) is reported as such, not as "no sidecar yet".

``RootNotFoundError`` is also a ``FileNotFoundError`` (0.5.3's type for it), so code that
means "no sidecar" catches ``LabelsNotFoundError`` only: the judge runner, the review
server and the report (docs/architecture.md, "One store contract").
"""

from __future__ import annotations

import shutil

import pytest

from strands_robots import episode_labels as el
from strands_robots.errors import LabelsNotFoundError, RootNotFoundError
from tests.web.conftest import TOKEN, client_for


def test_the_judge_runner_names_a_missing_root(tmp_path, toy_dataset):
    from strands_robots.errors import DatasetError
    from strands_robots.judges.runner import NoVerdictsError, select_episodes

    with pytest.raises(RootNotFoundError, match="is not an existing directory") as missing:
        select_episodes(tmp_path / "gone")
    assert not isinstance(missing.value, LabelsNotFoundError)
    with pytest.raises(NoVerdictsError, match="no verdicts to judge on top of"):
        select_episodes(toy_dataset)  # the dataset exists, the sidecar does not
    with pytest.raises(DatasetError, match="is not a LeRobot dataset"):
        select_episodes(tmp_path)  # neither a sidecar nor a dataset: the folder is named as not a dataset


def test_the_report_names_a_missing_root(tmp_path, toy_dataset):
    from strands_robots.errors import DatasetError
    from strands_robots.report import NoLabelsError, write_report

    with pytest.raises(RootNotFoundError, match="is not an existing directory"):
        write_report(tmp_path / "gone")
    with pytest.raises(RootNotFoundError, match="is not an existing directory"):
        write_report(toy_dataset, labels_dir=tmp_path / "no-such-labels-dir")
    with pytest.raises(NoLabelsError, match="no episode_labels.json"):
        write_report(toy_dataset)
    (tmp_path / "plain").mkdir()
    with pytest.raises(DatasetError, match="is not a LeRobot dataset"):
        write_report(tmp_path / "plain")


def test_the_review_server_reports_a_missing_labels_dir(tmp_path, toy_dataset):
    labels = tmp_path / "labels"
    labels.mkdir()
    el.record_deterministic_verdicts(toy_dataset, [{"episode": 0, "success": True}], labels_dir=labels)
    client = client_for(toy_dataset, labels_dir=labels)
    assert client.get("/api/episodes/0", headers={"x-labels-token": TOKEN}).json()["deterministic"]["success"] is True
    shutil.rmtree(labels)  # the labels directory goes while the server runs
    answer = client.get("/api/episodes/0", headers={"x-labels-token": TOKEN})
    assert answer.status_code == RootNotFoundError.http_status
    assert "is not an existing directory" in answer.json()["error"]
    assert "No label sidecar" not in answer.json()["error"]
    labels.mkdir()  # an empty labels directory: no sidecar yet, shown as unlabelled
    answer = client.get("/api/episodes/0", headers={"x-labels-token": TOKEN})
    assert answer.status_code == 200 and answer.json()["deterministic"] is None


def test_the_segment_rule_input_names_a_missing_labels_dir(tmp_path, toy_dataset):
    """TASK_COMPLETE asks whether an episode failed; a labels_dir that is not there is said so
    (read as "no labels", the rule would pass unchecked)."""
    from strands_robots.segments.success import failed_episodes

    assert failed_episodes(toy_dataset) == {}  # no sidecar at all: nothing known
    with pytest.raises(RootNotFoundError, match="is not an existing directory"):
        failed_episodes(toy_dataset, labels_dir=tmp_path / "gone")
    with pytest.raises(RootNotFoundError, match="is not an existing directory"):
        failed_episodes(tmp_path / "gone")

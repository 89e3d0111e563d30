"""One error class per failure, each carrying its remedy and HTTP status (strands_robots/errors.py)."""

from __future__ import annotations

import pickle

import pytest

from strands_robots import errors
from strands_robots.dataset import MissingFileError
from strands_robots.dataset.hub import HubDatasetError
from strands_robots.judges.runner import NoVerdictsError
from strands_robots.report import NoLabelsError
from strands_robots.report.figures import ReportDependencyError
from strands_robots.tools.envelope import MissingVideoError, ToolInputError, error, remedy_for
from strands_robots.web.context import RequestError, error_status


def test_duplicates_are_one_class_each():
    assert NoLabelsError is NoVerdictsError is errors.LabelsNotFoundError
    assert ReportDependencyError is errors.MissingExtraError
    from strands_robots.cli.web import MissingExtraError

    assert MissingExtraError is errors.MissingExtraError
    assert MissingVideoError is MissingFileError is errors.MissingFileError
    assert issubclass(errors.LabelsNotFoundError, FileNotFoundError)
    assert issubclass(errors.MissingExtraError, ImportError)
    assert issubclass(errors.MissingFileError, errors.DatasetError)
    assert issubclass(errors.MissingFileError, FileNotFoundError)


@pytest.mark.parametrize(
    ("exc", "remedy_part", "status"),
    [
        (errors.UnsafeRootError("x"), "inside the allowed roots", 500),
        (errors.EpisodeNotFoundError("x"), "use an episode_index the dataset has", 404),
        (MissingVideoError("x", remedy="call sample_frames with include_images=false"), "include_images=false", 404),
        (MissingFileError("x"), "the dataset cannot be read as asked", 404),
        (errors.FrameDecodeError("x"), "retry with include_images=false", 422),
        (ToolInputError("x"), "call the tool again", 422),
        (errors.LabelValidationError("x"), "call the tool again", 422),
        (errors.DatasetError("x"), "the dataset cannot be read as asked", 422),
        (HubDatasetError("x"), "the dataset cannot be read as asked", 409),
        (errors.LabelsNotFoundError("x"), "record the verdicts first", 409),
        (FileNotFoundError("x"), "record the verdicts first", 409),
        (errors.SidecarError("x"), "move the unusable episode_labels.json away", 409),
        (errors.RemapConflictError("x"), "move the unusable episode_labels.json away", 409),
        (errors.StorageError("x"), "nothing changed; retry later", 503),
        (errors.MissingExtraError("x"), "fix the input as the message says", 500),
        (RequestError("x", 413), "fix the input as the message says", 413),
        (RuntimeError("x"), "this is unexpected", 500),
    ],
)
def test_remedy_and_status_come_from_the_class(exc, remedy_part, status):
    assert remedy_part in remedy_for(exc)
    assert error_status(exc) == status


def test_instance_remedy_survives_pickling_and_is_rendered():
    exc = MissingFileError("the video is missing.", remedy="restore the file.")
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is MissingFileError and str(again) == "the video is missing."
    assert again.remedy == "restore the file."
    assert MissingFileError.remedy != "restore the file."  # the class default is untouched
    text = error("sample_frames", 3, str(again), remedy_for(again))["content"][0]["text"]
    assert text == "sample_frames failed for episode 3: the video is missing. Remedy: restore the file."

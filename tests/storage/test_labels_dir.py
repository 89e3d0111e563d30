"""A labels directory is keyed to its dataset: a second dataset is refused, the same one passes."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.errors import LabelsDirMismatchError
from strands_robots.outcomes import set_outcome
from strands_robots.segments import save_segmentation
from strands_robots.storage.side_files import labels_dir_key_path as key_path
from tests.storage.remap_helpers import delete_episodes_meta
from tests.synth import make_v3_dataset


@pytest.fixture
def two(tmp_path):
    a = make_v3_dataset(tmp_path / "a", [90, 90, 90], tasks=("pick up the cube",))
    b = make_v3_dataset(tmp_path / "b", [60, 70], tasks=("open the drawer",))
    labels = tmp_path / "labels"
    labels.mkdir()
    el.record_deterministic_verdicts(a, [{"episode": i, "success": True} for i in range(3)], labels_dir=labels)
    return a, b, labels


def _files(directory):
    files = (p for p in directory.rglob("*") if p.is_file() and not p.name.endswith(".lock"))
    return {str(p.relative_to(directory)): p.read_bytes() for p in files}


def test_the_first_dataset_keys_the_directory(two):
    a, _, labels = two
    key = json.loads(key_path(labels).read_text())
    assert key["root"] == str(a) and key["episodes"] == 3 and len(key["sample"]) == 3
    # the sidecar itself gains nothing: it stays the 0.5.3 layout
    assert set(json.loads((labels / "episode_labels.json").read_text())) == {"schema_version", "benchmark", "episodes"}


def test_a_second_dataset_is_refused_by_every_store(two):
    _, b, labels = two
    before = _files(labels)
    writes = [
        lambda: el.record_deterministic_verdicts(b, [{"episode": 0, "success": False}], labels_dir=labels),
        lambda: el.annotate_episode(b, 0, quality="low", labels_dir=labels),
        lambda: el.filter_episodes(b, labels_dir=labels),
        lambda: set_outcome(b, 0, outcome="failure", labels_dir=labels),
        lambda: save_segmentation(
            b, 0, [{"start": 0, "end": 60, "label": "open the drawer"}], annotator="x", labels_dir=labels
        ),
    ]
    for write in writes:
        with pytest.raises(LabelsDirMismatchError) as info:
            write()
        assert "Use a different --labels-dir" in str(info.value) and str(b) in str(info.value)
    assert _files(labels) == before


def test_the_cli_names_the_remedy(two):
    _, b, labels = two
    result = CliRunner().invoke(app, ["show", str(b), "--labels-dir", str(labels)])
    assert isinstance(result.exception, LabelsDirMismatchError)
    assert "different --labels-dir" in str(result.exception)


def test_the_same_dataset_moved_or_edited_still_passes(two, tmp_path):
    a, _, labels = two
    moved = tmp_path / "moved"
    shutil.copytree(a, moved)
    el.annotate_episode(moved, 1, quality="high", labels_dir=labels)
    delete_episodes_meta(moved, [0])
    assert el.read_labels(moved, labels_dir=labels)["episodes"]["1"]["judge"]["quality"] == "high"
    el.annotate_episode(a, 2, quality="low", labels_dir=labels)  # the original root, of course


def test_without_labels_dir_or_metadata_nothing_is_keyed(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [30])
    el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    assert not key_path(root).exists()
    bare, labels = tmp_path / "bare", tmp_path / "l2"
    bare.mkdir()
    labels.mkdir()
    el.record_deterministic_verdicts(bare, [{"episode": 0, "success": True}], labels_dir=labels)
    assert not key_path(labels).exists()

"""The label commands of ``strands_robots.cli.labels`` through typer's runner: without a
sidecar ``filter``, ``show`` and ``annotate`` name the first step; ``filter --out`` writes
the chosen format and names a path it cannot write; ``remap`` checks every sidecar before
it writes any, so an unusable or refusing store leaves every store as it was."""

from __future__ import annotations

from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.errors import LabelsNotFoundError, LabelValidationError, SidecarError
from strands_robots.outcomes import current_outcomes, set_outcome
from strands_robots.segments import get_segmentation, save_segmentation
from tests.episode_labels.helpers import TOY_VERDICTS

runner = CliRunner()


def test_cli_without_a_sidecar_says_what_to_do(tmp_path):
    assert issubclass(LabelsNotFoundError, FileNotFoundError)
    for argv in (
        ["filter", str(tmp_path)],
        ["show", str(tmp_path)],
        ["annotate", str(tmp_path), "0", "--quality", "high", "--total-episodes", "1"],  # a labels-only root
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


def test_cli_remap_checks_every_store_before_writing_any(mixed_lengths):
    root = mixed_lengths
    set_outcome(root, 3, outcome="expert_success")
    save_segmentation(root, 3, [{"start": 0, "end": 90, "label": "pick up the cube from the table"}], annotator="a")
    (root / "mapping.json").write_text('{"3": 0}')  # episode 0 has 60 frames: segments refuse it
    result = runner.invoke(app, ["remap", str(root), str(root / "mapping.json")])
    assert result.exit_code != 0
    assert sorted(current_outcomes(root)) == [3]  # outcomes were not moved either
    assert get_segmentation(root, 3)["length"] == 90

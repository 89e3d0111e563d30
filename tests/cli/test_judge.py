"""``judge --ray [ADDRESS]``: the optional address, its alias ``--ray-address``, and ROOT never swallowed.

What reaches ``run_judge`` is recorded (the Ray run itself is tests/distributed/).
"""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

import strands_robots.judges.runner as runner
from strands_robots.cli.main import app


@pytest.fixture
def judged(monkeypatch, toy_dataset):
    """Run ``strands-labels judge ARGS`` ({root} = the toy dataset); return what run_judge was given."""
    calls: list[tuple[str, str, str | None]] = []

    def record(root, **options):  # noqa: ANN001
        calls.append((str(root), options["executor"], options["ray_address"]))
        raise typer.Exit(0)

    monkeypatch.setattr(runner, "run_judge", record)

    def invoke(*args: str):
        result = CliRunner().invoke(app, ["judge", *(a.format(root=toy_dataset) for a in args)])
        return result, calls.pop() if calls else None

    return invoke, str(toy_dataset.resolve())


@pytest.mark.parametrize(
    ("args", "address"),
    [
        (["--ray", "{root}"], None),
        (["{root}", "--ray"], None),
        (["--ray", "--workers", "2", "{root}"], None),
        (["--ray", "auto", "{root}"], "auto"),
        (["{root}", "--ray", "auto"], "auto"),
        (["--ray=ray://head:10001", "{root}"], "ray://head:10001"),
        (["--ray", "ray://head:10001", "{root}"], "ray://head:10001"),
        (["{root}", "--ray", "10.0.0.5:6379", "--limit", "3"], "10.0.0.5:6379"),
        (["--ray", "local", "{root}"], "local"),
        (["--ray-address", "auto", "{root}"], "auto"),
        (["{root}", "--ray-address=ray://head:10001"], "ray://head:10001"),
        (["--ray", "auto", "--ray-address", "auto", "{root}"], "auto"),
    ],
)
def test_ray_takes_an_optional_address_and_never_root(judged, args, address):
    invoke, root = judged
    result, call = invoke(*args)
    assert result.exit_code == 0, result.output
    assert call == (root, "ray", address)


def test_without_ray_the_thread_executor_runs(judged):
    invoke, root = judged
    result, call = invoke("{root}", "--workers", "2")
    assert result.exit_code == 0, result.output
    assert call == (root, "thread", None)


def test_two_different_clusters_are_refused_before_anything_runs(judged):
    invoke, _ = judged
    result, call = invoke("--ray", "auto", "--ray-address", "ray://head:10001", "{root}")
    assert result.exit_code == 2 and call is None
    assert "name different clusters; pass one of them" in result.output


def test_help_shows_the_optional_address():
    result = CliRunner().invoke(app, ["judge", "--help"], terminal_width=200)
    assert "--ray [ADDRESS]" in result.output and "--ray-address ADDRESS" in result.output

"""A ROOT an in-place ``lerobot-edit-dataset`` left without sidecars (they moved, with the
original dataset, to ``ROOT_old``): every command that reads labels says so and prints the
command that carries them (docs/editing.md, "Before the remap")."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli_writes_only_where_asked import NOT_WRITES, _commands
from tests.storage.remap_helpers import delete_episodes_files, labelled_dataset

#: Every command that reads labels and does not serve a page, run on ROOT (``{root}``).
READS = {
    "info": ["info", "{root}"],
    "filter": ["filter", "{root}"],
    "agreement": ["agreement", "{root}"],
    "show": ["show", "{root}"],
    "flush": ["flush", "{root}"],
    "disputes": ["disputes", "{root}"],
    "outcome get": ["outcome", "get", "{root}", "0"],
    "outcome history": ["outcome", "history", "{root}", "1"],
    "outcome list": ["outcome", "list", "{root}"],
    "outcome recovery": ["outcome", "recovery", "{root}"],
    "ssc events": ["ssc", "events", "{root}"],
    "segments validate": ["segments", "validate", "{root}"],
    "segments show": ["segments", "show", "{root}"],
    "segments export": ["segments", "export", "{root}"],
    "segments pool": ["segments", "pool", "{root}", "--episode", "0"],
    "segments prefill": ["segments", "prefill", "{root}", "0"],
    "segments agreement": ["segments", "agreement", "{root}", "--proposed", "a1", "--reviewed", "b"],
}
#: The pages: they say it before serving (tested below); ``segments templates`` takes no ROOT.
PAGES = {"review", "segment", "segments page"}


@pytest.fixture(scope="module")
def moved(tmp_path_factory) -> tuple[Path, Path]:
    """``ds``: a dataset after an in-place delete of episode 1, its sidecars in ``ds_old``."""
    base = tmp_path_factory.mktemp("moved")
    old = labelled_dataset(base / "build", 5)
    root = base / "ds"
    shutil.copytree(old / "meta", root / "meta")
    shutil.copytree(old / "data", root / "data")
    delete_episodes_files(root, [1])
    old.rename(base / "ds_old")
    return root, base / "ds_old"


def test_every_reading_command_is_listed():
    assert sorted(READS.keys() | PAGES | {"segments templates"}) == sorted(NOT_WRITES)
    assert set(READS) <= set(_commands())


@pytest.mark.parametrize("command", sorted(READS))
def test_a_reading_command_names_the_remap_once(moved, command):
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    root, old = moved
    before = sorted(p.name for p in root.iterdir())
    done = CliRunner().invoke(app, [a.format(root=root) for a in READS[command]])
    carry = f"strands-labels remap {root} --from {old}"
    said = " ".join((done.stderr + " " + str(done.exception or "")).split())
    assert said.count(carry) == 1, (done.exit_code, done.stdout, said)
    assert done.stdout.count(carry) == 0  # stdout stays what scripts parse
    assert sorted(p.name for p in root.iterdir()) == before


@pytest.mark.parametrize("page", ["review", "segments page"])
def test_a_page_says_it_before_serving(moved, page):
    pytest.importorskip("uvicorn")
    root, old = moved
    argv = [sys.executable, "-m", "strands_robots.cli.main", *page.split(), str(root), "--port", "0"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as server:
        try:
            assert "http://127.0.0.1:" in server.stdout.readline()  # serving
        finally:
            server.terminate()
        _, err = server.communicate(timeout=30)
    assert f"strands-labels remap {root} --from {old}" in " ".join(err.split())


def test_no_note_where_the_root_holds_sidecars(moved, tmp_path):
    """A root with sidecars of its own (carried, or never edited) gets no note."""
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    root, old = moved
    copy = shutil.copytree(root, tmp_path / "ds")
    shutil.copytree(old, tmp_path / "ds_old")
    assert (
        CliRunner().invoke(app, ["remap", str(copy), "--from", str(tmp_path / "ds_old"), "--allow-drop"]).exit_code == 0
    )
    done = CliRunner().invoke(app, ["outcome", "list", str(copy)])
    assert done.exit_code == 0 and "remap" not in done.stderr, done.stderr


def test_a_writer_starting_new_sidecars_there_warns_that_the_carry_will_refuse(moved, tmp_path):
    """``verdicts ROOT FILE`` on such a root writes (a person may start afresh) and says that
    ``remap ROOT --from ROOT_old`` now refuses until the new sidecars are moved away."""
    from typer.testing import CliRunner

    from strands_robots.cli.main import app

    root, old = moved
    copy, old_copy = shutil.copytree(root, tmp_path / "ds"), shutil.copytree(old, tmp_path / "ds_old")
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text('[{"episode": 0, "success": true}]')
    done = CliRunner().invoke(app, ["verdicts", str(copy), str(verdicts)])
    said = " ".join(done.stderr.split())
    assert done.exit_code == 0 and (copy / "episode_labels.json").is_file(), done.output
    assert f"started new sidecars in {copy.resolve()}" in said and f"--from {old_copy.resolve()}` now refuses" in said
    refused = CliRunner().invoke(app, ["remap", str(copy), "--from", str(old_copy), "--allow-drop"])
    assert "already holds" in str(refused.exception)  # as the warning said
    again = CliRunner().invoke(app, ["verdicts", str(copy), str(verdicts)])
    assert again.exit_code == 0 and "remap" not in again.stderr  # said once: the root holds sidecars now

"""``--revision`` on every command that takes ROOT, as ``ROOT@REV`` and as the global option."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.dataset.hub import HubDatasetError, resolve_root


def commands_taking_root() -> list[tuple[str, object]]:
    out = []

    def walk(command, path: str) -> None:  # noqa: ANN001 - typer's (possibly vendored) click Command
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}".strip())
        elif any(p.name == "root" for p in command.params):
            out.append((path, command))

    walk(typer.main.get_command(app), "")
    return out


def test_every_command_taking_root_takes_revision():
    commands = commands_taking_root()
    names = [name for name, _ in commands]
    assert {"info", "judge", "verdicts", "filter", "show", "review", "segment", "report"} <= set(names)
    assert any(n.startswith("outcome ") for n in names) and any(n.startswith("segments ") for n in names)
    for name, command in commands:
        options = {opt for p in command.params for opt in getattr(p, "opts", [])}
        assert "--revision" in options, f"{name} takes ROOT but not --revision"
        (revision,) = [p for p in command.params if p.name == "revision"]
        assert revision.is_eager  # resolved before ROOT wherever it is typed


def info_hub(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["hub"]


@pytest.mark.parametrize(
    "args",
    [
        ["info", "lerobot/so101", "--revision", "v3.0", "--json"],
        ["info", "--revision", "v3.0", "lerobot/so101", "--json"],
        ["info", "lerobot/so101@v3.0", "--json"],
        ["info", "lerobot/so101@v3.0", "--revision", "v3.0", "--json"],
        ["--revision", "v3.0", "info", "lerobot/so101", "--json"],
        ["--revision", "main", "info", "lerobot/so101", "--revision", "v3.0", "--json"],  # the command's wins
    ],
)
def test_the_revision_keys_the_labels_dir_however_it_is_spelled(hub_cache, tmp_path, args):
    hub = info_hub(*args)
    assert hub["revision"] == "v3.0"
    assert hub["labels_dir"] == str(tmp_path / "labels" / "hub" / "lerobot" / "so101" / "v3.0")


def test_commands_write_labels_under_their_revision(hub_cache, tmp_path):
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps([{"episode": e, "success": True} for e in range(4)]))
    runner = CliRunner()
    result = runner.invoke(app, ["verdicts", "lerobot/so101", str(verdicts), "--revision", "v3.0"])
    assert result.exit_code == 0, result.output
    labels = tmp_path / "labels" / "hub" / "lerobot" / "so101"
    assert (labels / "v3.0" / "episode_labels.json").is_file()
    assert not (labels / "main" / "episode_labels.json").exists()
    shown = runner.invoke(app, ["show", "--revision", "v3.0", "lerobot/so101"])
    assert shown.exit_code == 0, shown.output
    missing = runner.invoke(app, ["show", "lerobot/so101"])  # main has no labels yet
    assert missing.exit_code != 0
    outcomes = runner.invoke(app, ["outcome", "list", "lerobot/so101", "--revision", "v3.0"])
    assert outcomes.exit_code == 0, outcomes.output


def test_two_revisions_or_a_revision_of_a_path_are_refused(hub_cache, tmp_path, copy_dataset, shared_dataset):
    result = CliRunner().invoke(app, ["info", "lerobot/so101@v2", "--revision", "v3.0"])
    assert result.exit_code == 2 and "names revision v2 and revision v3.0 was given too" in result.output
    with pytest.raises(HubDatasetError, match="pass one of them"):
        resolve_root("lerobot/so101@v2", "v3.0")
    root = copy_dataset(shared_dataset("so101-record-test-v30"))
    result = CliRunner().invoke(app, ["info", str(root), "--revision", "v3.0"])
    assert result.exit_code == 2 and "applies to a Hub repo id" in result.output


BAD_REVISIONS = ["..", ".", "../x", "a/../b", "x/..", "a//b", "/main", "main/", ".hidden", "x.lock", "a b", "a~1",
                 "a:b", "@", "a@{1}", "r" * 256, "a\\b", "tab\there"]  # fmt: skip


def _tree(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


@pytest.mark.parametrize("revision", BAD_REVISIONS)
def test_a_revision_that_is_no_git_ref_is_refused_before_any_path_is_built(hub_cache, tmp_path, revision):
    from strands_robots.dataset.hub import check_revision, hub_labels_dir, local_copy_of

    labels_home = tmp_path / "labels"
    before = _tree(labels_home)
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps([{"episode": 0, "success": True}]))
    runner = CliRunner()
    for args in (
        ["info", f"lerobot/so101@{revision}", "--json"],
        ["info", "lerobot/so101", "--revision", revision, "--json"],
        ["verdicts", f"lerobot/so101@{revision}", str(verdicts)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "pass a branch, tag or commit id" in result.output
    for call in (
        lambda: resolve_root(f"lerobot/so101@{revision}"),
        lambda: resolve_root("lerobot/so101", revision),
        lambda: hub_labels_dir("lerobot/so101", revision),
        lambda: local_copy_of(f"lerobot/so101@{revision}"),
        lambda: check_revision(revision),
    ):
        with pytest.raises(HubDatasetError, match="pass a branch, tag or commit id"):
            call()
    assert _tree(labels_home) == before  # no directory made, at the owner level or anywhere


@pytest.mark.parametrize("revision", ["main", "v3.0", "refs/pr/1", "a" * 40, "feature/x.y", "release-1.2"])
def test_branches_tags_pull_requests_and_commits_are_revisions(hub_cache, tmp_path, revision):
    from strands_robots.dataset.hub import check_revision, hub_labels_dir

    assert check_revision(revision) == revision
    labels = hub_labels_dir("lerobot/so101", revision)
    assert labels.parent == tmp_path / "labels" / "hub" / "lerobot" / "so101"  # one component, always
    root, hub = resolve_root(f"lerobot/so101@{revision}")
    assert hub is not None and hub.labels_dir == labels and labels.is_dir()

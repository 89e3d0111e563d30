"""What a new user sees: user data printed as typed, filters that say what they dropped,
verdict checks, help texts. Run through the real console script (``main.run``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.outcomes import set_outcome


def cli(*args: object, columns: int = 80) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(columns)},
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


# --- user data is never parsed as rich markup -----------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["data[/x]set", "pip install 'strands-agents[ollama]'", "a[bold]b[/bold]c", "[red]x"],
)
def test_paths_with_brackets_print_as_typed(tmp_path, name):
    root = tmp_path / name
    root.mkdir(parents=True)
    done = cli("info", root)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{root}/meta/info.json not found" in done.stderr


def test_labels_errors_with_markup_like_text_are_printed_literally(monkeypatch, capsys):
    from strands_robots.cli import main
    from strands_robots.errors import LabelValidationError

    def boom() -> None:
        raise LabelValidationError("needs strands-agents: pip install 'strands-agents[ollama]' [/x] [bold]done")

    monkeypatch.setattr(main, "app", boom)
    with pytest.raises(SystemExit) as exit_info:
        main.run()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "pip install 'strands-agents[ollama]' [/x] [bold]done" in err


def test_notes_with_markup_show_literally_in_tables(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, [{"episode": 0, "success": True}])
    el.annotate_episode(toy_dataset, 0, quality="low", note="see [/x] and [red]here :x:", success_opinion=False)
    el.flush(toy_dataset)
    done = cli("disputes", toy_dataset)
    assert done.returncode == 0, done.stderr
    assert "[/x]" in done.stdout and "[red]here" in done.stdout
    assert ":x:" in done.stdout and "\N{CROSS MARK}" not in done.stdout  # nor an emoji code


# --- filter explains what it dropped; held-out episodes stay out --------------------------------


def _labelled(root: Path) -> Path:
    el.record_deterministic_verdicts(
        root,
        [{"episode": 0, "success": True}, {"episode": 1, "success": True}, {"episode": 2, "success": False}],
    )
    el.annotate_episode(root, 0, quality="high")
    el.annotate_episode(root, 1, quality="low")
    el.annotate_episode(root, 2, quality="high")
    el.flush(root)
    return root


def test_filter_counts_drops_per_reason_on_stderr(toy_dataset):
    root = _labelled(toy_dataset)
    done = cli("filter", root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [0]
    assert "kept 1 episode; dropped 2: 1 failed, 1 below quality" in done.stderr
    explained = cli("filter", root, "--explain", "--min-quality", "high")
    assert "  failed: 2" in explained.stderr and "  below quality: 1" in explained.stderr


def test_overruled_verdicts_are_their_own_reason_and_show_in_show(toy_dataset):
    root = _labelled(toy_dataset)
    el.annotate_episode(root, 0, quality="high", success_opinion=False)
    el.review_episode(root, 0, decision="overrule_verdict", reviewer="ana", quality="medium")
    el.flush(root)
    done = cli("filter", root)
    assert json.loads(done.stdout) == []
    assert "1 overruled" in done.stderr
    narrow = cli("show", root).stdout
    assert "…" not in narrow and "(overruled" in narrow  # folded, never cut, at 80 columns
    table = cli("show", root, columns=200).stdout
    row = next(line for line in table.splitlines() if line.startswith("│ 0 "))
    assert "failure (overruled success)" in row and "medium (review; judge high)" in row
    record = json.loads(cli("show", root, 0).stdout)
    assert record["effective"] == {"success": False, "quality": "medium", "dispute_open": False}


def test_held_out_eval_episodes_never_enter_the_default_selection(toy_dataset):
    root = _labelled(toy_dataset)
    el.annotate_episode(root, 1, quality="high")
    set_outcome(root, 1, outcome="expert_success", evaluation_membership="held_out_eval")
    set_outcome(root, 0, outcome="expert_success", evaluation_membership="train")
    assert el.filter_episodes(root) == [0]
    assert el.filter_episodes(root, include_held_out=True) == [0, 1]
    assert el.filter_episodes(root, evaluation_membership="held_out_eval") == [1]
    done = cli("filter", root)
    assert json.loads(done.stdout) == [0] and "1 held out" in done.stderr
    assert json.loads(cli("filter", root, "--include-held-out").stdout) == [0, 1]
    # a later label that moves the episode to train brings it back
    set_outcome(root, 1, outcome="expert_success", evaluation_membership="train")
    assert el.filter_episodes(root) == [0, 1]


def test_the_held_out_check_names_the_outcome_sidecar():
    from strands_robots.outcomes.store import SIDECAR_NAME
    from strands_robots.selection import OUTCOMES_SIDECAR

    assert OUTCOMES_SIDECAR == SIDECAR_NAME


def test_explanation_agrees_with_the_filter(toy_dataset):
    from strands_robots.labels import open_labels
    from strands_robots.selection import DROP_REASONS

    root = _labelled(toy_dataset)
    set_outcome(root, 0, outcome="slow_success")
    for options in (
        {},
        {"require_success": False},
        {"min_quality": "low"},
        {"outcomes": ["expert_success"]},
        {"outcomes": "slow_success", "min_quality": "low"},
    ):
        result = open_labels(root).explain(**options)
        assert result["kept"] == el.filter_episodes(root, **options), options
        assert list(result["dropped"]) == list(DROP_REASONS)
        assert sorted(result["kept"] + sum(result["dropped"].values(), [])) == [0, 1, 2]


def test_outcome_filter_without_outcome_labels_is_an_error(toy_dataset):
    root = _labelled(toy_dataset)
    done = cli("filter", root, "--outcome", "expert_success")
    assert done.returncode == 2
    assert "has none" in done.stderr and "outcome set" in done.stderr


def test_lerobot_delete_format_lists_the_complement(toy_dataset):
    root = _labelled(toy_dataset)
    done = cli("filter", root, "--format", "lerobot-delete")
    assert done.stdout.strip() == '--operation.type delete_episodes --operation.episode_indices "[1,2]"'


# --- verdicts -----------------------------------------------------------------------------------


def test_success_and_failure_both_true_is_refused_and_nothing_stored(toy_dataset, tmp_path):
    file = tmp_path / "v.json"
    file.write_text(json.dumps([{"episode": 0, "success": True}, {"episode": 1, "success": True, "failure": True}]))
    done = cli("verdicts", toy_dataset, file)
    assert done.returncode == 2
    assert "episode 1" in done.stderr and "cannot be both" in done.stderr
    assert not (toy_dataset / "episode_labels.json").exists()


def test_rerecording_reports_changes_with_plurals(toy_dataset, tmp_path):
    file = tmp_path / "v.json"
    file.write_text(json.dumps([{"episode": 0, "success": True}]))
    first = one_line(cli("verdicts", toy_dataset, file).stdout)
    assert "recorded 1 verdict (1 success)" in first and "1 new, 0 changed, 0 unchanged" in first
    assert "1 episode has records" in first
    file.write_text(json.dumps([{"episode": 0, "success": False}, {"episode": 1, "success": True}]))
    second = one_line(cli("verdicts", toy_dataset, file).stdout)
    assert "recorded 2 verdicts" in second and "1 new, 1 changed, 0 unchanged" in second


# --- judge, info, agreement ----------------------------------------------------------------------


def test_judge_names_episodes_the_dataset_does_not_have(toy_dataset):
    el.record_deterministic_verdicts(toy_dataset, [{"episode": 0, "success": True}])
    el.flush(toy_dataset)
    done = cli("judge", toy_dataset, "--episodes", "0-9")
    assert done.returncode == 2
    text = one_line(done.stderr)
    assert "3-9" in text and "episode_index 0..2" in text and "verdict" not in text


def test_info_lists_non_camera_features(toy_dataset):
    out = cli("info", toy_dataset).stdout
    assert "  action  float32 26  26 names" in out
    assert json.loads(cli("info", toy_dataset, "--json").stdout)["features"]["action"]["shape"] == [26]


def test_agreement_warns_on_small_samples_and_lists_disagreements(toy_dataset, tmp_path):
    root = _labelled(toy_dataset)
    holdout = tmp_path / "human.json"
    holdout.write_text(json.dumps({"0": {"quality": "high"}, "1": {"quality": "medium"}}))
    done = cli("agreement", root, holdout)
    assert done.returncode == 0, done.stderr
    assert "only 2 episodes compared" in one_line(done.stderr)
    assert "1 disagreement" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("│ 1 "))
    assert "quality" in row and "low" in row and "medium" in row


# --- help ---------------------------------------------------------------------------------------


def test_version_flag():
    from strands_robots import __version__

    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"strands-labels {__version__}"


@pytest.mark.parametrize(
    ("command", "needle"),
    [
        (["disputes"], "--json Print JSON instead of text."),
        (["resolve"], "--note"),
        (["filter"], "Keep only successful episodes"),
    ],
)
def test_help_has_no_bool_metavar_and_no_empty_help(command, needle):
    from strands_robots.episode_labels import FAILURE_MODES

    out = cli(*command, "--help").stdout
    assert "<bool>" not in out and "…" not in out
    assert needle in one_line(out) or needle in out
    if command == ["resolve"]:
        flat = one_line(out)
        for option in ("--note", "--quality", "--failure-mode"):
            after = flat.split(option, 1)[1].split("--", 1)[0]
            assert len(after.split()) > 2, (option, after)
        assert all(mode in flat for mode in FAILURE_MODES)


def test_no_internal_jargon_in_any_help():
    from typer.main import get_command

    from strands_robots.cli.main import app

    group = get_command(app)
    texts = []

    def walk(command, path):
        texts.append(cli(*path, "--help").stdout)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(group, [])
    joined = "\n".join(texts)
    for word in ("seed 00", "issue ", "evaluate_benchmark", "<bool>"):
        assert word not in joined, word


# --- an episode the dataset does not have is named as such --------------------------------------


def test_annotate_and_resolve_name_an_episode_the_dataset_does_not_have(mixed_lengths):
    el.record_deterministic_verdicts(mixed_lengths, [{"episode": e, "success": True} for e in range(4)])
    el.flush(mixed_lengths)
    done = cli("annotate", mixed_lengths, 44, "--quality", "high")
    assert done.returncode == 2, done.stderr
    message = one_line(done.stderr)
    assert "has no episode 44 (it has 0-3)" in message and "nothing to annotate" in message
    resolved = cli("resolve", mixed_lengths, 44, "--decision", "grade_only", "--quality", "high", "--reviewer", "a")
    assert resolved.returncode == 2 and "has no episode 44 (it has 0-3)" in one_line(resolved.stderr)
    # an episode the dataset has, without a verdict, is still a missing verdict
    el.remap(mixed_lengths, {"0": 0, "1": 1, "2": 2}, allow_drop=True)
    el.flush(mixed_lengths)
    missing = cli("annotate", mixed_lengths, 3, "--quality", "high")
    assert missing.returncode == 2 and "No deterministic verdict recorded for episode 3" in one_line(missing.stderr)

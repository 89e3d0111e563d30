"""Options shared by the CLI command modules (``strands_robots.cli.common``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli import common, info, labels, outcomes, segments, ssc
from strands_robots.cli.main import app
from strands_robots.errors import LabelValidationError


def _json_options(command, path=()):
    """``(command path, --json help)`` of every command under ``command``."""
    found = []
    for name, sub in getattr(command, "commands", {}).items():
        found += _json_options(sub, (*path, name))
    for param in getattr(command, "params", []):
        if "--json" in getattr(param, "opts", ()):
            found.append((" ".join(path), param.help))
    return found


def test_the_json_flag_is_declared_once():
    assert outcomes.JsonOpt is common.JsonOpt
    assert segments.JsonOpt is common.JsonOpt
    assert ssc.JsonOpt is common.JsonOpt
    for module in (info, labels, outcomes, segments, ssc):
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert '"--json"' not in source, module.__name__


def test_outcome_segment_and_ssc_commands_share_one_json_wording():
    options = dict(_json_options(typer.main.get_command(app)))
    shared = {path: text for path, text in options.items() if path.split()[0] in {"outcome", "segments", "ssc"}}
    assert sorted(shared) == [
        "outcome list",
        "outcome set",
        "outcome split",
        "segments agreement",
        "segments export-lerobot",
        "segments import",
        "segments import-lerobot",
        "segments pool",
        "segments show",
        "segments templates",
        "segments validate",
        "ssc build",
        "ssc check",
        "ssc events",
    ]
    assert set(shared.values()) == {"Print JSON instead of text."}
    assert set(options.values()) == {"Print JSON instead of text."}  # info, agreement and disputes too


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3, 0,5-7", [0, 3, 5, 6, 7]),  # judge --episodes: indices and rising spans, sorted, each once
        ("0-9,12", [*range(10), 12]),
        ("3,7", [3, 7]),  # remap --deleted
        ("7,3,3", [3, 7]),
        ("0,,3,", [0, 3]),  # ssc --episodes: empty parts skipped
        (" +2 ", [2]),
        ("", []),
        ("4 - 4", [4]),
    ],
)
def test_one_episode_list_takes_what_each_command_took(text, expected):
    assert common.episode_list(text) == expected


@pytest.mark.parametrize("text", ["7-5", "a", "1.0", "0x1", "1-", "3;4", "9" * 5000, "9" * 5000 + "-1"])
def test_an_episode_list_refusal_names_the_accepted_forms(text):
    with pytest.raises(LabelValidationError) as refused:
        common.episode_list(text, "--deleted")
    message = str(refused.value)
    assert "--deleted 0,3,7 or --deleted 0-9,12" in message and len(message) < 400


def test_an_episode_list_is_bounded():
    """A huge span is refused before a set of it is built (it used to take all memory)."""
    with pytest.raises(LabelValidationError, match=r"--episodes '0-1000000000000' names more than 1,000,000"):
        common.episode_list("0-1000000000000")
    with pytest.raises(LabelValidationError, match="names more than"):
        common.episode_list("0-999999,1000000")
    assert len(common.episode_list("0-999999")) == 1_000_000
    assert common.episode_list("5,0-999999,5") == common.episode_list("0-999999")


def test_every_episode_list_option_reads_spans(toy_dataset):
    """ssc --episodes and remap --deleted take the spans judge --episodes took (one parser)."""
    runner = CliRunner()
    refused = runner.invoke(app, ["remap", str(toy_dataset), "--deleted", "2-1", "--dry-run"])
    assert isinstance(refused.exception, LabelValidationError), refused.output
    assert "'2-1' is not an episode index or a rising range" in str(refused.exception)
    refused = runner.invoke(app, ["ssc", "events", str(toy_dataset), "--episodes", "x"])
    assert isinstance(refused.exception, LabelValidationError), refused.output
    assert "--episodes 0,3,7 or --episodes 0-9,12" in str(refused.exception)


def test_a_table_folds_long_cells_onto_more_lines_and_keeps_its_columns():
    import io

    from rich.console import Console

    out = io.StringIO()
    table = common.new_table("episode_labels.json (benchmark: —)", ("episode", "verdict", "note"))
    table.add_row("0", "success", "日本語")
    table.add_row("12", "failure (overruled success)", "see [/x] averyveryveryverylongword")
    Console(file=out, soft_wrap=True, markup=False, width=40).print(table)
    assert out.getvalue().splitlines() == [
        "episode_labels.json (benchmark: —)",
        "┏━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┓",
        "┃ episode ┃ verdict     ┃ note         ┃",
        "┡━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━┩",
        "│ 0       │ success     │ 日本語       │",
        "│ 12      │ failure     │ see [/x]     │",
        "│         │ (overruled  │ averyveryver │",
        "│         │ success)    │ yverylongwor │",
        "│         │             │ d            │",
        "└─────────┴─────────────┴──────────────┘",
    ]


def test_output_into_a_closed_pipe_exits_1_without_a_traceback():
    """`strands-labels ... | head -1`: the reader closes the pipe; the command stops quietly."""
    code = "from strands_robots.cli.common import console\nfor i in range(100_000):\n    console.print(f'line {i}')"
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline() == b"line 0\n"
    process.stdout.close()
    assert process.wait(timeout=60) == 1
    assert process.stderr.read() == b""


def test_a_closed_stderr_keeps_its_lines_out_of_stdout(toy_dataset):
    """`strands-labels filter ROOT --format lerobot 2>&-` (stderr closed to silence it): the
    counts meant for stderr are dropped, as rich drops them; stdout holds the argument only.
    Python's ``sys.stderr`` is then None, and ``print(..., file=None)`` writes to stdout."""
    el.record_deterministic_verdicts(toy_dataset, [{"episode": e, "success": e != 2} for e in range(3)])
    for episode in range(3):
        el.annotate_episode(toy_dataset, episode, quality="high", model="m")
    el.flush(toy_dataset)
    argv = [sys.executable, "-m", "strands_robots.cli.main", "filter", str(toy_dataset), "--format", "lerobot"]
    done = subprocess.run(argv, stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2), check=False)
    assert (done.returncode, done.stdout) == (0, b'--dataset.episodes="[0,1]"\n')


def test_a_line_prints_as_typed_and_control_characters_as_rich_prints_them(capsys):
    """A printable line (markup-like text, emoji codes, CJK) is printed as typed; a tab, a
    carriage return or a bell in user data (``resolve --reviewer``) is expanded or removed as
    rich does, so a note cannot rewrite the terminal line it is printed on."""
    common.console.print("plain: 日本語 [red]x :x:")
    common.console.print("a\tb\rc\x07d")
    assert capsys.readouterr().out == "plain: 日本語 [red]x :x:\na       bcd\n"


def test_run_keeps_the_thread_count_a_user_gave_openblas(tmp_path):
    """OpenBLAS reads OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS and OMP_NUM_THREADS: the CLI's
    default of one thread applies only when none is set."""
    code = "import os, sys\nfrom strands_robots.cli import main\nsys.argv = ['strands-labels', '--version']\ntry:\n    main.run()\nexcept SystemExit:\n    pass\nprint(os.environ.get('OPENBLAS_NUM_THREADS'))"
    base = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    }
    for given, expected in (({}, "1"), ({"OMP_NUM_THREADS": "4"}, "None"), ({"OPENBLAS_NUM_THREADS": "2"}, "2")):
        done = subprocess.run([sys.executable, "-c", code], env={**base, **given}, capture_output=True, text=True)
        assert done.stdout.splitlines()[-1] == expected, (given, done.stderr)

"""Options shared by the CLI command modules (``strands_robots.cli.common``)."""

from __future__ import annotations

from pathlib import Path

import typer.main

from strands_robots.cli import common, outcomes, segments, ssc
from strands_robots.cli.main import app


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
    for module in (outcomes, segments, ssc):
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

"""Options and helpers shared by the CLI command modules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, overload

import typer
from rich.console import Console

from strands_robots.errors import LabelValidationError

console = Console(soft_wrap=True)  # never break a path across lines (logs, CI captures)

RootArg = Annotated[Path, typer.Argument(help="Dataset root (the folder holding meta/).")]
LabelsDirOpt = Annotated[
    Path | None,
    typer.Option("--labels-dir", help="Keep the label sidecars in this directory instead of the dataset root."),
]


@overload
def resolve(path: Path) -> Path: ...
@overload
def resolve(path: None) -> None: ...
@overload
def resolve(path: Path | None) -> Path | None: ...


def resolve(path: Path | None) -> Path | None:
    """A path a person typed, made absolute (``~`` expanded)."""
    return None if path is None else path.expanduser().resolve()


def load_json_file(path: Path) -> Any:
    """Parse a JSON file a person passed, or raise a clear error."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise LabelValidationError(f"{path} does not exist.") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelValidationError(f"{path} is not valid UTF-8 JSON ({exc}).") from exc


def load_json_or_jsonl(path: Path) -> Any:
    """A JSON document, or a JSON Lines file as a list of objects."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise LabelValidationError(f"{path} does not exist.") from exc
    except UnicodeDecodeError as exc:
        raise LabelValidationError(f"{path} is not UTF-8 text ({exc}).") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LabelValidationError(f"{path} line {number} is not valid JSON ({exc}).") from exc
    return rows


def print_json(value: Any) -> None:
    """Print JSON to stdout without rich markup processing."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))

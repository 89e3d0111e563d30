"""docs/architecture.md's concept table ("Where each concept lives") against the tree, and
the renamed modules and commands it lists keep their old names."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from typer.main import get_command

import strands_robots

PACKAGE = Path(strands_robots.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


def _section(title: str) -> list[list[str]]:
    """The rows of the first table under ``title`` (a heading), as lists of cell texts."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip("#").strip() == title)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[1:]  # without the header


CONCEPTS = _section("Where each concept lives")
RENAMED = _section("Renamed modules and commands")


def _defined(tree: ast.Module) -> dict[str, ast.AST]:
    """Top-level names a module defines itself (functions, classes, assignments)."""
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
    return found


def test_the_table_names_the_concepts_of_the_one_rule_one_place_promise():
    concepts = {row[0] for row in CONCEPTS}
    for concept in ("episode-index check", "sidecar-name table", "state folder", "lock", "journal", "filter rule"):
        assert concept in concepts
    assert {"remap participant", "fingerprint rule", "stale check"} <= concepts
    assert len(concepts) == len(CONCEPTS), "a concept is listed twice"


@pytest.mark.parametrize(("concept", "module", "names"), CONCEPTS, ids=[row[0] for row in CONCEPTS])
def test_each_concept_is_where_the_table_says(concept, module, names):
    path = PACKAGE / module.strip("`")
    assert path.is_file(), f"{concept}: {module} does not exist"
    defined = _defined(ast.parse(path.read_text(encoding="utf-8")))
    for name in re.findall(r"`([\w.]+)`", names):
        owner, _, member = name.partition(".")
        assert owner in defined, f"{concept}: {owner} is not defined in {module}"
        if member:
            node = defined[owner]
            assert isinstance(node, ast.ClassDef) and member in _defined(ast.Module(body=node.body, type_ignores=[]))


def test_a_module_is_named_by_one_concept_only():
    modules = [row[1] for row in CONCEPTS]
    repeated = {m for m in modules if modules.count(m) > 1}
    assert not repeated


@pytest.mark.parametrize(("old", "new"), [r for r in RENAMED if "strands-labels" not in r[0]], ids=lambda v: v)
def test_an_old_module_path_is_the_renamed_module(old, new):
    old_module = importlib.import_module(old.strip("`"))
    new_module = importlib.import_module(new.strip("`"))
    assert old_module is new_module
    public = [n for n in vars(new_module) if not n.startswith("_")]
    assert public and all(getattr(old_module, n) is getattr(new_module, n) for n in public)


@pytest.mark.parametrize(("old", "new"), [r for r in RENAMED if "strands-labels" in r[0]], ids=lambda v: v)
def test_an_old_command_runs_the_renamed_one(old, new):
    from strands_robots.cli.main import app

    def find(words: list[str]):
        command = get_command(app)
        for word in words:
            command = command.commands[word]
        return command

    old_command = find(old.strip("`").split()[1:])
    new_command = find(new.strip("`").split()[1:])
    # the same options (tests/web/test_segment_page.py serves the page by both names)
    assert [(p.name, p.opts) for p in old_command.params] == [(p.name, p.opts) for p in new_command.params]
    assert "Alias of" in (old_command.help or "") and new.strip("`").removeprefix("strands-labels ") in old_command.help

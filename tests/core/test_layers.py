"""The package's layers: a lower layer never imports an upper one at module level.

The layer table is docs/architecture.md's ("Layers"); :data:`LAYERS` below is checked
against it. A module may import its own layer or a lower one when it is imported; it
reaches an upper layer only inside a function (a lazy import, run on use), and a label
store never imports another store at module level. Lazy reaches from one store into
another are listed in :data:`LAZY_ACROSS_STORES`, so a new one is a decision, not a drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import strands_robots

PACKAGE = Path(strands_robots.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"

#: Unit (top-level module or subpackage of ``strands_robots``) -> layer, lowest first.
LAYERS: dict[str, int] = {
    "__init__": 0,
    "errors": 0,
    "arguments": 0,
    "model_spec": 0,
    "dataset": 1,
    "storage": 2,
    "fingerprint": 2,
    "episode_labels": 3,
    "outcomes": 3,
    "segments": 3,
    "ssc": 3,
    "selection": 4,
    "remap": 4,
    "labels": 4,
    "signals": 4,
    "tools": 5,
    "judges": 5,
    "cli": 6,
    "web": 6,
    "report": 6,
}
STORES = {"episode_labels", "outcomes", "segments", "ssc"}

#: ``(module, imported)`` pairs where one label store reaches another inside a function.
LAZY_ACROSS_STORES = {
    # outcome labels recorded as deterministic verdicts: the label store's writer
    ("strands_robots.outcomes.verdicts", "strands_robots.episode_labels"),
    # TASK_COMPLETE needs to know whether an episode failed: both sidecars are read
    ("strands_robots.segments.success", "strands_robots.episode_labels.document"),
    ("strands_robots.segments.success", "strands_robots.episode_labels.review"),
    ("strands_robots.segments.success", "strands_robots.outcomes"),
    ("strands_robots.segments.success", "strands_robots.outcomes.verdicts"),
    # the SSC cascade writes its result as a segmentation and checks it with the segment rules
    ("strands_robots.ssc.cascade", "strands_robots.segments.motion"),
    ("strands_robots.ssc.cascade", "strands_robots.segments.validate"),
    ("strands_robots.ssc.segmentation", "strands_robots.segments"),
}


def _unit(module: str) -> str:
    """``strands_robots.X.y`` -> ``X`` (``__init__`` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


def _imports(path: Path, module: str) -> list[tuple[int, str, bool]]:
    """``(line, imported module, lazy)`` of every ``strands_robots`` import in one file.

    Module level is everything outside a function body (``if``/``try``/``with`` blocks and
    ``if TYPE_CHECKING:`` included: a type-only import still ties the layers together);
    class bodies run at import time too.
    """
    found: list[tuple[int, str, bool]] = []

    def name_of(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        if path.name != "__init__.py":
            base = base[:-1]
        base = base[: len(base) - node.level + 1]
        return ".".join([*base, node.module] if node.module else base)

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name, lazy) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                found.append((child.lineno, name_of(child), lazy))
            visit(child, lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return [(line, name, lazy) for line, name, lazy in found if name.split(".")[0] == "strands_robots"]


MODULES = _modules()


def test_every_unit_has_a_layer():
    units = {_unit(module) for module, _ in MODULES}
    assert units == set(LAYERS), (
        f"units without a layer: {sorted(units - set(LAYERS))}; gone: {sorted(set(LAYERS) - units)}"
    )


def test_the_documented_table_is_the_checked_one():
    """docs/architecture.md's table rows ``| N | `unit`, `unit` | ... |`` give the same layers."""
    documented: dict[str, int] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if row:
            for unit in re.findall(r"`([\w.]+?)(?:/|\.py)?`", row.group(2)):
                documented[unit] = int(row.group(1))
    assert documented == LAYERS


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_no_upward_or_sideways_import_at_module_level(module, path):
    here = _unit(module)
    bad = []
    for line, name, lazy in _imports(path, module):
        there = _unit(name)
        if lazy or there == here:
            continue
        if LAYERS[there] > LAYERS[here]:
            bad.append(f"line {line}: {name} (layer {LAYERS[there]}, above {here}'s {LAYERS[here]})")
        elif here in STORES and there in STORES:
            bad.append(f"line {line}: {name} (another label store)")
    assert not bad, f"{module} imports at module level: " + "; ".join(bad)


def test_lazy_reaches_across_stores_are_the_listed_ones():
    found = {
        (module, name)
        for module, path in MODULES
        for _, name, lazy in _imports(path, module)
        if lazy and _unit(module) in STORES and _unit(name) in STORES and _unit(name) != _unit(module)
    }
    assert found == LAZY_ACROSS_STORES


def test_selection_is_not_in_a_store():
    """The cross-store selection (outcome filters, held-out episodes) lives above both stores;
    the label store's 0.5.3 ``filter_episodes`` reaches it through the handle, on use."""
    for module, path in MODULES:
        if module.startswith("strands_robots.episode_labels"):
            assert not any(name.startswith("strands_robots.outcomes") for _, name, _ in _imports(path, module)), module
    from strands_robots import episode_labels

    assert "filter_episodes" in episode_labels.__all__


def test_the_walker_sees_planted_imports(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from strands_robots.web import app\n"
        "try:\n    import strands_robots.cli.main\nexcept ImportError:\n    pass\n"
        "class A:\n    from strands_robots.report import write\n"
        "def later():\n    from strands_robots.judges import runner\n"
        "from . import sibling\n"
    )
    assert _imports(planted, "strands_robots.dataset.planted") == [
        (3, "strands_robots.web", False),
        (5, "strands_robots.cli.main", False),
        (9, "strands_robots.report", False),
        (11, "strands_robots.judges", True),
        (12, "strands_robots.dataset", False),  # the package: same unit as the module
    ]


def test_the_reader_helpers_take_the_layout_not_the_facade():
    """``dataset.reader.Dataset`` builds on ``dataset.layout.Layout``; the helpers it calls
    (frames, video, problems, ...) are handed the layout, so none imports the facade."""
    facade_users = {"strands_robots.dataset", "strands_robots.dataset.reader", "strands_robots.dataset.cache"}
    for module, path in MODULES:
        if module.startswith("strands_robots.dataset") and module not in facade_users:
            assert "strands_robots.dataset.reader" not in {name for _, name, _ in _imports(path, module)}, module
    from strands_robots.dataset.layout import Layout
    from strands_robots.dataset.reader import Dataset

    assert issubclass(Dataset, Layout)


def test_the_feature_keys_are_named_once():
    """``observation.state`` and ``action`` are spelled in dataset/keys.py only (as Python strings)."""
    spelled = []
    for module, path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in ("observation.state", "action"):
                spelled.append((module, node.lineno, node.value))
    allowed = {"strands_robots.dataset.keys"}
    # the outcome schema's per-hand ``action`` field is a field name, not the LeRobot feature
    allowed_fields = {("strands_robots.outcomes.schema", "action")}
    assert [s for s in spelled if s[0] not in allowed and (s[0], s[2]) not in allowed_fields] == []
    from strands_robots.dataset.keys import ACTION_KEY, STATE_KEY

    assert (STATE_KEY, ACTION_KEY) == ("observation.state", "action")


def test_the_pages_take_the_feature_keys_from_the_server():
    """The web pages' JavaScript and templates never spell a feature key: the state endpoint
    hands them ``keys`` and the templates get ``state_key`` (prose may still say "state")."""
    web = PACKAGE / "web"
    pages = sorted([*(web / "static").glob("*.js"), *(web / "templates").glob("*.html")])
    assert {p.name for p in pages} >= {"common.js", "review.js", "segment.js", "review.html", "segment.html"}
    spelled = []
    for path in pages:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "observation.state" in line or (path.suffix == ".js" and re.search(r"[\"'`]action[\"'`]", line)):
                spelled.append(f"{path.name}:{number}: {line.strip()}")
    assert spelled == []

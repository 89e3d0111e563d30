"""Every ```python and ```bash block of README.md and docs/*.md runs as written.

The blocks of one file run in document order in one fresh process, Python blocks sharing
one namespace (like a notebook), from a temporary directory holding a copy of
``examples/`` (so ``examples/toy_dataset`` is a writable copy). In bash blocks ``ROOT``
stands for that copy, already labelled as ``make demo`` labels it (the verdicts of
``examples/toy_dataset_verdicts.json`` and the offline judge), and ``EP`` for episode 1.

A comment on the line before a block changes what is expected of it:

- ``<!-- snippet: raises NAME -->``: the block raises the exception class ``NAME`` (a
  bash block: exits non-zero), with a one-line message and no traceback on stderr;
- ``<!-- snippet: needs MODULE -->``: runs only when ``MODULE`` is importable;
- ``<!-- snippet: not run: REASON -->``: never run (``make test`` itself, installs).

Blocks in other fences (output, file formats, usage synopses) are text, not snippets.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(
    r"(?:<!-- snippet: (?P<marker>[^>]*?) -->\n)?^```(?P<lang>python|bash)\n(?P<body>.*?)^```", re.M | re.S
)

DRIVER = r"""
import contextlib, io, json, os, subprocess, sys, traceback
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__snippet__"}
results = []
for block in blocks:
    out = {"line": block["line"], "ok": True, "error": None, "type": None, "stderr": ""}
    if block["lang"] == "python":
        try:
            exec(compile(block["body"], f"{block['file']}:{block['line']}", "exec"), namespace)
        except BaseException as exc:
            out.update(ok=False, type=type(exc).__name__, error=str(exc), trace=traceback.format_exc())
    else:
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block["body"]], capture_output=True, text=True)
        out.update(ok=done.returncode == 0, error=done.stderr.strip() or None, stderr=done.stderr,
                   stdout=done.stdout[-2000:])
    results.append(out)
print(json.dumps(results))
"""


def blocks_of(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        line = text[: m.start("lang")].count("\n") + 1
        found.append(
            {"file": path.name, "line": line, "lang": m["lang"], "body": m["body"], "marker": m["marker"] or ""}
        )
    return found


def test_every_doc_has_its_snippets_found():
    counts = {p.name: len(blocks_of(p)) for p in DOCS}
    assert counts["README.md"] >= 5 and counts["outcomes.md"] >= 1 and counts["dataset.md"] >= 1


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_snippets_run_as_written(doc, tmp_path):
    blocks = blocks_of(doc)
    if not blocks:
        pytest.skip(f"{doc.name} has no python or bash blocks")
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    for p in (work / "examples").rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    root = work / "examples" / "toy_dataset"
    from strands_robots import episode_labels as el
    from strands_robots.judges.runner import run_judge

    el.record_deterministic_verdicts(root, json.loads((REPO / "examples" / "toy_dataset_verdicts.json").read_text()))
    run_judge(root)
    el.flush(root)
    runnable, expected = [], {}
    for block in blocks:
        marker = block["marker"]
        if marker.startswith("not run:"):
            assert marker[len("not run:") :].strip(), f"{doc.name}:{block['line']}: say why it is not run"
            continue
        if marker.startswith("needs "):
            module = marker.split()[1]
            import importlib.util

            if importlib.util.find_spec(module) is None:
                continue
        elif marker.startswith("raises "):
            expected[block["line"]] = marker.split()[1]
        elif marker:
            raise AssertionError(f"{doc.name}:{block['line']}: unknown snippet marker {marker!r}")
        body = block["body"]
        if block["lang"] == "bash":
            body = re.sub(r"\bROOT\b", str(root), body)
            body = re.sub(r"\bEP\b", "1", body)
        runnable.append({**block, "body": body})
    if not runnable:
        pytest.skip(f"every block of {doc.name} needs what is not installed here")
    (tmp_path / "blocks.json").write_text(json.dumps(runnable))
    (tmp_path / "driver.py").write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws-credentials"),
        HOME=str(tmp_path),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS="200",
        PYTHONPATH=str(REPO),
    )
    done = subprocess.run(
        [sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "blocks.json")],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    problems = []
    for block, result in zip(runnable, results, strict=True):
        where = f"{doc.name}:{block['line']}"
        want = expected.get(block["line"])
        if want is None:
            if not result["ok"]:
                problems.append(f"{where} failed: {result.get('trace') or result['error']}")
            continue
        if result["ok"]:
            problems.append(f"{where} was expected to fail with {want} and ran")
        elif block["lang"] == "python" and result["type"] != want:
            problems.append(f"{where} raised {result['type']} ({result['error']}), not {want}")
        elif "\n" in (result["error"] or "") or "Traceback" in result.get("stderr", ""):
            problems.append(f"{where}: the error is not one clear line: {result['error']!r}")
    assert not problems, "\n".join(problems)

"""Code, docs, tests and benchmarks cite where a rule is stated in the repository.

The developers' rule: a docstring or comment names a docs/*.md section, the LeRobot standard
or a module, never an issue number or a document outside the repository. This guard scans
every text file of the package, the docs, the README, the tests, the benchmarks, the
examples and the scripts for such citations (case-insensitive ``issue N``, ``issue #N``,
``issues N``, ``seed 00N``, ``seed §N``, a path into the shared seeds folder) and names each one found with its file and line. Generated
``_work`` directories and this file are not scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

import strands_robots

REPO = Path(strands_robots.__file__).parent.parent
SCANNED = ("strands_robots", "docs", "README.md", "tests", "benchmarks", "examples", "scripts")
TEXT_SUFFIXES = {
    ".py", ".md", ".txt", ".rst", ".json", ".jsonl", ".toml", ".yaml", ".yml", ".cfg", ".ini",
    ".js", ".html", ".css", ".j2", ".sh",
}  # fmt: skip
SKIPPED_DIRS = {"_work", "__pycache__", ".pytest_cache", ".hypothesis"}
#: Written in pieces so that this file's own text reads as no citation.
CITATION = re.compile(
    r"\b(?:" + "issue" + r"s?\s+#?\d|" + "seed" + r"\s+00\d|" + "seed" + r"\s+§|" + "shared/" + r"seeds/)",
    re.IGNORECASE,
)


def scanned_files(repo: Path) -> list[Path]:
    """Every text file under the scanned paths of ``repo``, sorted, without this file."""
    me = Path(__file__).resolve()
    files: list[Path] = []
    for name in SCANNED:
        top = repo / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for path in candidates:
            relative = path.relative_to(repo)
            if SKIPPED_DIRS.intersection(relative.parts) or any(p.endswith(".egg-info") for p in relative.parts):
                continue
            if path.is_file() and path.suffix.lower() in TEXT_SUFFIXES and path.resolve() != me:
                files.append(path)
    return files


def citations(repo: Path) -> list[str]:
    """``path:line: text`` for every citation of an issue or seed document under ``repo``."""
    found: list[str] = []
    for path in scanned_files(repo):
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if CITATION.search(line):
                found.append(f"{path.relative_to(repo)}:{number}: {line.strip()}")
    return found


def test_no_file_cites_an_issue_or_a_seed_document():
    assert len(scanned_files(REPO)) > 100  # the package, docs and tests are really scanned
    found = citations(REPO)
    assert found == [], (
        "cite the docs/*.md section, the LeRobot standard or the module instead of an issue or a "
        "document outside the repository:\n" + "\n".join(found)
    )


def test_the_scan_finds_each_form_of_citation(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "benchmarks" / "_work").mkdir(parents=True)
    (tmp_path / "tests" / "test_x.py").write_text(
        '"""Rules of Issue 7."""\n# see issue #12\nx = 1  # issues 3 and 4\n# ok: a tissue 5 cm wide\n'
    )
    (tmp_path / "docs" / "x.md").write_text(
        "As SEED 002 says.\nseed 0 is a random seed.\nsee seed §3\nin ../shared/" + "seeds/000.txt\n"
    )
    (tmp_path / "README.md").write_text("Nothing cited here.\n")
    (tmp_path / "benchmarks" / "_work" / "out.md").write_text("issue 5\n")  # generated: skipped
    assert citations(tmp_path) == [
        "docs/x.md:1: As SEED 002 says.",
        "docs/x.md:3: see seed §3",
        "docs/x.md:4: in ../shared/" + "seeds/000.txt",
        'tests/test_x.py:1: """Rules of Issue 7."""',
        "tests/test_x.py:2: # see issue #12",
        "tests/test_x.py:3: x = 1  # issues 3 and 4",
    ]

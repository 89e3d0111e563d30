"""One reader of a file a person named (``storage.textfile``), for every caller.

The label set loader of the segment page, the CLI's JSON / JSON Lines arguments, the
segmentation import and the outcome import read through it: each way the read fails is
one :class:`InputFileError` naming the path, whose ``remedy`` is the step that fixes that
case and ends the message (a missing file's is also a ``FileNotFoundError``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from strands_robots.cli.common import load_json_or_jsonl
from strands_robots.cli.main import app
from strands_robots.errors import InputFileError, InputFileNotFoundError, LabelValidationError
from strands_robots.outcomes import export_outcomes, import_outcomes, set_outcome
from strands_robots.segments.imports import load_source
from strands_robots.segments.label_sets import load_label_set
from strands_robots.ssc import read_behavior_annotation
from strands_robots.storage.textfile import read_user_bytes, read_user_text

CALLERS = {
    "label-set": (
        load_label_set,
        "the label set file",
        "label set file (a JSON list or object, or one label per line)",
    ),
    "json-or-jsonl": (
        load_json_or_jsonl,
        "the file",
        'JSON file (such as [{"episode": 0, "success": true}]) or JSON Lines file (one object per line)',
    ),
    "segments-import": (
        load_source,
        "the segmentation file",
        "JSON or JSON Lines file of segmentations",
    ),
    "behavior-annotation": (read_behavior_annotation, "the annotation file", "BEHAVIOR-1K annotation file"),
}


def _missing(tmp_path: Path) -> Path:
    return tmp_path / "absent.json"


def _directory(tmp_path: Path) -> Path:
    (tmp_path / "folder.json").mkdir()
    return tmp_path / "folder.json"


def _latin1(tmp_path: Path) -> Path:
    path = tmp_path / "latin1.json"
    path.write_bytes('["gr\u00e4b"]'.encode("latin-1"))
    return path


def _loop(tmp_path: Path) -> Path:  # unreadable for every user, root included
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    return tmp_path / "a.json"


#: Readers of bytes (they decode themselves): every case but not-UTF-8.
BYTE_CALLERS = {
    "outcomes-import": (
        lambda path: import_outcomes(EXAMPLE_ROOT, path),
        "the outcome file",
        "JSON Lines file written by export_outcomes",
    ),
}
EXAMPLE_ROOT = Path(__file__).resolve().parents[2] / "examples" / "toy_dataset"  # every case fails before it is opened


#: case -> (make the path, what the message says after the path, the remedy (kind filled in))
CASES = {
    "missing": (_missing, "does not exist", "pass the path of an existing {kind}."),
    "directory": (_directory, "is a directory", "pass the path of the {kind} inside it, not the directory."),
    "not-utf8": (
        _latin1,
        "is not UTF-8 text (invalid continuation byte at byte 4)",
        "save it as UTF-8 text and retry.",
    ),
    "unreadable": (
        _loop,
        "cannot be read (Too many levels of symbolic links)",
        "make it readable (check its permissions) and retry.",
    ),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("case", CASES)
def test_each_failed_read_is_one_typed_error_naming_the_path_and_the_remedy(tmp_path, caller, case):
    load, what, kind = CALLERS[caller]
    make, problem, remedy = CASES[case]
    path = make(tmp_path)
    with pytest.raises(InputFileError) as caught:
        load(path)
    expected_remedy = remedy.format(kind=kind)
    assert caught.value.remedy == expected_remedy
    assert str(caught.value) == f"{what} {path} {problem}; {expected_remedy}"
    assert isinstance(caught.value, LabelValidationError)  # what both callers raised before


@pytest.mark.parametrize("caller", BYTE_CALLERS)
@pytest.mark.parametrize("case", [c for c in CASES if c != "not-utf8"])
def test_the_byte_readers_share_the_ladder(tmp_path, caller, case):
    load, what, kind = BYTE_CALLERS[caller]
    make, problem, remedy = CASES[case]
    path = make(tmp_path)
    with pytest.raises(InputFileError) as caught:
        load(path)
    assert caught.value.remedy == remedy.format(kind=kind)
    assert str(caught.value) == f"{what} {path} {problem}; {caught.value.remedy}"


@pytest.mark.parametrize("caller", [*CALLERS, *BYTE_CALLERS])
def test_a_missing_file_is_also_the_file_not_found_error_open_raises(tmp_path, caller):
    load = {**CALLERS, **BYTE_CALLERS}[caller][0]
    with pytest.raises(FileNotFoundError) as caught:
        load(tmp_path / "absent.json")
    assert isinstance(caught.value, InputFileNotFoundError) and "absent.json does not exist" in str(caught.value)


def test_the_cli_answers_a_directory_or_a_missing_file_with_the_remedy(tmp_path, copy_dataset):
    root = copy_dataset(EXAMPLE_ROOT)
    before = sorted(p.name for p in root.iterdir())
    runner = CliRunner()
    for argv, fragment in [
        (["outcome", "import", str(root), str(tmp_path)], "is a directory; pass the path of the JSON Lines file"),
        (["outcome", "import", str(root), str(tmp_path / "no.jsonl")], "does not exist; pass the path of an existing"),
        (["verdicts", str(root), str(tmp_path)], "is a directory; pass the path of the JSON file"),
    ]:
        result = runner.invoke(app, argv)
        assert result.exit_code != 0 and isinstance(result.exception, InputFileError), (argv, result.output)
        assert fragment in str(result.exception), argv
    assert sorted(p.name for p in root.iterdir()) == before  # nothing stored


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
@pytest.mark.parametrize("caller", CALLERS)
def test_a_file_without_read_permission_names_the_permission_remedy(tmp_path, caller):
    load, what, _kind = CALLERS[caller]
    path = tmp_path / "locked.json"
    path.write_text("[]")
    path.chmod(0)
    with pytest.raises(InputFileError) as caught:
        load(path)
    assert str(caught.value) == f"{what} {path} cannot be read (Permission denied); {caught.value.remedy}"
    assert caught.value.remedy == "make it readable (check its permissions) and retry."


def test_a_readable_file_is_its_text_for_every_caller(tmp_path):
    path = tmp_path / "kitchen.json"
    path.write_text('["reach", "gr\u00e4b the cup"]', encoding="utf-8")
    assert read_user_text(path) == '["reach", "gr\u00e4b the cup"]'
    assert read_user_bytes(path) == path.read_bytes()
    assert load_json_or_jsonl(path) == ["reach", "gr\u00e4b the cup"]
    assert load_label_set(path).labels == ["reach", "gr\u00e4b the cup"]


@pytest.mark.parametrize("load", [load_json_or_jsonl, load_source])
def test_json_or_json_lines_is_one_reader(tmp_path, load):
    one = tmp_path / "one.jsonl"
    one.write_text('{"episode": 0}\n')
    assert load(one) == [{"episode": 0}]  # a .jsonl file is JSON Lines even with one line
    lines = tmp_path / "lines.json"
    lines.write_text('{"episode": 0}\n\n{"episode": 1}\n')
    assert load(lines) == [{"episode": 0}, {"episode": 1}]
    lines.write_text('{"episode": 0}\n{"episode": 1,\n')
    with pytest.raises(LabelValidationError, match=r"lines.json line 2 is not valid JSON \("):
        load(lines)
    lines.write_text('{"episode": 0')
    with pytest.raises(LabelValidationError, match=r"lines.json is not valid JSON \(.*line 1 column 14.*\); fix it"):
        load(lines)
    lines.write_text('[\n  {"episode": 0},\n  {"episode": 1 "success": true}\n]\n')  # pretty, one comma missing
    with pytest.raises(LabelValidationError, match=r"lines.json is not valid JSON \(.*line 3 column 17.*\); fix it"):
        load(lines)


@pytest.mark.parametrize("load", [load_json_or_jsonl, load_source])
@pytest.mark.parametrize("name", ["notes.jsonl", "notes.json"])
def test_json_lines_are_split_at_line_feeds_only(tmp_path, load, name):
    """A JSON string may hold U+2028, U+2029 and U+0085 unescaped (``json.dumps(...,
    ensure_ascii=False)`` writes them so, as `strands-labels segments export` does): they are
    text inside a value, not line breaks, so the line holding them stays one object."""
    notes = ["pasted\u2028from a page", "para\u2029graph", "next\x85line"]
    path = tmp_path / name
    path.write_text("".join(json.dumps({"note": n}, ensure_ascii=False) + "\n" for n in notes), encoding="utf-8")
    assert load(path) == [{"note": n} for n in notes]


BOM = b"\xef\xbb\xbf"


def test_a_utf8_byte_order_mark_is_not_part_of_the_file(tmp_path, toy_dataset):
    """Windows tools (PowerShell 5's ``Out-File -Encoding utf8``, older Notepad) start a UTF-8
    file with a byte order mark. RFC 8259 section 8.1 lets a JSON parser ignore it, and the
    dataset's own metadata reader does: every reader of a file a person named ignores it too
    (json refused it: "Unexpected UTF-8 BOM (decode using utf-8-sig)")."""
    document = tmp_path / "verdicts.json"
    document.write_bytes(BOM + b'[{"episode": 0, "success": true}]')
    assert read_user_text(document) == '[{"episode": 0, "success": true}]'
    assert read_user_bytes(document) == b'[{"episode": 0, "success": true}]'
    assert load_json_or_jsonl(document) == [{"episode": 0, "success": True}]
    lines = tmp_path / "verdicts.jsonl"
    lines.write_bytes(BOM + b'{"episode": 0, "success": true}\n{"episode": 1, "success": false}\n')
    assert load_json_or_jsonl(lines) == [{"episode": 0, "success": True}, {"episode": 1, "success": False}]
    label_set = tmp_path / "labels.txt"
    label_set.write_bytes(BOM + "reach\ngr\u00e4b the cup\n".encode())
    assert load_label_set(label_set).labels == ["reach", "gr\u00e4b the cup"]
    set_outcome(toy_dataset, 0, outcome="expert_success", labeled_by="me")
    exported = export_outcomes(toy_dataset, tmp_path / "outcomes.jsonl")
    exported.write_bytes(BOM + exported.read_bytes())
    report = import_outcomes(toy_dataset, exported)
    assert (report["lines"], report["written"], report["unchanged"]) == (3, 0, 1)

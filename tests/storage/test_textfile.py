"""One reader of a file a person named (``storage.textfile.read_user_text``), for every caller.

The label set loader of the segment page and the CLI's JSON / JSON Lines arguments read
through it: each way the read fails is one :class:`InputFileError` naming the path, whose
``remedy`` is the step that fixes that case and ends the message.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strands_robots.cli.common import load_json_file, load_json_or_jsonl
from strands_robots.errors import InputFileError, LabelValidationError
from strands_robots.segments.label_sets import load_label_set
from strands_robots.storage.textfile import read_user_text

CALLERS = {
    "label-set": (
        load_label_set,
        "the label set file",
        "label set file (a JSON list or object, or one label per line)",
    ),
    "json-or-jsonl": (
        load_json_or_jsonl,
        "the file",
        'JSON file (a list such as [{"episode": 0, "success": true}]) or JSON Lines file (one object per line)',
    ),
    "json": (load_json_file, "the file", "JSON file"),
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
    assert load_json_file(path) == load_json_or_jsonl(path) == ["reach", "gr\u00e4b the cup"]
    assert load_label_set(path).labels == ["reach", "gr\u00e4b the cup"]

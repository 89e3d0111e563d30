"""The argument checkers' pre-check gives exactly what their pydantic adapter gives.

``strands_robots.arguments`` accepts the plain cases (an ``str``/``Path`` of plain text, a
``bool``, a ``list`` of ``str``) without importing pydantic; everything else goes to the
adapter. These tests run both on the same inputs: a pre-check that accepted something the
adapter refuses, or returned something else, fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from strands_robots import arguments
from strands_robots.errors import LabelArgumentError


def _adapter_answer(kind: str, value):
    try:
        return ("ok", arguments._adapter(kind).validate_python(value))
    except ValidationError:
        return ("refused", None)


def _checker_answer(check, value):
    try:
        return ("ok", check(value))
    except LabelArgumentError:
        return ("refused", None)


texts = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12)
path_values = st.one_of(
    texts,
    texts.map(Path),
    st.integers(),
    st.none(),
    st.binary(max_size=4),
    st.just(PurePosixPath("data")),
    st.lists(texts, max_size=2),
    st.sampled_from(["data/ds", "caf\u00e9", "bad\x00name", "\ud800lone", "", "."]),
)


@settings(max_examples=300, deadline=None)
@given(path_values)
def test_path_pre_check_agrees_with_the_adapter(value):
    expected = _adapter_answer("path", value)
    got = _checker_answer(arguments.path_argument, value)
    assert got[0] == expected[0], value
    if got[0] == "ok":
        assert got[1] == Path(expected[1]) and type(got[1]) is type(Path(expected[1]))


flag_values = st.one_of(st.booleans(), st.integers(-1, 2), st.none(), st.sampled_from(["no", "true", 1.0, 0.0]))


@settings(max_examples=100, deadline=None)
@given(flag_values)
def test_flag_pre_check_agrees_with_the_adapter(value):
    expected = _adapter_answer("flag", value)
    got = _checker_answer(lambda v: arguments.flag_argument(v, "flag"), value)
    assert got == expected and type(got[1]) is type(expected[1])


class _Text(str):
    pass


name_values = st.one_of(
    st.none(),
    st.lists(st.text(max_size=5), max_size=3),
    st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none()), max_size=3),
    st.lists(st.text(max_size=3), max_size=3).map(tuple),
    st.sets(st.text(max_size=3), max_size=3),
    st.text(max_size=3),
    st.integers(),
    st.just([_Text("a")]),
)


@settings(max_examples=200, deadline=None)
@given(name_values)
def test_names_pre_check_agrees_with_the_adapter(value):
    expected = _adapter_answer("names", value)
    got = _checker_answer(lambda v: arguments.names_argument(v, "names", "['a']"), value)
    assert got[0] == expected[0], value
    if got[0] == "ok":
        assert got[1] == expected[1] and (got[1] is None or got[1] is not value)


item_values = st.one_of(
    st.lists(st.integers(), max_size=3),
    st.lists(st.integers(), max_size=3).map(tuple),
    st.integers(),
    st.none(),
    st.just(iter([1, 2])),
)


@settings(max_examples=100, deadline=None)
@given(item_values)
def test_items_pre_check_agrees_with_the_adapter(value):
    if isinstance(value, type(iter([]))):
        assert arguments.items_argument(value, "items", "[1]") == [1, 2]
        return
    expected = _adapter_answer("items", value)
    got = _checker_answer(lambda v: arguments.items_argument(v, "items", "[1]"), value)
    assert got == expected


def test_refusals_still_name_the_remedy():
    with pytest.raises(LabelArgumentError, match=r"root is refused: .*NUL.*pass root as a path string"):
        arguments.path_argument("a\x00b")
    with pytest.raises(LabelArgumentError, match="pass flag=True or flag=False"):
        arguments.flag_argument("no", "flag")


def test_reading_labels_does_not_import_pydantic(tmp_path):
    code = (
        "import sys\n"
        "import strands_robots.episode_labels as el\n"
        f"el.record_deterministic_verdicts({str(tmp_path)!r}, [{{'episode': 0, 'success': True}}])\n"
        f"el.annotate_episode({str(tmp_path)!r}, 0, quality='high')\n"
        f"assert el.filter_episodes({str(tmp_path)!r}) == [0]\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported for plain arguments'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

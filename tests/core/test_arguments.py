"""The argument checkers give exactly what their documented rule gives.

``strands_robots.arguments`` accepts the plain cases (an ``str``/``Path`` of plain text, a
``bool``, a ``list`` of ``str``) without importing pydantic; everything else goes to
pydantic. These tests run each public checker and the documented rule, written as pydantic
types (``tests/core/argument_rules.py``), on the same inputs: a checker that accepted
something the rule refuses, or returned something else, fails here.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots import arguments
from strands_robots.errors import LabelArgumentError, LabelValidationError
from tests.core.argument_rules import RULES, number_rule, rule_answer


def _adapter_answer(kind: str, value):
    return rule_answer(RULES[kind], value)


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


LIMIT_SETS = [arguments.FPS, arguments.SECONDS, arguments.HELD_OUT_SHARE, arguments.UNIT_FRACTION, arguments.Limits()]
number_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-2, 2),
    st.integers(),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 2**1024, -(2**1024), 10**400, "0.5", "nan", float("nan")]),
)


class _Refused(Exception):
    pass


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(LIMIT_SETS), number_values)
def test_number_pre_check_agrees_with_the_adapter(limits, value):
    expected = rule_answer(number_rule(limits), value)
    try:
        got = ("ok", arguments.number_argument(value, lambda v: _Refused(), limits))
    except _Refused:
        got = ("refused", None)
    assert got[0] == expected[0], (limits, value)
    if got[0] == "ok":
        assert got[1] == expected[1] and type(got[1]) is float


@pytest.mark.parametrize(
    ("limits", "accepted", "refused"),
    [
        (arguments.FPS, [30, 29.97, 1e-9, 10**6], [0, 0.0, -1, -30.0]),
        (arguments.SECONDS, [0, 0.0, 1.5, 3600], [-1e-9, -1]),
        (arguments.HELD_OUT_SHARE, [1e-9, 0.2, 0.999], [0, 0.0, 1, 1.0, 1.5, -0.2]),
        (arguments.UNIT_FRACTION, [0, 0.0, 0.5, 1, 1.0], [-0.01, 1.01, 2]),
    ],
)
def test_number_limits(limits, accepted, refused):
    numpy = pytest.importorskip("numpy")
    for value in accepted:
        assert arguments.number_argument(value, lambda v: _Refused(), limits) == float(value)
    assert arguments.number_argument(numpy.float32(accepted[0]), lambda v: _Refused(), limits) == pytest.approx(
        accepted[0]
    )
    for value in [*refused, True, False, "0.5", None, float("nan"), float("inf"), -float("inf"), 10**400]:
        with pytest.raises(_Refused):
            arguments.number_argument(value, lambda v: _Refused(), limits)


def test_number_refusal_names_the_bounds_and_the_remedy():
    refuse = arguments.number_refusal("fps", arguments.FPS, "pass the dataset's fps, e.g. 30.")
    with pytest.raises(LabelValidationError) as caught:
        arguments.number_argument(float("nan"), refuse, arguments.FPS)
    assert (
        str(caught.value)
        == "fps must be a finite number greater than 0, got float nan; pass the dataset's fps, e.g. 30."
    )
    share = arguments.number_refusal("held_out", arguments.HELD_OUT_SHARE, "hold out e.g. 0.2.")
    with pytest.raises(
        LabelValidationError, match=r"^held_out must be a finite number strictly between 0 and 1, got bool True"
    ):
        arguments.number_argument(True, share, arguments.HELD_OUT_SHARE)
    with pytest.raises(LabelValidationError, match="got int <an integer of about 5001 digits>"):
        arguments.number_argument(10**5000, share, arguments.HELD_OUT_SHARE)
    assert arguments.UNIT_FRACTION.describe() == "from 0 to 1" and arguments.SECONDS.describe() == "0 or greater"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "reward must be a finite number, got bool True."),
        ("1", "reward must be a finite number, got str '1'."),
        (None, "reward must be a finite number, got NoneType None."),
        (float("nan"), "reward must be a finite number, got nan; NaN and infinity cannot be stored."),
        (-float("inf"), "reward must be a finite number, got -inf; NaN and infinity cannot be stored."),
        (
            10**400,
            "reward must be a finite number, got <an integer of about 401 digits>; NaN and infinity cannot be stored.",
        ),
    ],
)
def test_a_stored_number_follows_the_same_finite_rule(value, message):
    from strands_robots.episode_labels import checks

    with pytest.raises(LabelValidationError) as caught:
        checks.finite_number(value, "reward")
    assert str(caught.value) == message


def test_a_stored_number_keeps_ints_and_takes_numpy_values():
    numpy = pytest.importorskip("numpy")
    from strands_robots.episode_labels import checks

    assert checks.finite_number(2**70, "reward") == 2**70 and type(checks.finite_number(2**70, "reward")) is int
    assert (
        checks.finite_number(numpy.int64(3), "reward") == 3 and type(checks.finite_number(numpy.int64(3), "r")) is int
    )
    assert checks.finite_number(numpy.float32(0.5), "reward") == 0.5
    assert type(checks.finite_number(numpy.float32(0.5), "reward")) is float

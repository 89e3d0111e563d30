"""``arguments.int_argument``: one pydantic rule for integer arguments at the public API.

An exact ``int`` gets the answer of the documented rule, ``StrictInt`` within the bounds
(``tests/core/argument_rules.py``); each entry point
keeps its own typed error and wording (the messages are those the hostile-input suite
checks).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots import arguments
from strands_robots.errors import LabelValidationError
from tests.core.argument_rules import RULES, int_rule, rule_answer


class Refused(Exception):
    pass


values = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.none(),
    st.integers(min_value=-(2**31), max_value=2**31 - 1).map(np.int32),
    st.integers(min_value=0, max_value=2**63 - 1).map(np.int64),
    st.booleans().map(np.bool_),
)
bounds = st.sampled_from([(None, None), (0, None), (1, None), (0, 65535)])


@settings(max_examples=300, deadline=None)
@given(values, bounds)
def test_the_pre_check_agrees_with_the_adapter(value, bound):
    minimum, maximum = bound
    candidate = int(value) if isinstance(value, np.integer) else value
    expected = rule_answer(int_rule(minimum, maximum), candidate)
    try:
        got = ("ok", arguments.int_argument(value, Refused, minimum=minimum, maximum=maximum))
    except Refused as exc:
        got = ("refused", None)
        assert exc.args == (value,)  # the entry point's error is built from the value as passed
    assert got == expected
    if got[0] == "ok":
        assert type(got[1]) is int


@pytest.mark.parametrize("value", [True, 4.0, "4", None, -1, np.float64(3)])
def test_refusals_keep_each_entry_points_error(value, tmp_path):
    from strands_robots.outcomes.labels import episode_index as outcome_episode
    from strands_robots.segments.episodes import episode_index as segment_episode

    for check in (outcome_episode, segment_episode):  # one rule, one message
        with pytest.raises(LabelValidationError, match="^episode must be a non-negative integer episode_index, got "):
            check(value)


def test_numpy_integers_are_their_value():
    from strands_robots.outcomes.labels import episode_index

    assert episode_index(np.int64(7)) == 7 and type(episode_index(np.int64(7))) is int
    assert arguments.int_argument(np.uint8(200), Refused, minimum=0, maximum=255) == 200
    with pytest.raises(Refused):
        arguments.int_argument(np.int16(-3), Refused, minimum=0)


def test_the_server_port_and_report_cap_use_it():
    from strands_robots.report.write import write_report
    from strands_robots.web.server import ServerAddressError, bind

    for port in (True, 70000, -1, 80.0, "80"):
        with pytest.raises(ServerAddressError, match=r"port must be 0\.\.65535 \(0 picks a free one\), got "):
            bind("127.0.0.1", port)
    for cap in (True, -1, 2.5, None):
        with pytest.raises(LabelValidationError, match="max_episodes must be a non-negative integer, got "):
            write_report("unused-root", max_episodes=cap)


@pytest.mark.parametrize("option", ["frames", "workers", "batch_size"])
@pytest.mark.parametrize("value", [0, True, 2.5, "3"])
def test_judge_counts_are_integers_of_at_least_one(option, value, tmp_path):
    from strands_robots.judges.runner import run_judge, select_episodes

    with pytest.raises(LabelValidationError, match=f"^{option} must be >= 1, got {value!r}\\.$"):
        run_judge(tmp_path, **{option: value})
    with pytest.raises(LabelValidationError, match=f"^limit must be >= 1, got {value!r}\\.$"):
        select_episodes(tmp_path, limit=value)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.booleans(), st.booleans().map(np.bool_), st.integers(-2, 2), st.text(max_size=5), st.none()))
def test_bool_argument_agrees_with_the_adapter(value):
    candidate = bool(value) if isinstance(value, np.bool_) else value
    expected = rule_answer(RULES["flag"], candidate)
    try:
        got = ("ok", arguments.bool_argument(value, Refused))
    except Refused:
        got = ("refused", None)
    assert got == expected


def test_the_judge_tool_and_segment_flags_keep_their_errors(tmp_path):
    from strands_robots.segments import get_segmentation, mark_reference, save_segmentation
    from strands_robots.tools.episode_judge import ToolInputError, episode_arg
    from tests.segments.conftest import VALID_EP0, build_dataset

    assert episode_arg(np.int64(3)) == 3
    for bad in (True, np.bool_(True), 1.0, "1", None):
        with pytest.raises(ToolInputError, match="episode must be a non-negative integer episode_index, got "):
            episode_arg(bad)
    with pytest.raises(ToolInputError, match=r"^episode must be a non-negative integer episode_index, got -2\.$"):
        episode_arg(-2)
    root = build_dataset(tmp_path / "ds")
    save_segmentation(root, 0, VALID_EP0, annotator="a", reference=True)
    mark_reference(root, 0, np.bool_(False))
    assert get_segmentation(root, 0)["reference"] is False
    with pytest.raises(LabelValidationError, match="^reference must be true or false, got str 'yes'.$"):
        mark_reference(root, 0, "yes")
    assert get_segmentation(root, 0)["reference"] is False

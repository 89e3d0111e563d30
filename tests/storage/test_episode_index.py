"""``storage.episode_index``: the one rule for an argument naming an episode, one message."""

from __future__ import annotations

import numpy as np
import pytest

from strands_robots.errors import LabelValidationError
from strands_robots.storage.episode_index import MAX_EPISODE_INDEX, episode_index


@pytest.mark.parametrize(
    ("value", "index"), [(0, 0), (7, 7), (np.int64(7), 7), (np.uint8(200), 200), (MAX_EPISODE_INDEX, 2**63 - 1)]
)
def test_integers_are_taken_as_their_value(value, index):
    assert episode_index(value) == index
    assert type(episode_index(value)) is int


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "episode must be a non-negative integer episode_index, got the boolean True."),
        (np.bool_(False), "episode must be a non-negative integer episode_index, got the boolean False."),
        (-1, "episode must be a non-negative integer episode_index, got -1."),
        (np.int16(-3), "episode must be a non-negative integer episode_index, got -3."),
        (
            2**63,
            "episode is 9223372036854775808, beyond the largest episode_index a dataset can hold "
            "(9223372036854775807, int64).",
        ),
        (
            4.0,
            "episode must be a non-negative integer episode_index, got float 4.0; pass the dataset's real "
            "episode_index as an int.",
        ),
        (
            "4",
            "episode must be a non-negative integer episode_index, got str '4'; pass the dataset's real "
            "episode_index as an int.",
        ),
        (
            None,
            "episode must be a non-negative integer episode_index, got NoneType None; pass the dataset's real "
            "episode_index as an int.",
        ),
    ],
)
def test_anything_else_is_refused_with_one_message(value, message):
    with pytest.raises(LabelValidationError) as info:
        episode_index(value)
    assert str(info.value) == message


def test_each_caller_names_the_argument_and_raises_its_own_error():
    class ToolError(Exception):
        pass

    with pytest.raises(ToolError, match=r"^annotations\[3\]\.episode must be a non-negative integer episode_index"):
        episode_index(-5, "annotations[3].episode", ToolError)


def test_a_long_value_is_quoted_within_bounds():
    with pytest.raises(LabelValidationError) as info:
        episode_index("x" * 10_000)
    assert len(str(info.value)) < 400

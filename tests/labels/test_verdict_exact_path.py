"""A verdict entry of exact types takes a short path that gives what the checks give.

``record_deterministic_verdicts`` validates up to a million entries per call; entries whose
values are exact ``int``/``bool``/finite ``float`` skip the per-field checks (and their
message texts). Every entry the short path answers must be answered the same by the
checks; every entry it declines is left to them.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots.episode_labels import verdicts
from strands_robots.errors import LabelValidationError

BIG = 2**64
values = st.one_of(
    st.booleans(),
    st.integers(-(2**65), 2**65),
    st.sampled_from([0, 1, -1, 2**63 - 1, 2**63, 2**64 - 1, BIG, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.text(max_size=3),
)
entries = st.dictionaries(
    st.sampled_from(["episode", "success", "failure", "steps", "cumulative_reward", "seed", "note"]),
    values,
    max_size=7,
)


def checked(entry):
    """The answer of the checks alone (the short path switched off)."""
    original = verdicts._exact_verdict
    verdicts._exact_verdict = lambda _entry: None
    try:
        return ("ok", verdicts._normalise_verdict(0, entry))
    except LabelValidationError:
        return ("refused", None)
    finally:
        verdicts._exact_verdict = original


@settings(max_examples=600, deadline=None)
@given(entries)
def test_the_short_path_agrees_with_the_checks(entry):
    exact = verdicts._exact_verdict(entry)
    if exact is not None:
        assert checked(entry) == ("ok", exact)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 2**40),
    st.booleans(),
    st.integers(0, 10_000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**63), 2**64 - 1),
)
def test_a_plain_benchmark_entry_takes_the_short_path(episode, success, steps, reward, seed):
    entry = {"episode": episode, "success": success, "failure": False, "steps": steps}
    entry |= {"cumulative_reward": reward, "seed": seed}
    exact = verdicts._exact_verdict(entry)
    assert exact == (
        episode,
        {"success": success, "failure": False, "steps": steps}
        | {
            "cumulative_reward": reward,
            "seed": seed,
        },
    )
    assert checked(entry) == ("ok", exact)


def test_entries_the_checks_refuse_are_declined():
    for entry in (
        {"episode": True, "success": True},
        {"episode": 1, "success": 1},
        {"episode": 1, "success": True, "failure": True},
        {"episode": 1, "success": True, "cumulative_reward": math.nan},
        {"episode": 1, "success": True, "seed": BIG},
        {"episode": -1, "success": False},
        {"success": False},
    ):
        assert verdicts._exact_verdict(entry) is None
        assert checked(entry) == ("refused", None)

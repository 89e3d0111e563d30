"""Property tests: the O(n) nesting check agrees with the pairwise rule; a failed append loses nothing."""

from __future__ import annotations

import errno

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots.errors import StorageError
from strands_robots.outcomes import OutcomeValidationError, get_outcome, outcomes_path, set_outcome
from strands_robots.outcomes.model import validate_label


def pairwise_ok(spans: list[tuple[float, float]]) -> bool:
    """The document's rule, pair by pair: sorted by start; disjoint (touching allowed) or nested,
    and with equal starts the enclosing one first."""
    for i in range(1, len(spans)):
        if spans[i][0] < spans[i - 1][0]:
            return False
    for i, (s1, e1) in enumerate(spans):
        for s2, e2 in spans[i + 1 :]:
            disjoint = e1 <= s2 or e2 <= s1
            j_in_i = s1 <= s2 and e2 <= e1
            if not (disjoint or j_in_i):
                return False
    return True


span = st.tuples(st.integers(0, 8), st.integers(0, 4)).map(lambda t: (float(t[0]), float(t[0] + t[1])))


@settings(max_examples=400, deadline=None)
@given(st.lists(span, max_size=7))
def test_nesting_check_matches_the_pairwise_rule(spans):
    subtasks = [{"label": f"s{i}", "start_ts": s, "end_ts": e} for i, (s, e) in enumerate(spans)]
    try:
        validate_label({"outcome": "failure", "subtasks": subtasks})
        accepted = True
    except OutcomeValidationError:
        accepted = False
    assert accepted == pairwise_ok(spans)


def test_a_failed_append_changes_nothing(dataset, monkeypatch):
    set_outcome(dataset, 3, outcome="failure")
    before = outcomes_path(dataset).read_bytes()
    import strands_robots.storage.jsonl as jsonl

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl.os, "write", full)
    with pytest.raises(StorageError, match="free disk space"):
        set_outcome(dataset, 3, outcome="aborted")
    monkeypatch.undo()
    assert outcomes_path(dataset).read_bytes() == before
    assert get_outcome(dataset, 3)["outcome"] == "failure"
    assert set_outcome(dataset, 3, outcome="aborted")["version"] == 2

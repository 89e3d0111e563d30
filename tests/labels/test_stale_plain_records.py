"""The plain-columns fingerprint records (episode_labels.stale): the batch form equals the
row-by-row form for every shape of columns, and both give the stored fingerprint form."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from strands_robots.episode_labels import stale

CONTENT = st.sampled_from(["", "0123456789abcdef", "fedcba9876543210"])


@st.composite
def plain_columns(draw):
    n = draw(st.integers(0, 12))
    task_lists = draw(st.lists(st.lists(st.text(max_size=3), min_size=1, max_size=2), max_size=3))
    columns = {
        "episode": list(range(n)),
        "length": draw(st.lists(st.integers(1, 10**6), min_size=n, max_size=n)),
        "index_from": draw(st.lists(st.integers(0, 10**9), min_size=n, max_size=n)),
        "index_to": draw(st.lists(st.integers(0, 10**9), min_size=n, max_size=n)),
        "task_code": draw(st.lists(st.integers(-1, len(task_lists) - 1), min_size=n, max_size=n)),
        "content": draw(st.lists(CONTENT, min_size=n, max_size=n)),
        "has_range": draw(st.booleans()),
        "task_lists": task_lists,
    }
    if draw(st.booleans()):
        columns["meta"] = "6428cb071cf9bd53"
    positions = draw(st.lists(st.integers(0, n - 1), max_size=n)) if n else []
    return columns, positions


@settings(max_examples=400, deadline=None)
@given(plain_columns())
def test_plain_records_are_plain_record_row_by_row(case):
    columns, positions = case
    records = stale.plain_records(columns, positions)
    assert records == [stale.plain_record(columns, p) for p in positions]
    for record in records:  # separate task lists: editing one record never edits another
        if "tasks" in record:
            record["tasks"].append("edited")
    assert all(t[-1:] != ["edited"] for t in columns["task_lists"])


def test_a_v3_row_with_tasks_content_and_digest():
    columns = {
        "episode": [4, 9],
        "length": [90, 120],
        "index_from": [0, 90],
        "index_to": [90, 210],
        "task_code": [0, -1],
        "content": ["0123456789abcdef", ""],
        "has_range": True,
        "task_lists": [["Pick up the cube."]],
        "meta": "6428cb071cf9bd53",
    }
    assert stale.plain_records(columns, [1, 0]) == [
        {"length": 120, "index_range": [90, 210], "meta": "6428cb071cf9bd53"},
        {
            "length": 90,
            "index_range": [0, 90],
            "tasks": ["Pick up the cube."],
            "content": "0123456789abcdef",
            "meta": "6428cb071cf9bd53",
        },
    ]

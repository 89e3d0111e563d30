"""``annotate_episode`` checks its arguments once and writes through the batch writer's
path: the same record as ``annotate_episodes`` of the same item, and nothing stored when a
value is refused."""

from __future__ import annotations

import pytest

import strands_robots.episode_labels as el
from strands_robots.errors import LabelValidationError, VerdictNotFoundError


def _dataset(root):
    root.mkdir()
    el.record_deterministic_verdicts(root, [{"episode": e, "success": e != 1} for e in range(3)], benchmark="b")
    return root


def _without_time(record):
    record = dict(record)
    record["judge"] = {k: v for k, v in record["judge"].items() if k != "labeled_at"}
    if "judge_history" in record:
        record["judge_history"] = [{k: v for k, v in h.items() if k != "labeled_at"} for h in record["judge_history"]]
    return record


@pytest.mark.parametrize("keep_history", [False, True])
def test_one_annotation_is_the_batch_of_one(tmp_path, keep_history):
    single, batch = _dataset(tmp_path / "single"), _dataset(tmp_path / "batch")
    kwargs = {"quality": "low", "failure_mode": "near_miss", "note": "n", "success_opinion": True, "model": "m"}
    for root in (single, batch):
        el.annotate_episode(root, 1, quality="high")
    one = el.annotate_episode(single, 1, **kwargs, keep_history=keep_history)
    many = el.annotate_episodes(batch, [{"episode": 1, **kwargs, "keep_history": keep_history}])
    assert _without_time(one) == _without_time(many[0])
    assert one["judge"] | {"labeled_at": 0} == {
        "quality": "low",
        "failure_mode": "near_miss",
        "note": "n",
        "success_opinion": True,
        "disputes_verdict": True,  # episode 1 failed; the judge says it succeeded
        "model": "m",
        "labeled_at": 0,
    }
    assert len(one.get("judge_history", [])) == (1 if keep_history else 0)
    assert _without_time(el.read_labels(single)["episodes"]["1"]) == _without_time(one)


def _stored(root):
    """Every file under the root but the lock files (the state folder included)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and "lock" not in p.name}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"quality": "great"}, "quality must be one of"),
        ({"quality": "high", "note": 3}, "note must be a string"),
        ({"quality": "high", "keep_history": "yes"}, "keep_history must be true or false"),
        ({"quality": "high", "success_opinion": 1}, "success_opinion must be true or false"),
    ],
)
def test_a_refused_value_stores_nothing(tmp_path, kwargs, match):
    root = _dataset(tmp_path / "ds")
    el.annotate_episode(root, 0, quality="high")
    before = _stored(root)
    with pytest.raises(LabelValidationError, match=match):
        el.annotate_episode(root, 0, **kwargs)
    assert _stored(root) == before


def test_an_episode_without_a_verdict_is_refused_in_the_loop_too(tmp_path):
    root = _dataset(tmp_path / "ds")
    for _ in range(3):
        el.annotate_episode(root, 2, quality="medium")
    with pytest.raises(VerdictNotFoundError, match="No deterministic verdict recorded for episode 7"):
        el.annotate_episode(root, 7, quality="medium")
    assert sorted(el.read_labels(root)["episodes"]) == ["0", "1", "2"]

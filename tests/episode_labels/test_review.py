"""A re-judge never undoes a human decision (docs/review.md, "When a review stops counting").

An uphold/overrule is about the verdict: it counts until the verdict changes, whatever the
judge writes later. A human grade beats the judge's grade until the human reviews again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from strands_robots import episode_labels as el
from strands_robots.episode_labels.agreement import holdout_from_reviews
from strands_robots.report.summary import summarize

VERDICTS = [
    {"episode": 0, "success": True},
    {"episode": 1, "success": False},
    {"episode": 2, "success": True},
    {"episode": 3, "success": True},
]


def cli(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def _reviewed(root):
    el.record_deterministic_verdicts(root, VERDICTS, benchmark="b")
    for episode in (0, 2, 3):
        el.annotate_episode(root, episode, quality="high", model="m")
    # the judge thinks episode 1 succeeded; a human agrees and overrules the failure verdict
    el.annotate_episode(root, 1, quality="medium", success_opinion=True, model="m")
    el.review_episode(root, 1, decision="overrule_verdict", reviewer="ana", quality="high")
    # a human grade of episode 3 below the judge's
    el.review_episode(root, 3, decision="grade_only", reviewer="ana", quality="low")
    return root


def test_a_new_judge_label_keeps_the_overrule_and_the_human_grade(mixed_lengths):
    root = _reviewed(mixed_lengths)
    assert el.filter_episodes(root) == [0, 1, 2]
    assert el.filter_episodes(root, min_quality="medium") == [0, 1, 2]
    # a re-judge that no longer disputes, and one that grades differently
    el.annotate_episode(root, 1, quality="low", success_opinion=False, model="m2")
    el.annotate_episode(root, 3, quality="high", model="m2")
    assert el.filter_episodes(root) == [0, 1, 2]
    assert el.filter_episodes(root, min_quality="medium") == [0, 1, 2]
    document = el.read_labels(root)
    row1, row3 = summarize(1, document["episodes"]["1"]), summarize(3, document["episodes"]["3"])
    assert (row1["effective_verdict"], row1["review"], row1["review_outdated"], row1["quality"]) == (
        "success",
        "overrule_verdict",
        False,
        "high",
    )
    assert (row3["quality"], row3["review"], row3["review_outdated"]) == ("low", "grade_only", False)
    assert holdout_from_reviews(document) == {1: {"quality": "high"}, 3: {"quality": "low"}}


def test_a_re_judge_that_disputes_again_leaves_the_dispute_decided(mixed_lengths):
    root = _reviewed(mixed_lengths)
    el.annotate_episode(root, 1, quality="medium", success_opinion=True, model="m2", keep_history=True)
    assert el.list_disputes(root) == []
    assert el.filter_episodes(root, exclude_disputed=True) == [0, 1, 2]


def test_a_new_verdict_outdates_the_decision_but_not_the_grade(mixed_lengths):
    root = _reviewed(mixed_lengths)
    el.record_deterministic_verdicts(root, [{"episode": 1, "success": False, "steps": 7}], benchmark="b")
    record = el.read_labels(root)["episodes"]["1"]
    row = summarize(1, record)
    assert (row["effective_verdict"], row["review_outdated"], row["dispute"], row["quality"]) == (
        "failure",
        True,
        "open",
        "high",
    )
    assert el.filter_episodes(root) == [0, 2]


def test_a_file_written_under_the_old_rule_reads_under_the_new_one(mixed_lengths):
    """A review whose judge_seen no longer matches (the old rule called it outdated) counts."""
    root = _reviewed(mixed_lengths)
    el.flush(root)
    path = root / "episode_labels.json"
    document = json.loads(path.read_text())
    document["episodes"]["1"]["review"]["judge_seen"] = "0123456789abcdef"
    path.write_text(json.dumps(document, indent=2))
    assert el.filter_episodes(root) == [0, 1, 2]


def test_judge_relabel_leaves_filter_unchanged_and_says_the_decisions_stand(mixed_lengths):
    root = _reviewed(mixed_lengths)
    el.flush(root)
    before = cli("filter", root)
    assert before.returncode == 0, before.stderr
    assert json.loads(before.stdout) == [0, 1, 2]
    judged = cli("judge", root, "--relabel")
    assert judged.returncode == 0, judged.stderr + judged.stdout
    text = " ".join(judged.stdout.split())
    assert "2 reviewed episode(s) re-graded; their human decisions stand" in text
    after = cli("filter", root)
    assert json.loads(after.stdout) == [0, 1, 2], after.stderr
    document = el.read_labels(root)
    assert all(document["episodes"][k]["judge"]["model"] == "heuristic-v1" for k in "0123")
    assert summarize(1, document["episodes"]["1"])["review"] == "overrule_verdict"

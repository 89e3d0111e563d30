"""Any interleaving of record, annotate, remap, review and filter keeps every deterministic
block byte-identical to its last recording, and filter_episodes equals a plain reference
model of the rules (docs/performance.md, "Reliability tests (in CI)"; the rules are those of
docs/sidecar-format.md, "`deterministic`", "`judge`" and "`review` (humans only)")."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from strands_robots import episode_labels as el
from strands_robots.errors import LabelValidationError

EPISODES = 6
QUALITIES = ("low", "medium", "high")
RANK = {q: i for i, q in enumerate(QUALITIES)}


def judge_key(entry: dict) -> tuple | None:
    """What identifies the judge block a review saw: the annotation and its dispute flag."""
    judge = entry["judge"]
    return None if judge is None else (judge["version"], judge["disputes"])


def decision_counts(entry: dict) -> bool:
    """An uphold/overrule counts while the verdict it saw is the verdict now, whatever the
    judge wrote since (docs/review.md, "When a review stops counting"). A verdict changed
    and changed back is the verdict the review saw, so the decision counts again."""
    review = entry["review"]
    return review is not None and review["decision"] != "grade_only" and review["verdict_seen"] == entry["det"]


class LabelsMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        # the reference model: episode -> {"det": dict, "judge": dict|None, "review": dict|None}
        self.model: dict[int, dict] = {}
        self.annotations = 0  # every annotation writes a new judge block (a new labeled_at)

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(episode=st.integers(0, EPISODES - 1), success=st.booleans(), steps=st.integers(0, 500))
    def record(self, episode, success, steps):
        el.record_deterministic_verdicts(self.dir, [{"episode": episode, "success": success, "steps": steps}])
        block = {"success": success, "failure": False, "steps": steps}
        entry = self.model.setdefault(episode, {"det": None, "judge": None, "review": None})
        if entry["det"] != block and entry["judge"] is not None:
            opinion = entry["judge"]["opinion"]
            entry["judge"]["disputes"] = opinion is not None and opinion != success
        entry["det"] = block

    @precondition(lambda self: self.model)
    @rule(data=st.data(), quality=st.sampled_from(QUALITIES), opinion=st.sampled_from([None, True, False]))
    def annotate(self, data, quality, opinion):
        episode = data.draw(st.sampled_from(sorted(self.model)))
        el.annotate_episode(self.dir, episode, quality=quality, success_opinion=opinion)
        entry = self.model[episode]
        success = entry["det"]["success"]
        self.annotations += 1
        entry["judge"] = {
            "version": self.annotations,
            "quality": quality,
            "opinion": opinion,
            "disputes": opinion is not None and opinion != success,
        }

    @precondition(lambda self: self.model)
    @rule(
        data=st.data(),
        decision=st.sampled_from(["uphold_verdict", "overrule_verdict", "grade_only"]),
        quality=st.sampled_from([None, *QUALITIES]),
    )
    def review(self, data, decision, quality):
        episode = data.draw(st.sampled_from(sorted(self.model)))
        entry = self.model[episode]
        disputed = entry["judge"] is not None and entry["judge"]["disputes"]
        try:
            el.review_episode(self.dir, episode, decision=decision, reviewer="h", quality=quality)
        except LabelValidationError:
            assert decision != "grade_only" and not disputed
            return
        assert decision == "grade_only" or disputed
        entry["review"] = {
            "decision": decision,
            "quality": quality,
            "verdict_seen": dict(entry["det"]),
            "judge_seen": judge_key(entry),
        }

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def remap(self, data):
        old = sorted(self.model)
        keep = data.draw(st.lists(st.sampled_from(old), unique=True))
        targets = data.draw(st.permutations(list(range(EPISODES))))[: len(keep)]
        mapping = {str(o): n for o, n in zip(keep, targets, strict=True)}
        el.remap(self.dir, mapping, allow_drop=True)
        self.model = {n: self.model[o] for o, n in zip(keep, targets, strict=True)}

    @rule(
        require_success=st.booleans(),
        min_quality=st.sampled_from(QUALITIES),
        exclude_disputed=st.booleans(),
    )
    def filter(self, require_success, min_quality, exclude_disputed):
        if not (self.dir / "episode_labels.json").exists():
            return
        expected = []
        for episode, entry in sorted(self.model.items()):
            judge, review = entry["judge"], entry["review"]
            if judge is None:
                continue
            decided = decision_counts(entry)
            success = entry["det"]["success"]
            if decided and review["decision"] == "overrule_verdict":
                success = not success
            # a human grade counts until the next review, whatever the verdict or the judge become
            quality = review["quality"] if review and review["quality"] else judge["quality"]
            open_dispute = judge["disputes"] and not decided
            if require_success and not success:
                continue
            if RANK[quality] < RANK[min_quality]:
                continue
            if exclude_disputed and open_dispute:
                continue
            expected.append(episode)
        got = el.filter_episodes(
            self.dir, require_success=require_success, min_quality=min_quality, exclude_disputed=exclude_disputed
        )
        assert got == expected

    @invariant()
    def deterministic_blocks_are_as_last_recorded(self):
        if not (self.dir / "episode_labels.json").exists():
            return
        document = el.read_labels(self.dir)
        assert sorted(int(k) for k in document["episodes"]) == sorted(self.model)
        for episode, entry in self.model.items():
            stored = document["episodes"][str(episode)]["deterministic"]
            assert json.dumps(stored, sort_keys=True) == json.dumps(entry["det"], sort_keys=True)


LabelsMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestLabelsStateful = LabelsMachine.TestCase

"""Selection across the label and outcome stores (``strands_robots.selection``): the outcome
filters of ``filter_episodes`` read an unset ``evaluation_membership`` as ``""``, never as
``"none"``, and a typo in an outcome filter is refused with the near miss rather than
answered with an empty list (docs/outcomes.md, "The label" and "Reading and filtering")."""

from __future__ import annotations

import pytest

from strands_robots import episode_labels as el
from strands_robots.errors import LabelValidationError
from strands_robots.outcomes import set_outcome


def test_unset_membership_is_not_none(mixed_lengths):
    root = mixed_lengths
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(4)])
    for episode in range(4):
        el.annotate_episode(root, episode, quality="high")
    set_outcome(root, 1, outcome="expert_success", evaluation_membership="train")
    set_outcome(root, 2, outcome="expert_success")  # unset
    set_outcome(root, 3, outcome="expert_success", evaluation_membership="none")
    assert el.filter_episodes(root, evaluation_membership="none") == [3]
    assert el.filter_episodes(root, evaluation_membership="") == [2]
    assert el.filter_episodes(root, evaluation_membership=["train", ""]) == [1, 2]
    with pytest.raises(LabelValidationError, match=r"Did you mean: 'nnone' -> 'none'\?"):
        el.filter_episodes(root, evaluation_membership="nnone")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"outcomes": "bogus"}, "expert_success"),
        ({"evaluation_membership": "tran"}, "Did you mean: 'tran' -> 'train'?"),
    ],
)
def test_a_typo_in_an_outcome_filter_is_refused_not_an_empty_list(tmp_path, kwargs, match):
    el.record_deterministic_verdicts(tmp_path, [{"episode": 0, "success": True}])
    el.annotate_episode(tmp_path, 0, quality="high")
    with pytest.raises(LabelValidationError, match=match):
        el.filter_episodes(tmp_path, **kwargs)

"""Fixtures of the judge tests: the toy dataset with verdicts, a clean environment."""

from __future__ import annotations

import os

import pytest

from strands_robots.episode_labels import record_deterministic_verdicts

os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

#: Verdicts of the toy dataset (standing in for a benchmark run): 0 and 1 succeed, 2 fails.
TOY_VERDICTS = [
    {"episode": 0, "success": True, "failure": False, "steps": 90, "cumulative_reward": 1.0, "seed": 0},
    {"episode": 1, "success": True, "failure": False, "steps": 90, "cumulative_reward": 1.0, "seed": 1},
    {"episode": 2, "success": False, "failure": True, "steps": 90, "cumulative_reward": 0.0, "seed": 2},
]


@pytest.fixture(autouse=True)
def _no_allow_list_from_env(monkeypatch):
    """Tests set STRANDS_LABELS_ROOTS themselves when they need it."""
    monkeypatch.delenv("STRANDS_LABELS_ROOTS", raising=False)


@pytest.fixture
def toy_with_verdicts(toy_dataset):
    """A writable toy dataset copy whose three episodes have verdicts (2 fails)."""
    record_deterministic_verdicts(toy_dataset, TOY_VERDICTS, benchmark="toy")
    return toy_dataset

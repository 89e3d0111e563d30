"""With the `lerobot` extra installed, LeRobot loads exactly the filtered episodes of the toy
dataset. Skipped otherwise (CI does not install lerobot: several GB with torch)."""

from __future__ import annotations

import json

import pytest

from strands_robots.episode_labels import annotate_episode, filter_episodes, record_deterministic_verdicts
from tests.conftest import REPO


def test_lerobot_loads_exactly_the_filtered_episodes(toy_dataset):
    lerobot_dataset = pytest.importorskip(
        "lerobot.datasets.lerobot_dataset", reason="the lerobot extra is not installed (pip install -e '.[lerobot]')"
    )
    verdicts = json.loads((REPO / "examples" / "toy_dataset_verdicts.json").read_text())
    record_deterministic_verdicts(toy_dataset, verdicts)
    annotate_episode(toy_dataset, 0, quality="high")
    annotate_episode(toy_dataset, 1, quality="low")
    annotate_episode(toy_dataset, 2, quality="high")
    episodes = filter_episodes(toy_dataset)
    assert episodes == [0]
    dataset = lerobot_dataset.LeRobotDataset("local/toy_dataset", root=toy_dataset, episodes=episodes)
    assert sorted({int(i) for i in dataset.hf_dataset["episode_index"]}) == episodes
    assert len(dataset) == 90

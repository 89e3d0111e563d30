"""Fixtures of the review page and report tests: labelled copies of real datasets.

``labelled_toy``: ``examples/toy_dataset`` (3 episodes x 90 frames, one AV1 camera,
v3.0 shared mp4) with the verdicts of ``examples/toy_dataset_verdicts.json`` (0 and 1
succeed, 2 fails) and judge labels:

==========  =======  =======  ========  ============  =========
episode     verdict  opinion  quality   failure_mode  dispute
==========  =======  =======  ========  ============  =========
0           success  success  high      —             no
1           success  failure  medium    near_miss     open
2           failure  success  low       incomplete    open
==========  =======  =======  ========  ============  =========

``labelled_no_video``: the shared ``so101-record-test-v30`` (4 episodes, two cameras
whose mp4 files are not in the copy), every verdict success and the judge disputing
episode 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strands_robots import episode_labels as el

REPO = Path(__file__).resolve().parents[2]
TOY_VERDICTS = REPO / "examples" / "toy_dataset_verdicts.json"
JUDGE = "test-judge"


@pytest.fixture
def labelled_toy(toy_dataset: Path) -> Path:
    el.record_deterministic_verdicts(toy_dataset, json.loads(TOY_VERDICTS.read_text()), benchmark="toy")
    el.annotate_episode(toy_dataset, 0, quality="high", success_opinion=True, model=JUDGE)
    el.annotate_episode(
        toy_dataset,
        1,
        quality="medium",
        failure_mode="near_miss",
        success_opinion=False,
        note="the fingers close late",
        model=JUDGE,
    )
    el.annotate_episode(
        toy_dataset,
        2,
        quality="low",
        failure_mode="incomplete",
        success_opinion=True,
        note="the bottle is lifted",
        model=JUDGE,
    )
    return toy_dataset


@pytest.fixture
def labelled_no_video(shared_dataset, copy_dataset) -> Path:
    root = copy_dataset(shared_dataset("so101-record-test-v30"))
    assert not list(root.glob("videos/**/*.mp4")), "this fixture needs a dataset without its videos"
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(4)])
    el.annotate_episode(root, 1, quality="low", failure_mode="collision", success_opinion=False, model=JUDGE)
    return root

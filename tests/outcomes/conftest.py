"""Fixtures of the outcome-label tests: a small real LeRobot dataset and the format's example labels.

The dataset is the docs' minimal v3.0 toy dataset, which the reader opens (docs/dataset.md,
"What `open_dataset(root)` reads"): ``meta/info.json`` with fps, totals and ``features: {}``,
and ``meta/episodes/chunk-000/file-000.parquet`` with ``episode_index`` and ``length``,
written with pyarrow. Its episodes are non-contiguous (no episode 2) and at 30 fps:

- episode 0: 600 frames = 20.0 s (the example label of the outcomes format ends at 19.8 s;
  its write example ends at 21.5 s, past 20.0 + 1 s: the error example of docs/outcomes.md,
  "The label")
- episode 1: 660 frames = 22.0 s (21.5 s is allowed)
- episodes 3..12: 90 frames = 3.0 s each
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

FPS = 30
LENGTHS = {0: 600, 1: 660, **{e: 90 for e in range(3, 13)}}

#: The example label of the outcomes format (a dishwasher-loading human demonstration with a
#: recovered slip), writable fields only; its fields are those of docs/outcomes.md, "The label".
DOC_LABEL = {
    "outcome": "mistake_and_recovery",
    "progress": 1.0,
    "quality": 4,
    "speed": 3,
    "subtasks": [
        {
            "label": "Load the plate into the lower rack",
            "start_ts": 0.0,
            "end_ts": 19.8,
            "outcome": "mistake_and_recovery",
        },
        {"label": "Pull out the lower rack", "start_ts": 0.0, "end_ts": 6.2, "outcome": "expert_success"},
        {
            "label": "Place the wet plate in a free slot",
            "start_ts": 6.2,
            "end_ts": 19.8,
            "outcome": "mistake_and_recovery",
        },
    ],
    "hand_actions": {
        "left": [
            {
                "start_ts": 0.0,
                "end_ts": 6.2,
                "action": "pulling the lower rack out by its front edge",
                "object": "dishwasher rack",
                "verb": "pull",
                "contact": True,
            },
            {
                "start_ts": 6.2,
                "end_ts": 19.8,
                "action": "holding the rack steady",
                "object": "dishwasher rack",
                "verb": "hold",
                "contact": True,
            },
        ],
        "right": [
            {
                "start_ts": 6.2,
                "end_ts": 9.1,
                "action": "carrying the wet plate to the rack",
                "object": "plate",
                "verb": "carry",
                "contact": True,
            },
            {
                "start_ts": 9.1,
                "end_ts": 10.4,
                "action": "the plate slips out of the grasp",
                "object": "plate",
                "verb": None,
                "contact": False,
            },
            {
                "start_ts": 10.4,
                "end_ts": 14.7,
                "action": "regrasping the plate by its rim",
                "object": "plate",
                "verb": "grasp",
                "contact": True,
            },
            {
                "start_ts": 14.7,
                "end_ts": 19.8,
                "action": "placing the plate in a free slot",
                "object": "plate",
                "verb": "place",
                "contact": True,
            },
        ],
    },
    "mistake_type": "slip_during_place",
    "recovery_type": "regrasp",
    "failure_stage": "place",
    "autonomy_level": "human_demonstration",
    "model_version": "",
    "evaluation_membership": "train",
    "leakage_groups": {
        "location": "loc_8f2a",
        "object": "obj_set_31",
        "mechanism": "dishwasher_pull_rack_v2",
        "operator": "op_5c1e",
        "environment_family": "kitchen_galley",
    },
    "source": "human",
    "source_metadata": {},
    "confidence": None,
}

#: The write example of the outcomes format: the ``set_outcome`` example at the top of
#: docs/outcomes.md, with a subtask ending at 21.5 s (the error example under "The label").
DOC_WRITE = {
    "outcome": "failure",
    "progress": 0.4,
    "subtasks": [{"label": "Place the plate in the lower rack", "start_ts": 0.0, "end_ts": 21.5, "outcome": "failure"}],
    "mistake_type": "slip_during_place",
    "failure_stage": "place",
    "autonomy_level": "autonomous",
    "model_version": "your-policy@2026-09-20",
    "evaluation_membership": "held_out_eval",
    "source": "imported",
    "source_metadata": {"importer": "your-eval-harness", "run_id": "r42", "task": "load_dishwasher"},
}


def write_minimal_dataset(root: Path, lengths: dict[int, int] = LENGTHS, fps: int = FPS) -> Path:
    """The minimal LeRobot v3.0 metadata the docs' toy example writes."""
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True)
    info = {
        "fps": fps,
        "total_episodes": len(lengths),
        "total_frames": sum(lengths.values()),
        "features": {},
    }
    (root / "meta" / "info.json").write_text(json.dumps(info))
    table = pa.table(
        {
            "episode_index": pa.array(list(lengths), pa.int64()),
            "length": pa.array(list(lengths.values()), pa.int64()),
        }
    )
    pq.write_table(table, root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    return root


@pytest.fixture
def dataset(tmp_path) -> Path:
    """A writable minimal dataset (episodes 0, 1, 3..12; see the module docstring)."""
    return write_minimal_dataset(tmp_path / "kitchen-rollouts")


@pytest.fixture
def doc_label() -> dict:
    """A fresh copy of the document's example label."""
    return copy.deepcopy(DOC_LABEL)


@pytest.fixture
def doc_write() -> dict:
    """A fresh copy of the document's write example."""
    return copy.deepcopy(DOC_WRITE)


@pytest.fixture
def rewrite_dataset():
    """``rewrite_dataset(root, extra_lengths)``: replace the metadata with LENGTHS plus more episodes."""

    def _rewrite(root: Path, extra: dict[int, int]) -> Path:
        import shutil

        shutil.rmtree(root / "meta")
        return write_minimal_dataset(root, {**LENGTHS, **extra})

    return _rewrite

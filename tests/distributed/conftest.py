"""A real local Ray cluster (2 CPUs, no dashboard, a small object store) for the distributed tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strands_robots.episode_labels import record_deterministic_verdicts

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ray_cluster():
    """``ray.init`` of a local 2-CPU cluster whose workers import this repository; shut down after."""
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    if ray.is_initialized():
        ray.shutdown()
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024**2,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path, "AWS_EC2_METADATA_DISABLED": "true"}},
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def g1_verdicts(n: int = 100) -> list[dict]:
    """Verdicts for the g1 dataset's episodes: every third fails."""
    return [
        {"episode": e, "success": e % 3 != 0, "failure": e % 3 == 0, "steps": 300, "cumulative_reward": 0.0, "seed": e}
        for e in range(n)
    ]


@pytest.fixture
def g1_with_verdicts(shared_dataset, copy_dataset):
    """A writable copy of the 100-episode g1-inspire-v21 dataset with verdicts."""
    root = copy_dataset(shared_dataset("g1-inspire-v21"))
    record_deterministic_verdicts(root, g1_verdicts(), benchmark="test")
    return root

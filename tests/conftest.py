"""Fixtures shared by every test package.

The shared datasets live in ``../shared/datasets`` beside the repository (override with
``STRANDS_LABELS_SHARED``). They are read-only: tests that write labels copy them first.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

#: Why tests skip, as the closing summary names it: (words in a skip reason, what to do).
SKIP_CAUSES = (
    (
        "shared dataset",
        "the shared datasets are not at {datasets}: set STRANDS_LABELS_SHARED=/path/to/shared "
        "(the folder holding datasets/; README.md, 'Tests')",
    ),
    ("chromium", "Debian chromium is not installed: apt-get install -y chromium (README.md, 'Tests')"),
)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STRANDS_LABELS_SHARED", REPO.parent / "shared")).resolve()
SHARED_DATASETS = SHARED / "datasets"
TOY_DATASET = REPO / "examples" / "toy_dataset"


def shared_dataset_path(name: str) -> Path:
    """Path of a shared dataset, or skip the test with the reason."""
    path = SHARED_DATASETS / name
    if not (path / "meta" / "info.json").is_file():
        pytest.skip(
            f"shared dataset {name!r} not found at {path}: ../shared is absent on this machine; "
            "set STRANDS_LABELS_SHARED=/path/to/shared (the folder holding datasets/) to run this test"
        )
    return path


@pytest.fixture
def shared_dataset():
    """``shared_dataset("g1-inspire-v21")`` -> read-only path (skips when absent)."""
    return shared_dataset_path


def writable_copy(src: Path, dst: Path) -> Path:
    """Copy ``src`` to ``dst`` and make the copy writable (shared/ is read-only in CI); returns ``dst``."""
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    dst.chmod(0o755)
    return dst


@pytest.fixture
def copy_dataset(tmp_path):
    """``copy_dataset(src)`` -> a writable copy of ``src`` under ``tmp_path``."""

    def _copy(src: Path, name: str | None = None) -> Path:
        return writable_copy(src, tmp_path / (name or Path(src).name))

    return _copy


def toy_copy(dst: Path) -> Path:
    """A writable copy of ``examples/toy_dataset`` at ``dst`` (skips the test when it is not built)."""
    if not (TOY_DATASET / "meta" / "info.json").is_file():
        pytest.skip("examples/toy_dataset is not built")
    return writable_copy(TOY_DATASET, dst)


@pytest.fixture
def toy_dataset(tmp_path):
    """A writable copy of ``examples/toy_dataset``."""
    return toy_copy(tmp_path / "toy_dataset")


#: Verdicts of the toy dataset (standing in for a benchmark run): 0 and 1 succeed, 2 fails.
JUDGED_TOY_VERDICTS = [
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
    from strands_robots.episode_labels import record_deterministic_verdicts

    record_deterministic_verdicts(toy_dataset, JUDGED_TOY_VERDICTS, benchmark="toy")
    return toy_dataset


@pytest.fixture
def mixed_lengths(tmp_path):
    """A synthetic v3.0 dataset (``tests/synth.py``) of four episodes: 0 has 60 frames, 1-3 have 90."""
    from tests.synth import make_v3_dataset

    return make_v3_dataset(tmp_path / "ds", [60, 90, 90, 90])


@pytest.fixture
def lerobot():
    """``lerobot(code, **args)`` runs ``code`` under lerobot 0.6.1 (``tests/lerobot_env.py``).

    Skips the test, with the reason, when ``.venv-lerobot`` is absent.
    """
    from tests.lerobot_env import lerobot_missing, run_lerobot

    missing = lerobot_missing()
    if missing:
        pytest.skip(missing)
    return run_lerobot


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One closing line per cause of skipped tests, with the remedy (README.md, "Tests")."""
    counts: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr)
        for words, remedy in SKIP_CAUSES:
            if words in reason:
                text = remedy.format(datasets=SHARED_DATASETS)
                counts[text] = counts.get(text, 0) + 1
                break
    for text, count in counts.items():
        terminalreporter.write_line(f"{count} {'test' if count == 1 else 'tests'} skipped: {text}")

"""Fixtures of the dataset tests: a LeRobot cache of Hub datasets built from the shared datasets."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture
def hub_cache(tmp_path, monkeypatch, shared_dataset):
    """HF_LEROBOT_HOME with lerobot/g1 (v2.1, 100 episodes) and lerobot/so101 (v3.0), offline."""
    home = tmp_path / "hf" / "lerobot"
    for name, source in (("g1", "g1-inspire-v21"), ("so101", "so101-record-test-v30")):
        dst = home / "lerobot" / name
        shutil.copytree(shared_dataset(source), dst)
        for p in [dst, *dst.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
    monkeypatch.setenv("HF_LEROBOT_HOME", str(home))
    monkeypatch.setenv("STRANDS_LABELS_HOME", str(tmp_path / "labels"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # a relative lerobot/g1 must not exist here
    return home

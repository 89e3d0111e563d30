"""No file this package creates or writes is opened through a symbolic link: a link planted at
any derived file's name (lock, journal, base, conflicts, caches, temp names, leases) is refused by
name or never written through, and nothing is created or changed outside the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.episode_labels.document import open_store
from strands_robots.errors import SidecarError
from strands_robots.storage.atomic import atomic_write_bytes, replace_cache_file
from strands_robots.storage.lease import EpisodeLeases
from strands_robots.storage.side_files import (
    conflicts_path,
    index_cache_path,
    journal_base_path,
    journal_path,
    labels_dir_key_path,
    lease_path,
    lock_path,
    rejected_path,
    state_dir,
)

SIDECAR = "episode_labels.json"
DERIVED = {
    "lock": lock_path,
    "journal": journal_path,
    "journal base": journal_base_path,
    "rejected lines": rejected_path,
    "conflicts": conflicts_path,
    "index cache": index_cache_path,
    "labels-dir key": lambda s: labels_dir_key_path(s.parent),
}


def _outside(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "victim").write_bytes(b"not yours")
    return root, outside


def _untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
    assert (outside / "victim").read_bytes() == b"not yours"


@pytest.mark.parametrize("name", sorted(DERIVED))
@pytest.mark.parametrize("target", ["victim", "dangling"])
def test_a_link_at_a_derived_file_is_never_written_through(tmp_path, name, target):
    root, outside = _outside(tmp_path)
    el.record_deterministic_verdicts(root, [{"episode": i, "success": True} for i in range(3)])
    path = DERIVED[name](root / SIDECAR)
    state_dir(root).mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    os.symlink(outside / target, path)
    store = open_store(root)
    store.write_through_bytes = 0  # write through the journal (and its base, then a fold)
    for call in (
        lambda: el.annotate_episode(root, 0, quality="high"),
        lambda: el.annotate_episode(root, 1, quality="low"),
        lambda: el.flush(root),
        lambda: el.filter_episodes(root),
        lambda: replace_cache_file(path, b"cache"),
    ):
        try:
            call()
        except SidecarError as exc:
            assert str(path) in str(exc) or "symbolic link" in str(exc)
    _untouched(outside)


def test_a_link_at_a_temp_name_cannot_be_taken_over(tmp_path):
    """Temp files are created O_EXCL | O_NOFOLLOW under unpredictable names: planting links at
    the names earlier versions used (``<name>.<pid>.tmp``) redirects nothing."""
    root, outside = _outside(tmp_path)
    state_dir(root).mkdir()
    for name in (f"{SIDECAR}.{os.getpid()}.tmp", f"{SIDECAR}.index.npz.{os.getpid()}.tmp"):
        os.symlink(outside / "victim", state_dir(root) / name)
    assert replace_cache_file(index_cache_path(root / SIDECAR), b"cache") is True
    atomic_write_bytes(root / SIDECAR, b"{}\n")
    _untouched(outside)


def test_a_link_in_place_of_the_sidecar_is_refused_by_name(tmp_path):
    root, outside = _outside(tmp_path)
    os.symlink(outside / "victim", root / SIDECAR)
    with pytest.raises(SidecarError, match="symbolic link"):
        el.record_deterministic_verdicts(root, [{"episode": 0, "success": True}])
    with pytest.raises(SidecarError, match="symbolic link"):
        el.read_labels(root)
    _untouched(outside)


@pytest.mark.parametrize("where", ["state folder", "leases folder", "lease file"])
@pytest.mark.parametrize("target", ["victim", "dangling"])
def test_a_link_at_a_lease_is_refused_by_name_and_never_written_through(tmp_path, where, target):
    """A judge run's episode lease (``.strands-labels/leases/episode-N.lock``) is created like
    every derived file: no folder is made through a link and the file is opened O_NOFOLLOW."""
    root, outside = _outside(tmp_path)
    lease = lease_path(root, 3)
    planted = {"state folder": state_dir(root), "leases folder": lease.parent, "lease file": lease}[where]
    planted.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside if where != "lease file" else outside / target, planted)
    if where != "lease file" and target == "dangling":
        planted.unlink()
        os.symlink(outside / "dangling", planted)
    leases = EpisodeLeases(root)
    with pytest.raises(SidecarError, match="symbolic link") as refused:
        leases.take(3)
    assert str(planted) in str(refused.value)
    assert leases.held == []
    _untouched(outside)
    planted.unlink()  # the link removed, as the message says: the lease is taken
    assert leases.take(3) is True and lease.is_file() and not lease.is_symlink()
    leases.give_back_all()
    _untouched(outside)

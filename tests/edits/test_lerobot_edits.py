"""Labels follow the dataset through lerobot 0.6.1's own edits (docs/editing.md).

lerobot itself (``lerobot.datasets.dataset_tools`` and ``lerobot-edit-dataset``'s in-place
delete) edits copies of a shared dataset; the project carries the sidecars with
``remap_dataset(new, source=old)``; lerobot then reads every episode's length, tasks and
``observation.state`` rows, and each carried label must sit on the episode holding the
recording it was written for (its note names the source episode).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.outcomes import current_outcomes, set_outcome, stale_outcomes
from strands_robots.remap import remap_dataset
from strands_robots.storage.side_files import SIDECARS
from tests.conftest import shared_dataset_path, writable_copy

DATASET = "lerobot-written-v30-video"

EDIT = """
import hashlib
import numpy as np
from lerobot.datasets import dataset_tools as T
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from lerobot.scripts.lerobot_edit_dataset import DeleteEpisodesConfig, EditDatasetConfig, handle_delete_episodes

def ident(root):
    ds = LeRobotDataset("local/" + Path(root).name, root=root)
    hf = ds.hf_dataset.with_format(None)
    eps = np.asarray(hf["episode_index"])
    states = np.asarray(hf["observation.state"], dtype=np.float32)
    out = {}
    for ep in range(ds.meta.total_episodes):
        meta = ds.meta.episodes[ep]
        rows = states[eps == ep]
        out[str(ep)] = {"length": int(meta["length"]), "tasks": list(meta["tasks"]),
                        "state": hashlib.sha256(rows.tobytes()).hexdigest()[:16], "rows": int(len(rows))}
    return out

W = Path(ARGS["work"])
found = {"src": ident(W / "src")}
src = LeRobotDataset("local/src", root=W / "src")
T.delete_episodes(src, [1], output_dir=W / "deleted", repo_id="local/deleted")
found["deleted"] = ident(W / "deleted")
for name, part in T.split_dataset(src, {"a": [0, 2], "b": [1, 3]}, output_dir=W / "split").items():
    found["split/" + name] = ident(part.root)
T.modify_tasks(LeRobotDataset("local/retask", root=W / "retask"), new_task="stack the red cube")
found["retask"] = ident(W / "retask")
handle_delete_episodes(EditDatasetConfig(operation=DeleteEpisodesConfig(episode_indices=[2]), repo_id="local/inplace",
                                         root=str(W / "inplace"), new_root=str(W / "inplace")))
found["inplace"] = ident(W / "inplace")
emit(found)
"""


def _label(root: Path, episodes: int) -> None:
    el.record_deterministic_verdicts(root, [{"episode": e, "success": e % 2 == 0} for e in range(episodes)])
    for e in range(episodes):
        el.annotate_episode(root, e, quality="high", note=f"source episode {e}")
    for e in (1, 3):
        set_outcome(root, e, outcome="failure")


def _dataset_files(src: Path, dst: Path) -> Path:
    writable_copy(src, dst)
    for name in SIDECARS:
        (dst / name).unlink(missing_ok=True)
    shutil.rmtree(dst / ".strands-labels", ignore_errors=True)
    return dst


def _check(root: Path, found: dict, source: dict, *, expected: int, same_tasks: bool = True) -> None:
    notes = {int(k): r["judge"]["note"] for k, r in el.read_labels(root)["episodes"].items()}
    assert len(notes) == expected == len(found)  # 100 % of the kept recordings carried
    for episode, note in notes.items():
        was = source[note.rsplit(" ", 1)[1]]
        now = found[str(episode)]
        assert (now["length"], now["state"], now["rows"]) == (was["length"], was["state"], was["rows"])
        if same_tasks:
            assert now["tasks"] == was["tasks"]
    assert el.stale_episodes(root) == {}


def test_labels_follow_lerobot_edits(lerobot, tmp_path: Path) -> None:
    shared = shared_dataset_path(DATASET)
    src = writable_copy(shared, tmp_path / "src")
    _label(src, 4)
    _dataset_files(src, tmp_path / "retask")
    writable_copy(src, tmp_path / "inplace")
    found = lerobot(EDIT, work=str(tmp_path), timeout=900)
    source = found["src"]

    with pytest.raises(Exception, match=r"\[1\].*--allow-drop"):
        remap_dataset(tmp_path / "deleted", source=src)
    remap_dataset(tmp_path / "deleted", source=src, allow_drop=True)
    _check(tmp_path / "deleted", found["deleted"], source, expected=3)
    assert sorted(current_outcomes(tmp_path / "deleted")) == [2]  # source 3; source 1 was deleted
    assert remap_dataset(tmp_path / "deleted", source=src, allow_drop=True).already_applied

    for name in ("a", "b"):
        part = tmp_path / "split" / name
        remap_dataset(part, source=src, allow_drop=True)
        _check(part, found[f"split/{name}"], source, expected=2)

    result = remap_dataset(tmp_path / "retask", source=src)
    _check(tmp_path / "retask", found["retask"], source, expected=4, same_tasks=False)
    assert all(list(after) == ["stack the red cube"] for _, after in result.retasked.values())
    assert sorted(current_outcomes(tmp_path / "retask")) == [1, 3]
    assert stale_outcomes(tmp_path / "retask") == {}
    assert len(result.retasked) == 4

    old = tmp_path / "inplace_old"
    assert (old / "episode_labels.json").exists() and not (tmp_path / "inplace" / "episode_labels.json").exists()
    remap_dataset(tmp_path / "inplace", source=old, allow_drop=True)
    _check(tmp_path / "inplace", found["inplace"], source, expected=3)

"""Labels follow the dataset through lerobot 0.6.1's own edits (docs/editing.md).

lerobot itself (``lerobot.datasets.dataset_tools`` and ``lerobot-edit-dataset``'s in-place
delete) edits copies of a shared dataset; the project carries the sidecars with
``remap_dataset(new, source=old)``; lerobot then reads every episode's length, tasks and
``observation.state`` rows, and each carried label must sit on the episode holding the
recording it was written for (its note names the source episode).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strands_robots import episode_labels as el
from strands_robots.outcomes import current_outcomes, outcome_history, set_outcome, stale_outcomes
from strands_robots.remap import remap_dataset
from strands_robots.storage.side_files import SIDECARS
from tests.conftest import shared_dataset_path, writable_copy

DATASET = "lerobot-written-v30-video"

#: ``ident(root)``: what lerobot reads of each episode: its length, tasks (from the episodes
#: metadata, or from its rows' ``task_index`` where the metadata has none: what
#: ``convert_image_to_video`` writes) and the digest of its ``observation.state`` rows.
IDENT = """
import hashlib
import numpy as np
from lerobot.datasets import dataset_tools as T
from lerobot.datasets.lerobot_dataset import LeRobotDataset

def ident(root):
    ds = LeRobotDataset("local/" + Path(root).name, root=root)
    hf = ds.hf_dataset.with_format(None)
    eps = np.asarray(hf["episode_index"])
    states = np.asarray(hf["observation.state"], dtype=np.float32)
    task_rows = np.asarray(hf["task_index"])
    names = {int(i): str(t) for t, i in zip(ds.meta.tasks.index, ds.meta.tasks["task_index"])}
    out = {}
    for ep in range(ds.meta.total_episodes):
        meta = ds.meta.episodes[ep]
        rows = states[eps == ep]
        tasks = list(meta["tasks"]) if "tasks" in meta else [names[int(i)] for i in sorted(set(task_rows[eps == ep]))]
        out[str(ep)] = {"length": int(meta["length"]), "tasks": tasks,
                        "state": hashlib.sha256(rows.tobytes()).hexdigest()[:16], "rows": int(len(rows))}
    return out
"""

EDIT = (
    IDENT
    + """
from lerobot.scripts.lerobot_edit_dataset import DeleteEpisodesConfig, EditDatasetConfig, handle_delete_episodes

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
)


def _label(root: Path, episodes: int) -> None:
    el.record_deterministic_verdicts(root, [{"episode": e, "success": e % 2 == 0} for e in range(episodes)])
    for e in range(episodes):
        el.annotate_episode(root, e, quality="high", note=f"source episode {e}")
    for e in (1, 3):
        set_outcome(root, e, outcome="failure")


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
    writable_copy(src, tmp_path / "retask")  # modify_tasks edits in place: a copy, sidecars included, kept as src
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


#: An image dataset of the shared dataset's recordings, written by lerobot itself
#: (``LeRobotDataset.create`` with an ``image`` camera): the input ``convert_image_to_video``
#: takes. The shared dataset has only video cameras; its wrist frames are a flat grey
#: ``(60 * episode + frame) % 256`` (its SOURCE.md), so they are written without decoding.
IMAGE = """
import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset

W = Path(ARGS["work"])
src = LeRobotDataset("local/src", root=W / "src")
features = {k: dict(v) for k, v in src.meta.features.items() if k in ("observation.state", "action")}
features["observation.images.wrist"] = {"dtype": "image", "shape": [64, 64, 3], "names": ["height", "width", "channels"]}
image = LeRobotDataset.create("local/image", fps=src.meta.fps, features=features, root=W / "image", use_videos=False)
hf = src.hf_dataset.with_format(None)
eps = np.asarray(hf["episode_index"])
states = np.asarray(hf["observation.state"], dtype=np.float32)
actions = np.asarray(hf["action"], dtype=np.float32)
for ep in range(src.meta.total_episodes):
    task = src.meta.episodes[ep]["tasks"][0]
    for f, i in enumerate(np.flatnonzero(eps == ep)):
        grey = np.full((64, 64, 3), (60 * ep + f) % 256, dtype=np.uint8)
        image.add_frame({"observation.state": states[i], "action": actions[i], "task": task,
                         "observation.images.wrist": grey})
    image.save_episode()
image.finalize()
"""

#: Every other operation of ``lerobot-edit-dataset`` that keeps recordings, through the
#: handlers the command runs (``--operation.type ...``), on copies of the labelled dataset.
OTHER_EDITS = (
    IDENT
    + """
from lerobot.scripts.lerobot_edit_dataset import (
    ConvertImageToVideoConfig, EditDatasetConfig, MergeConfig, RecomputeStatsConfig, ReencodeVideosConfig,
    RemoveFeatureConfig, SplitConfig, handle_convert_image_to_video, handle_merge, handle_recompute_stats,
    handle_reencode_videos, handle_remove_feature, handle_split)

W = Path(ARGS["work"])

def edit(operation, root="src", **paths):
    return EditDatasetConfig(operation=operation, repo_id="local/" + root, root=str(W / root),
                             **{k: str(W / v) for k, v in paths.items()})

handle_split(edit(SplitConfig(splits={"a": [0, 2], "b": [1, 3]}), new_root="split"))
handle_merge(EditDatasetConfig(operation=MergeConfig(repo_ids=["local/b", "local/a"],
                                                     roots=[str(W / "split" / "b"), str(W / "split" / "a")]),
                               new_repo_id="local/merged", new_root=str(W / "merged")))
handle_remove_feature(edit(RemoveFeatureConfig(feature_names=["observation.images.wrist"]), new_root="removed"))
handle_recompute_stats(edit(RecomputeStatsConfig(), new_root="recomputed"))
handle_recompute_stats(edit(RecomputeStatsConfig(overwrite=True), root="inplace", new_root="inplace"))
handle_reencode_videos(edit(ReencodeVideosConfig(), new_root="reencoded"))
handle_convert_image_to_video(edit(ConvertImageToVideoConfig(num_workers=1), root="image",
                                   new_root="image_video"))
names = ["src", "image", "split/a", "split/b", "merged", "removed", "recomputed", "inplace", "reencoded", "image_video"]
emit({name: ident(W / name) for name in names})
"""
)


def _notes(root: Path) -> dict[int, str]:
    return {int(k): r["judge"]["note"] for k, r in el.read_labels(root)["episodes"].items()}


def test_labels_follow_every_other_lerobot_edit(lerobot, tmp_path: Path) -> None:
    """merge, remove_feature, recompute_stats (to a new root, which copies the sidecars, and in
    place), reencode_videos and convert_image_to_video, each by lerobot 0.6.1 itself."""
    src = writable_copy(shared_dataset_path(DATASET), tmp_path / "src")
    lerobot(IMAGE, work=str(tmp_path), timeout=900)
    _label(src, 4)
    _label(tmp_path / "image", 4)
    writable_copy(src, tmp_path / "inplace")
    found = lerobot(OTHER_EDITS, work=str(tmp_path), timeout=900)
    source = found["src"]
    assert found["image"] == source  # the image dataset holds the same recordings

    # merge: the two parts (labels carried from src, then one more outcome version on a's
    # episode 1, src 2) become merged 0-1 (b: src 1, 3) and 2-3 (a: src 0, 2)
    for name in ("a", "b"):
        remap_dataset(tmp_path / "split" / name, source=src, allow_drop=True)
    set_outcome(tmp_path / "split" / "a", 1, outcome="expert_success")
    set_outcome(tmp_path / "split" / "a", 1, outcome="failure")
    merged = tmp_path / "merged"
    assert not any((merged / name).exists() for name in SIDECARS)  # lerobot carries none
    result = remap_dataset(merged, source=[tmp_path / "split" / "b", tmp_path / "split" / "a"])
    _check(merged, found["merged"], source, expected=4)
    assert _notes(merged) == {
        0: "source episode 1",
        1: "source episode 3",
        2: "source episode 0",
        3: "source episode 2",
    }
    assert {e: o["outcome"] for e, o in current_outcomes(merged).items()} == {0: "failure", 1: "failure", 3: "failure"}
    assert [v["outcome"] for v in outcome_history(merged, 3)] == ["failure", "expert_success"]  # history kept
    assert result.counts["outcomes"] == 3
    assert remap_dataset(merged, source=[tmp_path / "split" / "b", tmp_path / "split" / "a"]).already_applied

    # every recording kept, same numbering
    for name in ("removed", "reencoded", "recomputed"):
        remap_dataset(tmp_path / name, source=src)
        _check(tmp_path / name, found[name], source, expected=4)
        assert _notes(tmp_path / name) == {e: f"source episode {e}" for e in range(4)}
        assert sorted(current_outcomes(tmp_path / name)) == [1, 3]
    assert "observation.images.wrist" not in json.loads((tmp_path / "removed/meta/info.json").read_text())["features"]
    _check(tmp_path / "inplace", found["inplace"], source, expected=4)  # in place: nothing to carry
    assert stale_outcomes(tmp_path / "inplace") == {}

    # convert_image_to_video (of every episode: lerobot 0.6.1 cannot read back a subset it converted)
    converted = tmp_path / "image_video"
    remap_dataset(converted, source=tmp_path / "image")
    _check(converted, found["image_video"], source, expected=4)
    assert _notes(converted) == {e: f"source episode {e}" for e in range(4)}
    assert sorted(current_outcomes(converted)) == [1, 3]

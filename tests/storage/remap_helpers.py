"""Build a dataset with every sidecar, and edit its metadata the way LeRobot's
``delete_episodes`` does (survivors renumbered in order, index ranges made contiguous)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from strands_robots import episode_labels as el
from strands_robots.outcomes import set_outcome
from strands_robots.segments import save_segmentation
from tests.synth import make_v3_dataset

LENGTH = 90
SEGMENT = [{"start": 0, "end": LENGTH, "label": "pick up the cube from the table"}]


def labelled_dataset(root: Path, episodes: int = 5) -> Path:
    """``episodes`` episodes of 90 frames; verdicts + grades on all, outcomes and segments on odd ones."""
    make_v3_dataset(root, [LENGTH] * episodes)
    el.record_deterministic_verdicts(root, [{"episode": i, "success": i % 2 == 0} for i in range(episodes)])
    for i in range(episodes):
        el.annotate_episode(root, i, quality="high" if i % 2 == 0 else "low", note=f"episode {i}")
    for i in range(1, episodes, 2):
        set_outcome(root, i, outcome="expert_success" if i % 4 == 1 else "failure")
        save_segmentation(root, i, SEGMENT, annotator=f"a{i}")
    return root


def delete_episodes_meta(root: Path, deleted: list[int]) -> None:
    """Rewrite ``meta/episodes`` and ``info.json`` as ``delete_episodes(deleted)`` leaves them."""
    path = root / "meta/episodes/chunk-000/file-000.parquet"
    table = pq.read_table(path)
    keep = [i for i, e in enumerate(table.column("episode_index").to_pylist()) if e not in set(deleted)]
    table = table.take(pa.array(keep))
    columns = {name: table.column(name) for name in table.column_names}
    columns["episode_index"] = pa.array(list(range(len(keep))), pa.int64())
    lengths = table.column("length").to_pylist()
    starts = [sum(lengths[:i]) for i in range(len(lengths))]
    columns["dataset_from_index"] = pa.array(starts, pa.int64())
    columns["dataset_to_index"] = pa.array([s + n for s, n in zip(starts, lengths, strict=True)], pa.int64())
    pq.write_table(pa.table(columns), path)
    info_path = root / "meta/info.json"
    info = json.loads(info_path.read_text())
    info["total_episodes"] = len(keep)
    info_path.write_text(json.dumps(info, indent=2))


def delete_episodes_files(root: Path, deleted: list[int]) -> None:
    """Rewrite the metadata and the data file as ``delete_episodes(deleted)`` leaves them
    (a single-file v3.0 dataset: survivors renumbered in order, global ``index`` contiguous)."""
    total = json.loads((root / "meta/info.json").read_text())["total_episodes"]
    delete_episodes_meta(root, deleted)
    data = next((root / "data").glob("*/*.parquet"))
    table = pq.read_table(data)
    table = table.filter(pa.array([e not in deleted for e in table.column("episode_index").to_pylist()]))
    renumber = {o: n for n, o in enumerate(e for e in range(total) if e not in deleted)}
    columns = {name: table.column(name) for name in table.column_names}
    columns["episode_index"] = pa.array([renumber[e] for e in table.column("episode_index").to_pylist()], pa.int64())
    columns["index"] = pa.array(range(table.num_rows), pa.int64())
    pq.write_table(pa.table(columns), data)


def sidecar_bytes(root: Path) -> dict[str, bytes]:
    """Every file in ``root`` that is not dataset content (sidecars, journals, intents)."""
    return {
        p.name: p.read_bytes()
        for p in sorted(root.iterdir())
        if p.is_file() and not p.name.endswith(".lock") and not p.name.endswith(".npz")
    }


def state(root: Path) -> dict[str, object]:
    """What each sidecar says, per episode."""
    labels = {int(k): r["judge"]["note"] for k, r in el.read_labels(root)["episodes"].items()}
    from strands_robots.outcomes import current_outcomes
    from strands_robots.segments import list_segmentations

    outcomes = {e: o["outcome"] for e, o in current_outcomes(root).items()}
    segments = {r["episode_index"]: r["annotator"] for r in list_segmentations(root)}
    return {"labels": labels, "outcomes": outcomes, "segments": segments}

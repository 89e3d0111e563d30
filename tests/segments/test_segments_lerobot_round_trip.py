"""LeRobot's subtasks round trip through review, proven with lerobot 0.6.1 itself
(docs/segments.md, "LeRobot's subtasks: import, review, export").

For every shared v3.0 dataset, in a copy: lerobot's own schema functions
(``lerobot.datasets.language``: ``column_for_style``, ``validate_camera_field``,
``language_feature_info``; ``io_utils.write_table_one_row_group_per_episode``, ``load_info``,
``write_info``) write ``language_persistent`` rows as lerobot-annotate does: three subtasks
per episode (one label no template fits) and rows of the ``plan``, ``memory`` and
``task_aug`` styles. We import them as proposals, review some on the segment page's HTTP API
(accept, edit, reject; the rest stay unreviewed), export with ``--out`` and with ``--sarm
sparse`` (and in place, in a second copy), and lerobot loads the results: ``LeRobotDataset`` (or, where the copy has no
videos, the ``DatasetReader`` it loads data files with) and its renderer
(``language_render.render_sample`` with a ``${subtask}`` recipe) gives, for every frame, the
approved segment's label (the original row's for episodes without an approved
segmentation); other styles' rows come back unchanged; SARM's
``load_annotations_from_dataset`` reads the approved subtasks back.

Two lerobot subprocesses serve every dataset (importing torch takes ~30 s here).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from strands_robots.errors import UnsupportedVersionError
from strands_robots.segments import get_segmentation
from strands_robots.segments.lerobot_export import export_lerobot
from strands_robots.segments.lerobot_import import import_lerobot
from strands_robots.segments.proposals import is_approved
from tests.conftest import SHARED_DATASETS, shared_dataset_path, writable_copy
from tests.lerobot_env import lerobot_missing, run_lerobot
from tests.web.conftest import WRITE, client_for

DATASETS = ("lerobot-written-v30-video", "piper-act-v30-multifile", "so101-record-test-v30")
LABELS = ("reach for the cube", "grasp the cube", "carry it over the tray, gently")  # the last fits no template

WRITE_ROWS = """
import pyarrow as pa, pyarrow.parquet as pq
from lerobot.datasets.io_utils import load_info, write_info, write_table_one_row_group_per_episode
from lerobot.datasets.language import (
    LANGUAGE_EVENTS, LANGUAGE_PERSISTENT, column_for_style, language_feature_info, validate_camera_field)

def persistent_row(style, t, content, role="assistant"):
    assert column_for_style(style) == LANGUAGE_PERSISTENT
    validate_camera_field(style, None)
    return {"role": role, "content": content, "style": style, "timestamp": t, "camera": None, "tool_calls": None}

written = {}
for root in ARGS["roots"]:
    root = Path(root)
    written[str(root)] = {}
    for path in sorted(root.glob("data/*/*.parquet")):
        table = pq.read_table(path)
        eps = table.column("episode_index").to_pylist()
        stamps = {}
        for ep, f, t in zip(eps, table.column("frame_index").to_pylist(), table.column("timestamp").to_pylist()):
            stamps.setdefault(ep, {})[f] = t
        rows_of = {}
        for ep, by_frame in stamps.items():
            n = len(by_frame)
            cuts = [0, n // 3, (2 * n) // 3]
            rows = [persistent_row("subtask", by_frame[c], ARGS["labels"][k]) for k, c in enumerate(cuts)]
            rows.append(persistent_row("plan", by_frame[0], "1. reach 2. grasp 3. carry"))
            rows.append(persistent_row("memory", by_frame[cuts[1]], "reached the cube"))
            rows.append(persistent_row("task_aug", by_frame[0], "pick the cube up", role="user"))
            rows.sort(key=lambda r: (r["timestamp"], r["style"] or "", r["role"] or ""))
            rows_of[ep] = rows
            written[str(root)][str(ep)] = {"cuts": cuts, "length": n, "rows": rows}
        # the types pyarrow infers, as lerobot-annotate's writer leaves them
        persistent = pa.array([rows_of[ep] for ep in eps])
        events = pa.array([[] for _ in eps])
        names = [n for n in table.column_names if n not in (LANGUAGE_PERSISTENT, LANGUAGE_EVENTS)]
        out = pa.Table.from_arrays([table.column(n) for n in names] + [persistent, events],
                                   names=names + [LANGUAGE_PERSISTENT, LANGUAGE_EVENTS])
        write_table_one_row_group_per_episode(out, path)
    info = load_info(root)
    info.features = {**info.features, **language_feature_info()}
    write_info(info, root)
emit(written)
"""

READ_BACK = """
from lerobot.configs.recipe import MessageTurn, TrainingRecipe
from lerobot.data_processing.sarm_annotations.subtask_annotation import load_annotations_from_dataset
from lerobot.datasets import LeRobotDataset, LeRobotDatasetMetadata
from lerobot.datasets.dataset_reader import DatasetReader
from lerobot.datasets.language import LANGUAGE_EVENTS, LANGUAGE_PERSISTENT
from lerobot.datasets.language_render import render_sample

recipe = TrainingRecipe(messages=[MessageTurn(role="assistant", content="${subtask}", stream="high_level", target=True)])
out = {}
for root in ARGS["roots"]:
    meta = LeRobotDatasetMetadata("local/round-trip", root=root)
    videos = all((Path(root) / meta.get_video_file_path(ep, key)).exists()
                 for ep in range(meta.total_episodes) for key in meta.video_keys)
    if videos:
        hf = LeRobotDataset("local/round-trip", root=root).hf_dataset
        loader = "LeRobotDataset"
    else:  # LeRobotDataset would download the missing videos: load the data files as it does
        reader = DatasetReader(meta=meta, root=meta.root, episodes=None, tolerance_s=1e-4, video_backend="pyav",
                               delta_timestamps=None, image_transforms=None)
        reader.load_and_activate()
        hf, loader = reader.hf_dataset, "DatasetReader"
    cols = ["episode_index", "frame_index", "timestamp", "index", LANGUAGE_PERSISTENT, LANGUAGE_EVENTS]
    table = hf.select_columns(cols).with_format("arrow")[:]
    columns = {c: table.column(c).to_pylist() for c in cols}
    rendered, others = {}, {}
    for i, ep in enumerate(columns["episode_index"]):
        message = render_sample(recipe=recipe, persistent=columns[LANGUAGE_PERSISTENT][i],
                                events=columns[LANGUAGE_EVENTS][i], t=columns["timestamp"][i],
                                sample_idx=columns["index"][i])
        rendered.setdefault(str(ep), {})[columns["frame_index"][i]] = message["messages"][0]["content"]
        kept = [r for r in columns[LANGUAGE_PERSISTENT][i] if r["style"] != "subtask"]
        others.setdefault(str(ep), set()).add(json.dumps(kept, sort_keys=True))
    out[root] = {
        "loader": loader,
        "rendered": {ep: [v[f] for f in sorted(v)] for ep, v in rendered.items()},
        "others": {ep: sorted(v) for ep, v in others.items()},
    }
for root in ARGS["sarm_roots"]:
    annotations = load_annotations_from_dataset(Path(root), prefix="sparse")
    out[root] = {str(ep): [[s.name, s.timestamps.start, s.timestamps.end] for s in a.subtasks]
                 for ep, a in annotations.items()}
emit(out)
"""


def digest(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def review_on_the_page(root: Path, written: dict) -> dict[int, str]:
    """Accept episode 0's proposal, edit 1's, reject 2's over HTTP; the others stay unreviewed."""
    client = client_for(root)
    waiting = client.get("/api/segment/episodes?filter=unreviewed&limit=5000").json()
    assert waiting["unreviewed"] == len(written) and [r["episode"] for r in waiting["episodes"]] == sorted(
        int(e) for e in written
    )
    episodes = sorted(int(e) for e in written)
    decisions = {}
    first, second, third = episodes[:3]
    answer = client.post(
        f"/api/segment/episodes/{first}/review", json={"decision": "accept", "annotator": "ana"}, headers=WRITE
    )
    assert answer.status_code == 200, answer.text
    decisions[first] = "accepted"
    detail = client.get(f"/api/segment/episodes/{second}").json()
    assert detail["status"] == "proposed"
    segments = [dict(s) for s in detail["record"]["segments"]]
    assert segments[2]["free"] is True and segments[2]["label"] == LABELS[2]
    segments[0]["end"] += 3  # the grasp starts three frames later
    segments[1]["start"] += 3
    segments[2] = {
        "start": segments[2]["start"],
        "end": segments[2]["end"],
        "template_id": "G_PLACE",
        "slots": {"theme": "cube", "destination": "tray"},
        "modifiers": {},
    }
    answer = client.post(
        f"/api/segment/episodes/{second}", json={"segments": segments, "annotator": "ana"}, headers=WRITE
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["record"]["review"]["decision"] == "edited"
    decisions[second] = "edited"
    answer = client.post(
        f"/api/segment/episodes/{third}/review", json={"decision": "reject", "annotator": "ana"}, headers=WRITE
    )
    assert answer.status_code == 200, answer.text
    decisions[third] = "rejected"
    return decisions


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    missing = lerobot_missing()
    if missing:
        pytest.skip(missing)
    for name in DATASETS:
        shared_dataset_path(name)
    base = tmp_path_factory.mktemp("round-trip")
    roots = {name: writable_copy(SHARED_DATASETS / name, base / name) for name in DATASETS}
    written = run_lerobot(WRITE_ROWS, roots=[str(r) for r in roots.values()], labels=list(LABELS))
    result = {}
    for name, root in roots.items():
        report = import_lerobot(root)
        assert report.ok and report.count("imported") == len(written[str(root)])
        decisions = review_on_the_page(root, written[str(root)])
        before = digest(root)
        out = export_lerobot(root, out=base / f"{name}-out")
        sarm_out = export_lerobot(root, out=base / f"{name}-sarm", sarm_prefix="sparse")
        assert digest(root) == before  # the source dataset is never touched by --out
        in_place = writable_copy(root, base / f"{name}-in-place")  # with its labels: exported where it is
        export_lerobot(in_place, in_place=True)
        result[name] = {
            "root": root,
            "written": written[str(root)],
            "decisions": decisions,
            "out": out,
            "sarm": sarm_out,
            "in_place": str(in_place),
        }
    lerobot_view = run_lerobot(
        READ_BACK,
        roots=[r["out"].target for r in result.values()] + [r["in_place"] for r in result.values()],
        sarm_roots=[r["sarm"].target for r in result.values()],
    )
    for r in result.values():
        r["lerobot"] = lerobot_view[r["out"].target]
        r["lerobot_in_place"] = lerobot_view[r["in_place"]]
        r["sarm_read"] = lerobot_view[r["sarm"].target]
    return result


def expected_labels(root: Path, episode: int, plan: dict) -> list[str]:
    """Per frame: the approved segment's label, else the original row's."""
    record = get_segmentation(root, episode)
    if is_approved(record):
        return [s["label"] for s in record["segments"] for _ in range(s["start"], s["end"])]
    cuts = [*plan["cuts"], plan["length"]]
    return [LABELS[k] for k in range(3) for _ in range(cuts[k], cuts[k + 1])]


@pytest.mark.parametrize("name", DATASETS)
def test_every_frame_renders_the_approved_segment(round_trip, name):
    r = round_trip[name]
    frames = differing = 0
    for ep, plan in r["written"].items():
        expected = expected_labels(r["root"], int(ep), plan)
        rendered = r["lerobot"]["rendered"][ep]
        assert len(rendered) == len(expected) == plan["length"]
        frames += len(expected)
        differing += sum(a != b for a, b in zip(rendered, expected, strict=True))
    assert differing == 0 and frames > 0
    assert r["decisions"] == dict(
        zip(sorted(int(e) for e in r["written"])[:3], ("accepted", "edited", "rejected"), strict=True)
    )
    if name == "lerobot-written-v30-video":  # the one copy with its videos: LeRobotDataset itself loads it
        assert r["lerobot"]["loader"] == "LeRobotDataset"
    edited = get_segmentation(r["root"], sorted(int(e) for e in r["written"])[1])
    assert edited["segments"][2]["label"] == "place the cube on the tray"


@pytest.mark.parametrize("name", DATASETS)
def test_in_place_renders_what_out_renders(round_trip, name):
    r = round_trip[name]
    assert r["lerobot_in_place"]["rendered"] == r["lerobot"]["rendered"]
    assert r["lerobot_in_place"]["others"] == r["lerobot"]["others"]


@pytest.mark.parametrize("name", DATASETS)
def test_other_styles_rows_come_back_unchanged(round_trip, name):
    r = round_trip[name]
    for ep, plan in r["written"].items():
        kept = [row for row in plan["rows"] if row["style"] != "subtask"]
        assert r["lerobot"]["others"][ep] == [json.dumps(kept, sort_keys=True)]  # the same on every frame


def test_videos_are_linked_not_re_encoded(round_trip):
    r = round_trip["lerobot-written-v30-video"]
    source = sorted(p for p in (r["root"] / "videos").rglob("*.mp4"))
    assert source and r["out"].videos_linked == len(source)
    for video in source:
        copy = Path(r["out"].target) / video.relative_to(r["root"])
        assert copy.stat().st_ino == video.stat().st_ino
    assert "episode_segments.json" not in {p.name for p in Path(r["out"].target).iterdir()}


@pytest.mark.parametrize("name", DATASETS)
def test_sarm_columns_read_back_by_lerobot(round_trip, name):
    r = round_trip[name]
    fps = json.loads((r["root"] / "meta" / "info.json").read_text())["fps"]
    approved = {ep: get_segmentation(r["root"], int(ep)) for ep in r["written"]}
    approved = {ep: rec for ep, rec in approved.items() if is_approved(rec)}
    assert set(r["sarm_read"]) == set(approved)

    def mmss(frame: int) -> str:
        seconds = int(frame / fps)
        return f"{seconds // 60:02d}:{seconds % 60:02d}"

    for ep, record in approved.items():
        assert r["sarm_read"][ep] == [[s["label"], mmss(s["start"]), mmss(s["end"])] for s in record["segments"]]
    proportions = json.loads((Path(r["sarm"].target) / "meta" / "temporal_proportions_sparse.json").read_text())
    assert abs(sum(proportions.values()) - 1) < 1e-9


def test_v21_datasets_are_refused(shared_dataset, copy_dataset, tmp_path):
    root = copy_dataset(shared_dataset("g1-inspire-v21"))
    with pytest.raises(UnsupportedVersionError, match="v3.0 datasets only"):
        import_lerobot(root)
    with pytest.raises(UnsupportedVersionError, match="v3.0 datasets only"):
        export_lerobot(root, out=tmp_path / "out")

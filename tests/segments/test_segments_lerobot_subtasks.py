"""LeRobot's subtasks on synthetic v3.0 datasets (docs/segments.md, "LeRobot's subtasks: import,
review, export"): import with its report, free labels, review decisions, the agreement worked
example, export out and in place, SARM's columns, the CLI and the page's review endpoint.

The round trip with lerobot itself is tests/segments/test_segments_lerobot_round_trip.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from strands_robots.cli.main import app
from strands_robots.errors import LabelValidationError
from strands_robots.segments import get_segmentation, save_segmentation, segmentation_history
from strands_robots.segments.lerobot_export import DatasetChangedError, export_lerobot
from strands_robots.segments.lerobot_import import import_lerobot
from strands_robots.segments.proposals import review_proposal, review_status, unreviewed_episodes
from strands_robots.segments.store import StaleVersionError
from tests.segments.language_rows import row, write_rows
from tests.synth import make_v3_dataset
from tests.web.conftest import WRITE, client_for

FPS = 30


@pytest.fixture
def annotated(tmp_path):
    """Three episodes (60, 90, 90 frames at 30 fps) with lerobot-annotate-like rows on 0 and 1."""
    root = make_v3_dataset(tmp_path / "ds", [60, 90, 90])
    write_rows(
        root,
        {
            0: [
                row(0.0, "reach for the cube"),
                row(0.5, "1. reach 2. grasp", style="plan"),
                row(1.0, "grasp the cube"),
                row(1.5, "wave happily"),
            ],
            1: [row(2.0, "grasp the cube"), row(0.5, "lift the cube"), row(9.0, "too late"), row(2.0, "again")],
        },
    )
    return root


def persistent(root: Path) -> dict[int, list]:
    table = pq.read_table(root / "data" / "chunk-000" / "file-000.parquet")
    out: dict[int, list] = {}
    episodes, rows_of = table.column("episode_index").to_pylist(), table.column("language_persistent").to_pylist()
    for ep, rows in zip(episodes, rows_of, strict=True):
        out.setdefault(ep, rows)
    return out


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- import -----------------------------------------------------------------------------------------


def test_import_makes_proposals_and_reports_each_fix(annotated):
    report = import_lerobot(annotated).to_dict()
    assert report["counts"] == {"imported": 2, "would_import": 0, "skipped": 0, "failed": 0}
    first, second = report["episodes"]
    assert first["changes"] == [] and first["notes"] == [
        "1 label(s) fit no generic template exactly: kept as free labels"
    ]
    assert [f["kind"] for f in first["findings"]] == ["free_label"]
    assert second["changes"] == [
        "row 1 at 0.500 s comes before the row above it: sorted by timestamp",
        "row 2 ('too late') at 9.000 s is past the episode's end (90 frames): dropped",
        "row 3 at 2.000 s comes before the row above it: sorted by timestamp",
        "rows 'grasp the cube' and 'again' start at the same frame 60 (zero-length): kept 'again'",
        "frames [0, 15) before the first row: folded into the first segment",
    ]
    record = get_segmentation(annotated, 0)
    assert (record["source"], record["annotator"], review_status(record)) == (
        "proposal",
        "lerobot-annotate",
        "proposed",
    )
    assert record["origin"]["tool"] == "lerobot-annotate" and record["origin"]["style"] == "subtask"
    assert [(s["start"], s["end"], s["label"], s["template_id"], s.get("free")) for s in record["segments"]] == [
        (0, 30, "reach for the cube", "G_REACH", None),
        (30, 45, "grasp the cube", "G_GRASP", None),
        (45, 60, "wave happily", None, True),
    ]
    assert [(s["start"], s["end"], s["label"]) for s in get_segmentation(annotated, 1)["segments"]] == [
        (0, 60, "lift the cube"),
        (60, 90, "again"),
    ]
    assert unreviewed_episodes(annotated) == [0, 1]
    # the same rows again: nothing new; another style reads its own rows
    again = import_lerobot(annotated).to_dict()
    assert again["counts"]["skipped"] == 2
    assert "the same proposal is already stored" in again["episodes"][0]["notes"]


def test_a_persons_decision_stands_over_a_new_import(annotated):
    import_lerobot(annotated)
    review_proposal(annotated, 0, reviewer="ana", decision="accept")
    write_rows(annotated, {0: [row(0.0, "idle")], 1: [row(0.0, "idle")]})
    report = import_lerobot(annotated).to_dict()
    assert [e["status"] for e in report["episodes"]] == ["skipped", "imported"]
    assert "a person's decision stands" in report["episodes"][0]["notes"][0]
    assert get_segmentation(annotated, 0)["annotator"] == "ana"
    assert [s["label"] for s in get_segmentation(annotated, 1)["segments"]] == ["idle"]
    assert len(segmentation_history(annotated, 1)) == 2  # the replaced proposal is kept


def test_import_of_a_dataset_without_rows_imports_nothing(tmp_path):
    root = make_v3_dataset(tmp_path / "plain", [30])
    report = import_lerobot(root)
    assert report.episodes == [] and not (root / "episode_segments.json").exists()


def test_a_style_that_is_not_persistent_is_refused(annotated):
    with pytest.raises(LabelValidationError, match="not a persistent language style"):
        import_lerobot(annotated, style="vqa")


# -- review -----------------------------------------------------------------------------------------


def test_review_records_who_decided_and_what_was_proposed(annotated):
    import_lerobot(annotated)
    proposed = get_segmentation(annotated, 0)
    accepted = review_proposal(annotated, 0, reviewer="ana", decision="accept").record
    assert (accepted["annotator"], accepted["source"], accepted["version"]) == ("ana", "annotation", 2)
    assert accepted["segments"] == proposed["segments"]  # the free label stays free
    review = accepted["review"]
    assert (review["decision"], review["by"]) == ("accepted", "ana")
    assert review["proposal"]["annotator"] == "lerobot-annotate" and review["proposal"]["version"] == 1
    assert review["proposal"]["segments"] == proposed["segments"]
    assert review["proposal"]["origin"] == proposed["origin"]
    with pytest.raises(LabelValidationError, match="not a proposal awaiting review"):
        review_proposal(annotated, 0, reviewer="ben", decision="reject")

    # an edit that changes nothing is an acceptance; a stale version is refused, nothing written
    same = [
        {"start": s["start"], "end": s["end"], "label": s["label"], "free": s.get("free", False)}
        for s in get_segmentation(annotated, 1)["segments"]
    ]
    before = (annotated / "episode_segments.json").read_bytes()
    with pytest.raises(StaleVersionError):
        review_proposal(annotated, 1, reviewer="ana", decision="edit", segments=same, version=7)
    assert (annotated / "episode_segments.json").read_bytes() == before
    assert (
        review_proposal(annotated, 1, reviewer="ana", decision="edit", segments=same).record["review"]["decision"]
        == "accepted"
    )


def test_reject_keeps_the_proposal_out_of_the_export(annotated, tmp_path):
    import_lerobot(annotated)
    assert review_proposal(annotated, 0, reviewer="ana", decision="reject").record["review"]["decision"] == "rejected"
    with pytest.raises(LabelValidationError, match="no approved segmentation"):
        export_lerobot(annotated, out=tmp_path / "out")
    with pytest.raises(LabelValidationError, match="decision="):
        review_proposal(annotated, 1, reviewer="ana", decision="maybe")


def test_the_page_reviews_proposals_over_http(annotated):
    import_lerobot(annotated)
    client = client_for(annotated)
    listing = client.get("/api/segment/episodes?filter=unreviewed").json()
    assert (listing["unreviewed"], [r["episode"] for r in listing["episodes"]]) == (2, [0, 1])
    assert listing["episodes"][0]["saved"]["status"] == "proposed"
    detail = client.get("/api/segment/episodes/0").json()
    assert detail["status"] == "proposed" and detail["record"]["segments"][2]["free"] is True
    assert detail["cohort"] == "generic"
    assert client.get("/api/segment/episodes/0?cohort=robocasa365").json()["cohort"] == "generic"
    body = {"segments": detail["record"]["segments"], "cohort": detail["cohort"]}
    check = client.post("/api/segment/episodes/0/check", json=body, headers=WRITE)
    assert check.json()["segments"][2] == {"label": "wave happily", "error": None, "template_id": None, "free": True}
    assert check.json()["blocking"] is False

    bad = client.post("/api/segment/episodes/0/review", json={"decision": "maybe"}, headers=WRITE)
    assert bad.status_code == 400 and "accept or reject" in bad.json()["error"]
    cross = client.post("/api/segment/episodes/0/review", json={"decision": "accept"}, headers={"origin": "http://x"})
    assert cross.status_code == 403 and review_status(get_segmentation(annotated, 0)) == "proposed"
    done = client.post("/api/segment/episodes/0/review", json={"decision": "accept", "annotator": "ana"}, headers=WRITE)
    assert done.status_code == 200 and done.json()["next_unreviewed"] == 1
    assert done.json()["record"]["review"]["decision"] == "accepted"
    again = client.post("/api/segment/episodes/0/review", json={"decision": "reject"}, headers=WRITE)
    assert again.status_code == 409 and "not a proposal awaiting review" in again.json()["error"]
    assert client.get("/api/segment/episodes?filter=unreviewed").json()["unreviewed"] == 1
    assert client.get("/api/segment/episodes?filter=other").status_code == 400


# -- agreement ----------------------------------------------------------------------------------------


def test_the_agreement_command_prints_the_worked_example(toy_dataset):
    def spans(*pairs):
        cuts, labels = pairs[::2], pairs[1::2]
        return [{"start": a, "end": b, "label": lab} for a, b, lab in zip(cuts, [*cuts[1:], 90], labels, strict=True)]

    reach, grasp, lift = "reach for the bottle", "grasp the bottle", "lift the bottle"
    proposals = {
        0: spans(0, reach, 20, grasp, 70, lift),
        1: spans(0, reach, 40, grasp, 65, lift),
        2: [{"start": 0, "end": 90, "label": "wave at the camera", "free": True}],
    }
    for ep, segments in proposals.items():
        save_segmentation(toy_dataset, ep, segments, annotator="lerobot-annotate", source="proposal", cohort="generic")
    review_proposal(toy_dataset, 0, reviewer="ana", decision="accept")
    review_proposal(toy_dataset, 1, reviewer="ana", decision="edit", segments=spans(0, reach, 45, grasp, 70, lift))
    review_proposal(toy_dataset, 2, reviewer="ana", decision="reject")
    args = ["segments", "agreement", str(toy_dataset), "--proposed", "lerobot-annotate", "--reviewed", "ana"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "3 episodes reviewed by ana (180 frames measured); accepted unchanged 33.3%",
        "proposal  boundary error mean 2.5 frames, p90 5; label accuracy 94.4%",
        "baseline  boundary error mean 11.25 frames, p90 15; label accuracy 75.0% (evenly spaced segments)",
    ]
    documented = (Path(__file__).resolve().parents[2] / "docs" / "segments.md").read_text()
    assert "\n".join(result.output.splitlines()) in documented
    report = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)
    assert [e["boundary_errors"] for e in report["per_episode"][:2]] == [[0, 0, 0, 0], [5, 5, 5, 5]]
    assert report["per_episode"][2] == {"episode_index": 2, "decision": "rejected"}


# -- export -------------------------------------------------------------------------------------------


def test_export_out_writes_the_approved_rows_and_keeps_the_rest(annotated, tmp_path):
    import_lerobot(annotated)
    review_proposal(
        annotated,
        0,
        reviewer="ana",
        decision="edit",
        segments=[
            {"start": 0, "end": 20, "label": "reach for the cube"},
            {"start": 20, "end": 60, "label": "grasp the cube"},
        ],
    )
    before = {p: sha(p) for p in annotated.rglob("*") if p.is_file()}
    report = export_lerobot(annotated, out=tmp_path / "out").to_dict()
    assert {p: sha(p) for p in annotated.rglob("*") if p.is_file()} == before
    # the rows' file gets both language columns, info.json the feature it lacked (language_events)
    assert report["episodes"] == [0] and report["rewritten"] == ["data/chunk-000/file-000.parquet", "meta/info.json"]
    out = persistent(tmp_path / "out")
    original = persistent(annotated)
    assert out[0] == [
        row(0.0, "reach for the cube") | {"tool_calls": None},
        row(0.5, "1. reach 2. grasp", style="plan") | {"tool_calls": None},
        {**row(20 / FPS, "grasp the cube"), "timestamp": pytest.approx(20 / FPS, abs=1e-6)},
    ]
    assert out[1] == original[1] and out[2] == original[2] == []  # not approved: as it was
    files = pq.ParquetFile(tmp_path / "out" / "data" / "chunk-000" / "file-000.parquet")
    assert files.metadata.num_row_groups == 3  # one per episode
    assert not (tmp_path / "out" / "episode_segments.json").exists()
    with pytest.raises(LabelValidationError, match="not an empty directory"):
        export_lerobot(annotated, out=tmp_path / "out")
    with pytest.raises(LabelValidationError, match="exactly one of"):
        export_lerobot(annotated)


def test_export_in_place_refuses_rows_changed_since_the_import(annotated):
    import_lerobot(annotated)
    review_proposal(annotated, 0, reviewer="ana", decision="accept")
    data = annotated / "data" / "chunk-000" / "file-000.parquet"
    report = export_lerobot(annotated, in_place=True).to_dict()
    assert report["mode"] == "in-place"
    assert report["rewritten"] == ["data/chunk-000/file-000.parquet", "meta/info.json"]
    after = pq.read_table(data)
    again = export_lerobot(annotated, in_place=True)  # the rows it wrote are its own: again is the same
    assert again.rewritten == ["data/chunk-000/file-000.parquet"] and pq.read_table(data).equals(after)
    write_rows(annotated, {0: [row(0.0, "someone re-ran lerobot-annotate")]})
    changed = sha(data)
    with pytest.raises(DatasetChangedError, match="changed since the labels were read"):
        export_lerobot(annotated, in_place=True)
    assert sha(data) == changed


def test_export_adds_language_columns_and_features_to_a_plain_dataset(tmp_path):
    root = make_v3_dataset(tmp_path / "plain", [30, 30])
    save_segmentation(
        root,
        1,
        [{"start": 0, "end": 10, "label": "reach"}, {"start": 10, "end": 30, "label": "idle"}],
        annotator="ana",
        cohort="generic",
    )
    export_lerobot(root, out=tmp_path / "out")
    info = json.loads((tmp_path / "out" / "meta" / "info.json").read_text())
    assert info["features"]["language_persistent"]["dtype"] == "language"
    assert info["features"]["language_events"]["dtype"] == "language"
    table = pq.read_table(tmp_path / "out" / "data" / "chunk-000" / "file-000.parquet")
    episodes, lists = table.column("episode_index").to_pylist(), table.column("language_persistent").to_pylist()
    rows = dict(zip(episodes, lists, strict=True))
    assert rows[0] == [] and [r["content"] for r in rows[1]] == ["reach", "idle"]
    assert set(table.column("language_events").to_pylist()[0]) == set()


# -- SARM -----------------------------------------------------------------------------------------------


def write_sarm(root: Path, spans_of: dict[int, list[tuple[str, int, int]]], prefix: str = "sparse") -> None:
    path = next((root / "meta" / "episodes").rglob("*.parquet"))
    table = pq.read_table(path)
    eps = table.column("episode_index").to_pylist()
    names = [[s[0] for s in spans_of[e]] if e in spans_of else None for e in eps]
    starts = [[s[1] for s in spans_of[e]] if e in spans_of else None for e in eps]
    ends = [[s[2] for s in spans_of[e]] if e in spans_of else None for e in eps]
    table = table.append_column(f"{prefix}_subtask_names", pa.array(names, pa.list_(pa.string())))
    table = table.append_column(f"{prefix}_subtask_start_frames", pa.array(starts, pa.list_(pa.int64())))
    table = table.append_column(f"{prefix}_subtask_end_frames", pa.array(ends, pa.list_(pa.int64())))
    pq.write_table(table, path)


def test_sarm_columns_import_and_export(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [60, 90])
    write_sarm(root, {0: [("reach", 0, 25), ("grasp", 20, 50)], 1: [("reach", 5, 40), ("grasp", 45, 90)]})
    report = import_lerobot(root, sarm_prefix="sparse").to_dict()
    assert report["episodes"][0]["changes"] == [
        "spans 'reach' and 'grasp' overlap at frames [20, 25): 'reach' now ends at 20",
        "frames [50, 60) after the last span: it runs to the episode's end",
    ]
    assert report["episodes"][1]["changes"] == [
        "frames [40, 45) between spans: 'reach' runs on",
        "frames [0, 5) before the first span: folded into it",
    ]
    record = get_segmentation(root, 0)
    assert record["annotator"] == "sarm-sparse" and record["origin"]["columns"] == "sparse"
    for ep in (0, 1):
        review_proposal(root, ep, reviewer="ana", decision="accept")
    export_lerobot(root, out=tmp_path / "out", sarm_prefix="sparse")
    table = pq.read_table(next((tmp_path / "out" / "meta" / "episodes").rglob("*.parquet"))).to_pydict()
    assert table["sparse_subtask_names"] == [["reach", "grasp"], ["reach", "grasp"]]
    assert table["sparse_subtask_start_frames"] == [[0, 20], [0, 45]]
    assert table["sparse_subtask_end_frames"] == [[20, 60], [45, 90]]
    assert table["sparse_subtask_start_times"] == [[0.0, 20 / FPS], [0.0, 45 / FPS]]
    proportions = json.loads((tmp_path / "out" / "meta" / "temporal_proportions_sparse.json").read_text())
    assert proportions == pytest.approx({"reach": (20 / 60 + 45 / 90) / 2, "grasp": (40 / 60 + 45 / 90) / 2})


# -- CLI ------------------------------------------------------------------------------------------------


def test_the_cli_imports_and_exports(annotated, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["segments", "import-lerobot", str(annotated)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "episode 1: imported (2 segments)" in result.output
    assert "changed: frames [0, 15) before the first row: folded into the first segment" in result.output
    result = runner.invoke(app, ["segments", "export-lerobot", str(annotated), "--out", str(tmp_path / "o")])
    assert isinstance(result.exception, LabelValidationError) and "no approved segmentation" in str(result.exception)
    review_proposal(annotated, 1, reviewer="ana", decision="accept")
    result = runner.invoke(app, ["segments", "export-lerobot", str(annotated), "--in-place", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["episodes"] == [1]
    result = runner.invoke(app, ["segments", "import-lerobot", str(annotated), "--sarm", "medium"])
    assert isinstance(result.exception, LabelValidationError) and "use sparse or dense" in str(result.exception)


def test_sarm_in_place_refuses_columns_changed_since_the_import(tmp_path):
    root = make_v3_dataset(tmp_path / "ds", [60])
    write_sarm(root, {0: [("reach", 0, 30), ("grasp", 30, 60)]})
    import_lerobot(root, sarm_prefix="sparse")
    review_proposal(root, 0, reviewer="ana", decision="accept")
    path = next((root / "meta" / "episodes").rglob("*.parquet"))
    assert export_lerobot(root, in_place=True, sarm_prefix="sparse").episodes == [0]
    export_lerobot(root, in_place=True, sarm_prefix="sparse")  # its own columns: again is fine
    table = pq.read_table(path)
    names = table.column_names.index("sparse_subtask_names")
    table = table.set_column(names, "sparse_subtask_names", pa.array([["reach", "lift"]], pa.list_(pa.string())))
    pq.write_table(table, path)
    changed = sha(path)
    with pytest.raises(DatasetChangedError, match="sparse SARM columns are not the ones imported"):
        export_lerobot(root, in_place=True, sarm_prefix="sparse")
    assert sha(path) == changed

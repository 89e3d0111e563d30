"""The segment page shows a cohort's reference examples: three for Allex, two for the others
(docs/segments.md, "Label pool, reference examples, prefill")."""

from __future__ import annotations

from strands_robots.segments import save_segmentation
from tests.segments.conftest import build_dataset
from tests.web.conftest import client_for

TASK = "bring the parcel over, orient barcode up, then place it on the conveyor"
ALLEX = [
    {"start": 0, "end": 12, "label": "Bring Object"},
    {"start": 12, "end": 20, "label": "Rotate PolyBag"},
    {"start": 20, "end": 30, "label": "Pass Object"},
]


def test_episode_detail_lists_three_allex_references_and_two_robocasa(tmp_path):
    root = build_dataset(tmp_path / "ds", {e: (30, TASK) for e in (2, 4, 5, 7, 8, 9)})
    for e in (2, 4, 5, 7):
        save_segmentation(root, e, ALLEX, annotator="ref", reference=True, cohort="allex")
    client = client_for(root)
    detail = client.get("/api/segment/episodes/9", params={"cohort": "allex"}).json()
    assert [r["episode_index"] for r in detail["references"]] == [2, 4, 5]
    assert [r["episode_index"] for r in client.get("/api/segment/episodes/4").json()["references"]] == [2, 5, 7]
    # the RoboCasa365 references of a task: two
    pick = [{"start": 0, "end": 15, "label": "pick up the parcel from the cart"},
            {"start": 15, "end": 30, "label": "place the parcel on the conveyor"}]  # fmt: skip
    for e in (8, 9):
        save_segmentation(root, e, pick, annotator="ref", reference=True)
    save_segmentation(root, 2, pick, annotator="ref", reference=True)
    robocasa = client.get("/api/segment/episodes/5", params={"cohort": "robocasa365"}).json()["references"]
    assert [r["episode_index"] for r in robocasa] == [2, 8]

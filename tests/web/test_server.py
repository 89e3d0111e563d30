"""The server's JSON, image and write endpoints through Starlette's TestClient (docs/review.md, "HTTP endpoints")."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from strands_robots import episode_labels as el
from strands_robots.dataset import open_dataset
from tests.web.conftest import BASE, TOKEN, WRITE, client_for

CAMERA = "observation.images.cam_high"


@pytest.fixture
def client(labelled_toy):
    return client_for(labelled_toy)


def shown(client, episode: int) -> dict:
    """The stamps of the blocks the page shows for ``episode`` (what it sends back with a review)."""
    return client.get(f"/api/episodes/{episode}").json()["stamps"]


def sidecar(root: Path) -> bytes:
    return (root / "episode_labels.json").read_bytes()


def test_queue_lists_open_disputes_first(client):
    queue = client.get("/api/queue").json()
    assert [r["episode"] for r in queue["disputes"]] == [1, 2]
    assert [r["episode"] for r in queue["episodes"]] == [0, 1, 2]
    assert queue["counts"] == {"open": 2, "resolved": 0, "reviewed": 0, "labelled": 3}
    assert queue["disputes"][0] | {"labeled_at": None} == {
        "episode": 1,
        "length": 90,
        "verdict": "success",
        "effective_verdict": "success",
        "overruled": False,
        "opinion": "failure",
        "judge_quality": "medium",
        "judge_failure_mode": "near_miss",
        "quality": "medium",
        "failure_mode": "near_miss",
        "dispute": "open",
        "review": None,
        "review_outdated": False,
        "labeled_at": None,
        "reviewed_at": None,
    }


@pytest.mark.parametrize(
    ("query", "episodes"),
    [
        ("quality=low", [2]),
        ("quality=high", [0]),
        ("verdict=failure", [2]),
        ("verdict=success", [0, 1]),
        ("failure_mode=none", [0]),
        ("failure_mode=near_miss", [1]),
        ("dispute=none", [0]),
        ("dispute=open&verdict=success", [1]),
        ("offset=1&limit=1", [1]),
    ],
)
def test_queue_filters(client, query, episodes):
    queue = client.get(f"/api/queue?{query}").json()
    assert [r["episode"] for r in queue["episodes"]] == episodes
    assert [r["episode"] for r in queue["disputes"]] == [1, 2]  # the dispute queue is never filtered


def test_queue_rejects_unknown_filter_values(client):
    response = client.get("/api/queue?quality=great")
    assert response.status_code == 400
    assert response.json()["error"] == "quality='great' is not one of low, medium, high, none."
    assert client.get("/api/queue?offset=-1").status_code == 400


def test_episode_detail(client):
    detail = client.get("/api/episodes/2").json()
    assert detail["length"] == 90 and detail["fps"] == 30
    assert detail["tasks"] == ["Pick up the yellow bottle on the table."]
    assert detail["cameras"] == [{"index": 0, "key": CAMERA, "label": "cam_high", "available": True, "problem": ""}]
    assert detail["sampled_frames"] == [0, 30, 59, 89]
    assert detail["deterministic"]["success"] is False
    assert detail["judge"]["success_opinion"] is True and detail["judge"]["note"] == "the bottle is lifted"
    assert detail["review"] is None and detail["review_history"] == []


def test_state_endpoint_matches_the_dataset(client, labelled_toy):
    payload = client.get("/api/episodes/1/state").json()
    ds = open_dataset(labelled_toy)
    frames = ds.read_frames(1, ["observation.state", "action", "timestamp"])
    # observation.state's 26 channels, then action's 26 beside them
    assert payload["names"][:26] == list(ds.state_names) and len(payload["channels"]) == 52
    assert payload["sources"] == ["observation.state"] * 26 + ["action"] * 26
    assert np.allclose(np.array(payload["channels"][:26]).T, frames["observation.state"], atol=1e-6)
    assert np.allclose(np.array(payload["channels"][26:]).T, frames["action"], atol=1e-6)
    # groups by name prefix cover every channel once, per feature
    groups = payload["groups"]
    assert sorted(c for g in groups for c in g["channels"]) == list(range(52))
    assert groups[0] == {
        "label": "state · kLeft Shoulder/Elbow/Wrist",
        "source": "observation.state",
        "channels": [0, 1, 2, 3, 4, 5, 6],
    }
    assert groups[4]["label"] == "action · kLeft Shoulder/Elbow/Wrist" and groups[4]["channels"][0] == 26
    assert np.allclose(payload["timestamps"], frames["timestamp"], atol=1e-6)
    assert payload["timestamps"][-1] == pytest.approx(89 / 30, abs=1e-4)
    assert payload["sampled_frames"] == [0, 30, 59, 89] and payload["has_state"] is True
    assert payload["keys"] == {"state": "observation.state", "action": "action"}  # what the pages compare with


def test_frames_are_the_episode_own_frames(client, labelled_toy):
    ds = open_dataset(labelled_toy)
    cache = client.app.state.ctx.frames
    for frame in (0, 45, 89):  # the whole episode is reachable
        response = client.get(f"/api/episodes/2/frames/0/{frame}.jpg")
        assert response.status_code == 200 and response.headers["content-type"] == "image/jpeg"
        served = np.asarray(Image.open(io.BytesIO(response.content)).convert("RGB"), dtype=np.float64)
        expected = ds.decode_frames(2, CAMERA, [frame], max_side=480)[0].astype(np.float64)
        assert served.shape == expected.shape == (360, 480, 3)
        assert np.abs(served - expected).mean() < 3.0  # JPEG loss only
        # episode 2 is the third part of the shared mp4: its frames differ from episode 0's
        other = ds.decode_frames(0, CAMERA, [frame], max_side=480)[0].astype(np.float64)
        assert np.abs(served - other).mean() > 10.0
    blocks = cache.decoded_blocks
    client.get("/api/episodes/2/frames/0/46.jpg")  # same block of 16 as frame 45: from the cache
    assert cache.decoded_blocks == blocks


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/api/episodes/2/frames/0/90.jpg", "outside episode 2"),
        ("/api/episodes/3/frames/0/0.jpg", "episode 3 is not in this dataset"),
        ("/api/episodes/3", "episode 3 is not in this dataset"),
        ("/api/episodes/99999999999999999999/state", "not in this dataset"),
        ("/api/episodes/2/frames/1/0.jpg", "camera 1 does not exist"),
        ("/plots/secret.png", "no plot named"),
        ("/plots/episodes/9.png", "not in this dataset"),
    ],
)
def test_not_found_names_the_problem(client, path, message):
    response = client.get(path)
    assert response.status_code == 404
    assert message in response.json()["error"]


@pytest.mark.parametrize(
    "path",
    [
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2f..%2fpyproject.toml",
        "/api/episodes/-1",
        "/api/episodes/2/frames/0/..%2f..%2fmeta%2finfo.json",
        "/api/episodes/2/frames/observation.images.cam_high/0.jpg",
        "/episode_labels.json",
    ],
)
def test_no_path_reaches_files(client, path):
    assert client.get(path).status_code == 404


def test_pages_and_security_headers(client):
    page = client.get("/review")
    assert page.status_code == 200
    assert f'<meta name="labels-token" content="{TOKEN}">' in page.text
    assert "This dataset has no observation.state.</p>" in page.text  # the key comes from dataset/keys.py
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
    assert client.get("/", follow_redirects=False).headers["location"] == "/review"
    assert client.get("/static/review.js").status_code == 200
    report = client.get("/report")
    assert report.status_code == 200 and "/plots/judge_vs_human.png" in report.text
    png = client.get("/plots/quality_by_verdict.png")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert client.get("/plots/episodes/1.png").content.startswith(b"\x89PNG")


def test_dns_rebinding_reads_are_refused(client):
    response = client.get("/api/queue", headers={"host": "evil.example:8765"})
    assert response.status_code == 403 and "is not this server" in response.json()["error"]
    assert client.get("/api/queue", headers={"host": "localhost:8765"}).status_code == 200


def test_review_is_written_through_the_library(client, labelled_toy):
    before = el.read_labels(labelled_toy)["episodes"]["1"]["deterministic"]
    response = client.post(
        "/api/episodes/1/review",
        json={
            "decision": "uphold_verdict",
            "note": "fingers close in time",
            "reviewer": "",
            "quality": "high",
            **shown(client, 1),
        },
        headers=WRITE,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["next_dispute"] == 2
    assert body["row"]["dispute"] == "resolved" and body["row"]["quality"] == "high"
    on_disk = json.loads(sidecar(labelled_toy))["episodes"]["1"]
    assert on_disk["review"]["decision"] == "uphold_verdict"
    assert on_disk["review"]["reviewer"] == "tester"  # the server's default reviewer
    assert on_disk["review"]["note"] == "fingers close in time"
    assert on_disk["deterministic"] == before
    response = client.post(
        "/api/episodes/2/review", json={"decision": "overrule_verdict", **shown(client, 2)}, headers=WRITE
    )
    assert response.json()["next_dispute"] is None
    assert client.get("/api/queue").json()["counts"] == {"open": 0, "resolved": 2, "reviewed": 2, "labelled": 3}
    assert el.filter_episodes(labelled_toy, min_quality="low") == [0, 1, 2]  # 2 is overruled to success


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({"origin": BASE}, "token"),
        ({"origin": BASE, "x-labels-token": "guess"}, "token"),
        ({"origin": "http://evil.example", "x-labels-token": TOKEN}, "cross-origin"),
        ({"x-labels-token": TOKEN}, "cross-origin"),
        ({"origin": BASE, "x-labels-token": TOKEN, "sec-fetch-site": "cross-site"}, "cross-site"),
        ({"origin": BASE, "x-labels-token": TOKEN, "host": "evil.example:8765"}, "is not this server"),
        ({"origin": BASE, "x-labels-token": TOKEN, "content-type": "text/plain"}, "application/json"),
    ],
)
def test_refused_writes_change_nothing(client, labelled_toy, headers, message):
    before = sidecar(labelled_toy)
    kwargs = {"content": json.dumps({"decision": "overrule_verdict"}), "headers": {"content-type": "application/json"}}
    kwargs["headers"] |= headers
    response = client.post("/api/episodes/1/review", **kwargs)
    assert response.status_code == 403
    assert message in response.json()["error"]
    assert sidecar(labelled_toy) == before


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"decision": "uphold_verdict"}, 422, "use decision='grade_only'"),  # episode 0 is not disputed
        ({"decision": "approve"}, 422, "decision must be one of"),
        ({"decision": "grade_only", "quality": "great"}, 422, "quality"),
        ({"decision": "grade_only", "episode": 1}, 400, "unknown keys ['episode']"),
        ({"decision": "grade_only", "note": 5}, 400, "note must be a string"),
        (["grade_only"], 400, "JSON object"),
    ],
)
def test_invalid_reviews_are_refused(client, labelled_toy, body, status, message):
    before = sidecar(labelled_toy)
    if isinstance(body, dict):
        body = {**body, **shown(client, 0)}
    response = client.post("/api/episodes/0/review", json=body, headers=WRITE)
    assert response.status_code == status
    assert message in response.json()["error"]
    assert sidecar(labelled_toy) == before


def test_malformed_and_oversized_bodies(client, labelled_toy):
    before = sidecar(labelled_toy)
    headers = WRITE | {"content-type": "application/json"}
    assert client.post("/api/episodes/0/review", content=b"{not json", headers=headers).status_code == 400
    big = json.dumps({"decision": "grade_only", "note": "x" * 70_000})
    assert client.post("/api/episodes/0/review", content=big, headers=headers).status_code == 413
    assert client.post("/api/episodes/7/review", json={"decision": "grade_only"}, headers=WRITE).status_code == 404
    assert sidecar(labelled_toy) == before


def test_grade_only_on_any_episode(client, labelled_toy):
    response = client.post(
        "/api/episodes/0/review",
        json={
            "decision": "grade_only",
            "quality": "low",
            "failure_mode": "jerky_motion",
            "reviewer": "ann",
            **shown(client, 0),
        },
        headers=WRITE,
    )
    assert response.status_code == 200
    assert response.json()["next_dispute"] == 1
    row = client.get("/api/queue?quality=low&failure_mode=jerky_motion").json()["episodes"]
    assert [r["episode"] for r in row] == [0] and row[0]["review"] == "grade_only"
    assert el.measure_agreement(labelled_toy)["quality_confusion"]["low"]["high"] == 1


def test_dataset_without_videos(labelled_no_video):
    client = client_for(labelled_no_video)
    detail = client.get("/api/episodes/1").json()
    assert [c["available"] for c in detail["cameras"]] == [False, False]
    assert detail["cameras"][0]["problem"].startswith("video missing: videos/observation.images.front/")
    response = client.get("/api/episodes/1/frames/0/0.jpg")
    assert response.status_code == 404 and "is missing" in response.json()["error"]
    state = client.get("/api/episodes/1/state").json()
    assert state["has_state"] and len(state["channels"][0]) == 374
    assert state["sources"] == ["observation.state"] * 6 + ["action"] * 6  # action beside state
    assert client.get("/review").status_code == 200
    assert [r["episode"] for r in client.get("/api/queue").json()["disputes"]] == [1]


def test_dataset_without_labels(toy_dataset):
    client = client_for(toy_dataset)
    queue = client.get("/api/queue").json()
    assert queue["has_labels"] is False and queue["disputes"] == []
    assert [r["verdict"] for r in queue["episodes"]] == [None, None, None]
    assert "No <code>episode_labels.json</code> yet" in client.get("/review").text
    body = {"decision": "grade_only", "verdict_seen": None, "judge_seen": None}
    response = client.post("/api/episodes/0/review", json=body, headers=WRITE)
    assert response.status_code == 404 and "record verdicts first" in response.json()["error"]
    assert not (toy_dataset / "episode_labels.json").exists()
    assert client.get("/plots/judge_vs_human.png").status_code == 200


def test_labels_kept_in_another_directory(toy_dataset, tmp_path):
    labels = tmp_path / "labels"
    labels.mkdir()
    el.record_deterministic_verdicts(toy_dataset, [{"episode": 0, "success": True}], labels_dir=labels)
    el.annotate_episode(toy_dataset, 0, quality="medium", success_opinion=False, model="j", labels_dir=labels)
    client = client_for(toy_dataset, labels_dir=labels)
    assert [r["episode"] for r in client.get("/api/queue").json()["disputes"]] == [0]
    response = client.post(
        "/api/episodes/0/review", json={"decision": "uphold_verdict", **shown(client, 0)}, headers=WRITE
    )
    assert response.status_code == 200
    assert json.loads((labels / "episode_labels.json").read_text())["episodes"]["0"]["review"]["reviewer"] == "tester"
    assert not (toy_dataset / "episode_labels.json").exists()


@pytest.mark.parametrize("path", ["/api/episodes/abc", "/api/episodes/-1", "/api/nothing"])
def test_api_404s_are_json(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    assert path in response.json()["error"]


def test_a_review_of_blocks_that_changed_since_the_page_loaded_is_refused(client, labelled_toy):
    """The page sends the stamps of what it showed; a re-judge in between makes them stale (409)."""
    stamps = shown(client, 1)
    assert set(stamps) == {"verdict_seen", "judge_seen"} and all(len(v) == 16 for v in stamps.values())
    el.annotate_episode(labelled_toy, 1, quality="low", success_opinion=False, model="rejudge", keep_history=True)
    before = sidecar(labelled_toy)
    response = client.post("/api/episodes/1/review", json={"decision": "uphold_verdict", **stamps}, headers=WRITE)
    assert response.status_code == 409
    assert "judge label changed since the page showed it" in response.json()["error"]
    assert sidecar(labelled_toy) == before
    # the page reloads the episode and decides again with the fresh stamps
    fresh = shown(client, 1)
    assert fresh["verdict_seen"] == stamps["verdict_seen"] and fresh["judge_seen"] != stamps["judge_seen"]
    response = client.post("/api/episodes/1/review", json={"decision": "uphold_verdict", **fresh}, headers=WRITE)
    assert response.status_code == 200, response.text
    assert el.read_labels(labelled_toy)["episodes"]["1"]["review"]["judge_seen"] == fresh["judge_seen"]


@pytest.mark.parametrize(
    ("stamps", "message"),
    [
        ({}, "has no verdict_seen or judge_seen"),
        ({"judge_seen": None}, "has no verdict_seen"),
        ({"verdict_seen": "xyz", "judge_seen": None}, "16 hex digits"),
    ],
)
def test_a_review_without_valid_stamps_is_refused(client, labelled_toy, stamps, message):
    before = sidecar(labelled_toy)
    response = client.post("/api/episodes/0/review", json={"decision": "grade_only", **stamps}, headers=WRITE)
    assert response.status_code in (400, 422) and message in response.json()["error"]
    assert sidecar(labelled_toy) == before


def test_a_server_whose_app_cannot_be_built_releases_its_socket(tmp_path):
    """BackgroundServer binds before it builds the app: a refused root leaves no socket open."""
    from strands_robots.web.server import BackgroundServer

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    server = BackgroundServer(tmp_path)
    before = open_fds()
    with pytest.raises(Exception, match="dataset"):
        server.start()
    assert open_fds() == before  # while the server object lives on

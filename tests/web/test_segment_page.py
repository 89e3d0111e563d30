"""The segment annotation page (docs/segments.md, "The annotation page: `strands-labels segments page ROOT`"):
endpoints, security, CLI and a real browser.

Server tests go through Starlette's TestClient against a copy of ``examples/toy_dataset``
(3 episodes x 90 frames, one camera, task "Pick up the yellow bottle on the table.") and
the base-velocity dataset of ``tests/segments/conftest.py``. The browser test drives
Debian's ``/usr/bin/chromium`` headless with Playwright (the ``page`` fixture of
``conftest.py``): boundaries by keyboard, templates from the dropdowns, ``S``, then the
sidecar on disk.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scripts._browser import IMAGES_LOADED
from strands_robots.segments import get_segmentation, save_segmentation
from tests.web.conftest import BASE, TOKEN, WRITE, cli_server, client_for

#: The template set these tests write labels in (the page itself opens with generic here).
RC = "robocasa365"

TASK = "Pick up the yellow bottle on the table."
PICK = "pick up the yellow bottle from the table"
PLACE = "place the yellow bottle on the table"

#: A valid segmentation of a 90-frame toy episode, as the page sends it.
SEGMENTS = [
    {"start": 0, "end": 30, "template_id": "P1", "slots": {"theme": "yellow bottle", "source": "table"}},
    {"start": 30, "end": 60, "template_id": "L2", "slots": {"theme": "yellow bottle", "destination": "table"}},
    {"start": 60, "end": 90, "template_id": "TASK_COMPLETE", "slots": {}, "modifiers": {}, "note": None},
]


@pytest.fixture
def client(toy_dataset):
    return client_for(toy_dataset)


def sidecar(root: Path) -> dict:
    return json.loads((root / "episode_segments.json").read_text())["episodes"]


def spans(segments: list[dict]) -> list[tuple[int, int, str]]:
    return [(s["start"], s["end"], s["label"]) for s in segments]


# -- page and reads -------------------------------------------------------------------------------


def test_page_is_served_beside_the_review_page(client):
    html = client.get("/segment")
    assert html.status_code == 200
    assert f'name="labels-token" content="{TOKEN}"' in html.text
    assert '<script src="/static/segment.js" defer></script>' in html.text
    nav = re.findall(r'<a href="(/\w+)"', html.text)
    assert nav == ["/review", "/segment", "/report"]
    assert 'class="active" aria-current="page">Segment' in html.text.replace("\n", "")
    assert html.headers["content-security-policy"].startswith("default-src 'none'")
    review = client.get("/review")
    assert review.status_code == 200 and '<a href="/segment">Segment</a>' in review.text
    assert client.get("/static/segment.js").status_code == 200


def test_episode_list_and_payload(client, toy_dataset):
    listing = client.get("/api/segment/episodes").json()
    assert listing["total"] == 3 and listing["segmented"] == 0 and listing["first_unsegmented"] == 0
    assert [(r["episode"], r["length"], r["saved"]) for r in listing["episodes"]] == [
        (0, 90, None),
        (1, 90, None),
        (2, 90, None),
    ]
    assert [r["episode"] for r in client.get("/api/segment/episodes?offset=1&limit=1").json()["episodes"]] == [1]

    detail = client.get("/api/segment/episodes/1").json()
    assert (detail["episode"], detail["length"], detail["fps"], detail["task"]) == (1, 90, 30, TASK)
    assert detail["record"] is None and detail["references"] == [] and detail["findings"] == []
    assert (detail["previous"], detail["next"]) == (0, 2)
    assert detail["cohort"] == "generic" and detail["base_velocity_feature"] is None
    assert detail["cameras"][0]["key"] == "observation.images.cam_high" and detail["cameras"][0]["available"]
    assert [c["id"] for c in detail["choices"]][:3] == ["G_REACH", "G_GRASP", "G_LIFT"]
    robocasa = client.get("/api/segment/episodes/1?cohort=robocasa365").json()
    ids = [c["id"] for c in robocasa["choices"]]
    assert ids[:3] == ["N1", "O1", "C1"] and ids[-1] == "TASK_COMPLETE" and len(ids) == 26
    assert not any(c["in_pool"] for c in robocasa["choices"])
    agibot = client.get("/api/segment/episodes/1?cohort=agibot").json()
    assert [c["id"] for c in agibot["choices"]] == ["AGIBOT_PICK", "AGIBOT_PLACE", "AGIBOT_IDLE", "TASK_COMPLETE"]


def test_unknown_episode_and_cohort_are_refused(client):
    assert client.get("/api/segment/episodes/3").status_code == 404
    assert client.post("/api/segment/episodes/99", json={"segments": SEGMENTS}, headers=WRITE).status_code == 404
    assert client.get("/api/segment/episodes/-1").status_code == 404
    response = client.get("/api/segment/episodes/0?cohort=robocasa")
    assert response.status_code == 400 and "robocasa365, agibot, allex" in response.json()["error"]


def test_check_renders_each_label_and_reports_findings(client):
    segments = [
        {"start": 0, "end": 30, "template_id": "P1", "slots": {"theme": "a yellow bottle", "source": "table"}},
        {"start": 30, "end": 60, "template_id": "L2", "slots": {"theme": "yellow bottle"}},
        {"start": 60, "end": 90, "template_id": None},
    ]
    body = client.post("/api/segment/episodes/0/check", json={"segments": segments, "cohort": RC}, headers=WRITE).json()
    assert body["segments"][0] == {
        "label": "pick up a yellow bottle from the table",
        "error": None,
        "template_id": "P1",
    }
    assert body["segments"][1]["label"] is None and "needs the slot 'destination'" in body["segments"][1]["error"]
    assert body["segments"][2]["error"] == "no template chosen yet"
    unparseable = [(f["start"], f["end"], f["blocking"]) for f in body["findings"] if f["kind"] == "unparseable_label"]
    assert unparseable == [(30, 60, True), (60, 90, True)]
    assert body["blocking"] is True

    valid = client.post(
        "/api/segment/episodes/0/check", json={"segments": SEGMENTS, "cohort": RC}, headers=WRITE
    ).json()
    assert [s["label"] for s in valid["segments"]] == [PICK, PLACE, "TASK_COMPLETE"]
    assert valid["blocking"] is False and not [f for f in valid["findings"] if f["severity"] == "error"]


def test_check_shows_guideline_warnings(client):
    # a pick without its source: the guideline asks for it (docs/segments.md, "Validation and
    # findings": `pick_without_source`), a warning only
    segments = [dict(SEGMENTS[0], slots={"theme": "yellow bottle"}), *SEGMENTS[1:]]
    body = client.post("/api/segment/episodes/0/check", json={"segments": segments, "cohort": RC}, headers=WRITE).json()
    warnings = [(f["kind"], f["start"], f["end"]) for f in body["findings"] if f["severity"] == "warning"]
    assert ("pick_without_source", 0, 30) in warnings
    assert body["blocking"] is False


# -- saves ----------------------------------------------------------------------------------------


def test_save_pool_references_and_next_episode(client, toy_dataset):
    response = client.post(
        "/api/segment/episodes/0",
        json={
            "segments": SEGMENTS,
            "annotator": "ana",
            "reference": True,
            "note": "clean lift",
            "cohort": "robocasa365",
        },
        headers=WRITE,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["next_episode"] == 1 and body["following"] == 1 and body["saved_to"] == "episode_segments.json"
    stored = sidecar(toy_dataset)["0"]
    assert spans(stored["segments"]) == [(0, 30, PICK), (30, 60, PLACE), (60, 90, "TASK_COMPLETE")]
    assert (stored["annotator"], stored["reference"], stored["note"], stored["version"]) == (
        "ana",
        True,
        "clean lift",
        1,
    )
    assert stored["tasks"] == [TASK] and stored["length"] == 90

    # the next episode of the same task: its pool first, slot suggestions, the reference beside
    detail = client.get("/api/segment/episodes/1").json()
    assert [(c["id"], c["in_pool"], c["count"]) for c in detail["choices"][:4]] == [
        ("P1", True, 1),
        ("L2", True, 1),
        ("TASK_COMPLETE", True, 1),
        ("N1", False, 0),
    ]
    assert len(detail["choices"]) == 26
    assert detail["suggestions"]["P1"] == {"theme": ["yellow bottle"], "source": ["table"]}
    assert [r["episode_index"] for r in detail["references"]] == [0]
    assert client.get("/api/segment/episodes/0").json()["references"] == []  # never the episode itself

    listing = client.get("/api/segment/episodes").json()
    assert listing["segmented"] == 1 and listing["first_unsegmented"] == 1
    assert listing["episodes"][0]["saved"] | {"annotated_at": None} == {
        "version": 1,
        "annotator": "ana",
        "annotated_at": None,
        "segments": 3,
        "reference": True,
        "cohort": "robocasa365",
        "status": "annotation",
    }

    # the annotator defaults to the server's; saving the last open episode wraps around
    client.post("/api/segment/episodes/2", json={"segments": SEGMENTS}, headers=WRITE)
    assert sidecar(toy_dataset)["2"]["annotator"] == "tester"
    assert (
        client.post("/api/segment/episodes/2", json={"segments": SEGMENTS}, headers=WRITE).json()["next_episode"] == 1
    )


def test_saved_article_comes_back_in_the_slot(client, toy_dataset):
    segments = [dict(SEGMENTS[0], slots={"theme": "a yellow bottle", "source": "table"}), *SEGMENTS[1:]]
    assert client.post("/api/segment/episodes/0", json={"segments": segments}, headers=WRITE).status_code == 200
    stored = sidecar(toy_dataset)["0"]["segments"][0]
    assert stored["slots"] == {"theme": "yellow bottle", "source": "table"} and stored["modifiers"] == {
        "theme_article": "a"
    }
    record = client.get("/api/segment/episodes/0").json()["record"]
    assert record["segments"][0]["slots"] == {"theme": "a yellow bottle", "source": "table"}
    assert record["segments"][0]["modifiers"] == {}
    assert record["segments"][0]["label"] == "pick up a yellow bottle from the table"


@pytest.mark.parametrize(
    ("segments", "kind", "frames"),
    [
        ([SEGMENTS[0], SEGMENTS[2]], "gap", (30, 60)),
        ([SEGMENTS[0], dict(SEGMENTS[1], start=25), SEGMENTS[2]], "overlap", (25, 30)),
        ([*SEGMENTS[:2], dict(SEGMENTS[2], end=80)], "gap", (80, 90)),
        ([dict(SEGMENTS[0], template_id=None), *SEGMENTS[1:]], "unparseable_label", (0, 30)),
        ([dict(SEGMENTS[2], start=0, end=30), dict(SEGMENTS[0], start=30, end=90)], "task_complete_placement", (0, 30)),
    ],
)
def test_refused_save_shows_the_frames_and_changes_nothing(client, toy_dataset, segments, kind, frames):
    assert client.post("/api/segment/episodes/1", json={"segments": SEGMENTS, "annotator": "ana"}, headers=WRITE)
    before = (toy_dataset / "episode_segments.json").read_bytes()
    response = client.post("/api/segment/episodes/1", json={"segments": segments, "annotator": "bob"}, headers=WRITE)
    assert response.status_code == 422
    body = response.json()
    assert "nothing was changed" in body["error"]
    assert (body["findings"][0]["kind"], body["findings"][0]["start"], body["findings"][0]["end"]) == (kind, *frames)
    assert body["findings"][0]["blocking"] is True
    assert (toy_dataset / "episode_segments.json").read_bytes() == before
    assert get_segmentation(toy_dataset, 1)["annotator"] == "ana"


def test_first_refused_save_creates_no_file(client, toy_dataset):
    response = client.post("/api/segment/episodes/0", json={"segments": [SEGMENTS[0]]}, headers=WRITE)
    assert response.status_code == 422 and response.json()["findings"][0]["kind"] == "gap"
    assert not (toy_dataset / "episode_segments.json").exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"segments": SEGMENTS, "episode": 2}, "unknown keys ['episode']"),
        ({"segments": {"start": 0}}, "segments must be a list"),
        ({"segments": [dict(SEGMENTS[0], root="/etc")]}, "unknown keys ['root']"),
        ({"segments": [dict(SEGMENTS[0], slots={"theme": 3})]}, "slots must be an object of text values"),
        ({"segments": SEGMENTS, "reference": "yes"}, "reference must be true or false"),
        ({"segments": SEGMENTS, "cohort": "other"}, "is not one of robocasa365"),
        ({"segments": SEGMENTS, "annotator": 7}, "annotator must be a string or null."),
        (
            {"segments": SEGMENTS, "note": 5, "reference": 1},
            "note must be a string or null. reference must be true or false.",
        ),
        ({"cohort": "agibot"}, "segments must be a list of {start, end, template_id, slots, modifiers, note} objects."),
        ([], "the body must be a JSON object"),
    ],
)
def test_malformed_saves_are_refused(client, toy_dataset, body, message):
    response = client.post("/api/segment/episodes/0", json=body, headers=WRITE)
    assert response.status_code == 400 and message in response.json()["error"]
    assert not (toy_dataset / "episode_segments.json").exists()


MANY_BAD = {
    "segments": [
        dict(SEGMENTS[0], slots={"theme": 3}),
        5,
        dict(SEGMENTS[2], root="/etc", episode=2),
        dict(SEGMENTS[1], template_id=4, note="n" * 2001),
    ],
    "annotator": "a" * 256,
    "reference": "yes",
}
SEGMENT_KEYS = "['end', 'free', 'label', 'modifiers', 'note', 'slots', 'start', 'template_id']"
#: Every bad field of MANY_BAD, by its path, in one answer (the save endpoint's).
MANY_BAD_ERROR = (
    "segments[0].slots must be an object of text values. "
    "segments[1] must be an object with start, end, template_id, slots, modifiers, note, label, free. "
    f"segments[2] has unknown keys ['episode', 'root']; it takes {SEGMENT_KEYS}. "
    "segments[3].template_id must be text or null. "
    "segments[3].note='" + "n" * 16 + " ... " + "n" * 16 + "' has 2001 characters; at most 2000 are allowed. "
    "annotator='" + "a" * 16 + " ... " + "a" * 16 + "' has 256 characters; at most 255 are allowed. "
    "reference must be true or false."
)


def test_one_400_names_every_bad_field_and_nothing_changes(client, toy_dataset):
    assert client.post("/api/segment/episodes/0", json={"segments": SEGMENTS, "annotator": "ana"}, headers=WRITE)
    before = (toy_dataset / "episode_segments.json").read_bytes()
    saved = client.post("/api/segment/episodes/0", json=MANY_BAD, headers=WRITE)
    assert saved.status_code == 400 and saved.json() == {"error": MANY_BAD_ERROR}
    checked = client.post("/api/segment/episodes/0/check", json=dict(MANY_BAD, annotator=None), headers=WRITE)
    assert checked.status_code == 400
    assert checked.json()["error"] == MANY_BAD_ERROR.split(" annotator=")[0] + (
        " unknown keys ['annotator', 'reference']; this request takes ['cohort', 'segments']."
    )
    assert (toy_dataset / "episode_segments.json").read_bytes() == before
    assert get_segmentation(toy_dataset, 0)["annotator"] == "ana"


@pytest.mark.parametrize(
    ("segment", "error"),
    [
        ({"start": 0, "end": 90, "label": 7}, "segments[0].label must be text or null."),
        (dict(SEGMENTS[0], modifiers=["x"]), "segments[0].modifiers must be an object of text values."),
        (None, "segments[0] must be an object with start, end, template_id, slots, modifiers, note, label, free."),
        (dict(SEGMENTS[0], note=False), "segments[0].note must be text or null."),
    ],
)
def test_a_bad_segment_field_is_named_by_its_path(client, toy_dataset, segment, error):
    for path in ("/api/segment/episodes/0", "/api/segment/episodes/0/check"):
        response = client.post(path, json={"segments": [segment]}, headers=WRITE)
        assert response.status_code == 400 and response.json() == {"error": error}
    assert not (toy_dataset / "episode_segments.json").exists()


def test_the_store_limits_are_the_pages_limits(client, toy_dataset):
    from strands_robots.segments.store import MAX_NAME_CHARS, MAX_NOTE_CHARS

    at_limit = [dict(SEGMENTS[0], note="n" * MAX_NOTE_CHARS), *SEGMENTS[1:]]
    body = {"segments": at_limit, "annotator": "a" * MAX_NAME_CHARS, "note": "x" * MAX_NOTE_CHARS}
    saved = client.post("/api/segment/episodes/0", json=body, headers=WRITE)
    assert saved.status_code == 200, saved.json()
    record = get_segmentation(toy_dataset, 0)
    assert record["annotator"] == "a" * MAX_NAME_CHARS and record["segments"][0]["note"] == "n" * MAX_NOTE_CHARS
    padded = client.post(
        "/api/segment/episodes/1", json=dict(body, note=" " + "x" * MAX_NOTE_CHARS + " "), headers=WRITE
    )
    assert padded.status_code == 200  # trimmed before counting, as the store does
    over = client.post("/api/segment/episodes/1", json=dict(body, note="x" * (MAX_NOTE_CHARS + 1)), headers=WRITE)
    assert over.json() == {
        "error": "note='" + "x" * 16 + " ... " + "x" * 16 + "' has 2001 characters; at most 2000 are allowed."
    }


def test_unlabelled_segments_and_bad_intervals_are_findings_not_refusals(client):
    segments = [{"start": "zero", "end": 30}, {"start": 30, "end": 90, "template_id": "", "label": PICK}]
    response = client.post("/api/segment/episodes/0/check", json={"segments": segments}, headers=WRITE)
    assert response.status_code == 200
    body = response.json()
    assert body["segments"] == [
        {"label": None, "error": "no template chosen yet", "template_id": None},
        {"label": PICK, "error": None, "template_id": "P1"},
    ]
    assert ("invalid_interval", 0, 30) in [(f["kind"], f["start"], f["end"]) for f in body["findings"]]


def test_too_many_segments_is_413(client, toy_dataset):
    segments = [{"start": i, "end": i + 1} for i in range(2001)]
    response = client.post("/api/segment/episodes/0/check", json={"segments": segments}, headers=WRITE)
    assert response.status_code == 413
    assert response.json() == {"error": "2001 segments; at most 2000 per episode."}


def test_writes_need_the_token_and_this_origin(client, toy_dataset):
    save_segmentation(toy_dataset, 0, [{"start": 0, "end": 90, "label": PICK}], annotator="ana")
    before = (toy_dataset / "episode_segments.json").read_bytes()
    body = {"segments": SEGMENTS, "annotator": "mallory"}
    for headers in (
        {"origin": BASE},
        {"origin": BASE, "x-labels-token": "guess"},
        {"origin": "http://evil.example", "x-labels-token": TOKEN},
        {"origin": BASE, "x-labels-token": TOKEN, "sec-fetch-site": "cross-site"},
    ):
        for path in ("/api/segment/episodes/0", "/api/segment/episodes/0/check"):
            assert client.post(path, json=body, headers=headers).status_code == 403
    rebinding = client.get("/api/segment/episodes/0", headers={"host": "evil.example:8765"})
    assert rebinding.status_code == 403
    assert (toy_dataset / "episode_segments.json").read_bytes() == before


def test_labels_dir_keeps_the_dataset_untouched(toy_dataset, tmp_path):
    labels = tmp_path / "labels"
    labels.mkdir()
    client = client_for(toy_dataset, labels_dir=labels)
    assert client.post("/api/segment/episodes/0", json={"segments": SEGMENTS}, headers=WRITE).status_code == 200
    assert not (toy_dataset / "episode_segments.json").exists()
    assert sidecar(labels)["0"]["segments"][2]["label"] == "TASK_COMPLETE"
    assert client.get("/api/segment/episodes").json()["segmented"] == 1


def test_prefill_navigate_from_base_motion(tmp_path, toy_dataset):
    from tests.segments.conftest import build_dataset

    client = client_for(build_dataset(tmp_path / "ds"))
    detail = client.get("/api/segment/episodes/0").json()
    assert detail["base_velocity_feature"] == "observation.base_velocity"
    assert (detail["length"], detail["fps"], detail["next"]) == (60, 10, 1)
    prefill = client.get("/api/segment/episodes/0/prefill").json()
    assert prefill["feature"] == "observation.base_velocity"
    assert [(s["start"], s["end"], s["template_id"]) for s in prefill["segments"]] == [
        (0, 10, None),
        (10, 30, "N1"),
        (30, 60, None),
    ]
    # navigating while the base stands still is reported once the base velocity is known
    segments = [
        {"start": 0, "end": 30, "template_id": "N1", "slots": {"destination": "counter"}},
        {"start": 30, "end": 60, "template_id": "P1", "slots": {"theme": "mug", "source": "counter"}},
    ]
    check = client.post(
        "/api/segment/episodes/1/check",
        json={"segments": segments[:1] + [dict(segments[1], end=40)], "cohort": RC},
        headers=WRITE,
    )
    kinds = {f["kind"]: f for f in check.json()["findings"]}
    assert kinds["navigate_base_motion"]["severity"] == "error"
    assert (kinds["navigate_base_motion"]["start"], kinds["navigate_base_motion"]["end"]) == (0, 30)

    toy = client_for(toy_dataset).get("/api/segment/episodes/0/prefill")
    assert toy.status_code == 422 and "no base-velocity feature" in toy.json()["error"]


# -- CLI ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["segments", "page"], ["segment"]], ids=["segments page", "its old name"])
def test_segment_command_serves_the_page(toy_dataset, command):
    args = [*command, str(toy_dataset), "--port", "0", "--annotator", "cli"]
    with cli_server(args, r"^segment page: http://127\.0\.0\.1:(\d+)/segment ", "/segment") as served:
        assert '"annotator":"cli"' in served.html.replace(" ", "")
        response = served.post("/api/segment/episodes/2", {"segments": SEGMENTS})
        assert response.status_code == 200, response.text
    assert "segment page stopped" in served.process.stdout.read()
    stored = sidecar(toy_dataset)["2"]
    assert stored["annotator"] == "cli" and spans(stored["segments"])[0] == (0, 30, PICK)


# -- browser --------------------------------------------------------------------------------------


@pytest.mark.browser
def test_segment_by_keyboard_in_chromium(page, toy_dataset):
    from strands_robots.web.server import BackgroundServer

    with BackgroundServer(toy_dataset, reviewer="ana") as server:
        page.goto(server.url("/segment"))
        page.wait_for_function("() => document.getElementById('ep-index').textContent === '0'")
        page.wait_for_function(IMAGES_LOADED)
        page.select_option("#cohort", RC)  # the toy dataset has no segmentation yet: it opens with generic
        page.wait_for_function(f"() => document.getElementById('ep-badges').textContent.includes('templates: {RC}')")
        assert page.locator("#tl-track .tl-seg").count() == 1
        # the state channels under the timeline: the page picks them by the payload's keys.state
        page.wait_for_function("() => !document.getElementById('tl-strip').hidden")
        drawn = page.evaluate(
            "() => { const c = document.getElementById('tl-strip');"
            " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"
        )
        assert drawn > 500

        # playhead to frame 30 and 60 by keyboard, B at each; a third boundary removed with Delete
        for frame in (30, 60, 75):
            while int(page.input_value("#frame-slider")) < frame:
                page.keyboard.press(
                    "Shift+ArrowRight" if frame - int(page.input_value("#frame-slider")) >= 10 else "ArrowRight"
                )
            page.keyboard.press("b")
        page.wait_for_function("() => document.querySelectorAll('#tl-track .tl-boundary').length === 3")
        assert page.locator("#tl-track .tl-boundary.selected").get_attribute("data-frame") == "75"
        page.keyboard.press("Delete")
        page.wait_for_function("() => document.querySelectorAll('#tl-track .tl-seg').length === 3")
        frames = page.eval_on_selector_all("#tl-track .tl-boundary", "els => els.map(e => Number(e.dataset.frame))")
        assert frames == [30, 60]
        assert page.inner_text("#frame-label").startswith("frame 75 / 89")
        # "," selects the boundary before the playhead, M moves it to the playhead, Z undoes
        page.keyboard.press(",")
        assert page.locator("#tl-track .tl-boundary.selected").get_attribute("data-frame") == "60"
        page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("m")
        assert page.eval_on_selector_all("#tl-track .tl-boundary", "els => els.map(e => e.dataset.frame)") == [
            "30",
            "70",
        ]
        page.keyboard.press("z")
        assert page.eval_on_selector_all("#tl-track .tl-boundary", "els => els.map(e => e.dataset.frame)") == [
            "30",
            "60",
        ]

        # templates from the dropdowns, slots typed; the rendered label shows live
        page.select_option("select[aria-label='segment 0 template']", "P1")
        page.fill("input[aria-label='segment 0 theme']", "yellow bottle")
        page.fill("input[aria-label='segment 0 source']", "table")
        page.select_option("select[aria-label='segment 1 template']", "L2")
        page.fill("input[aria-label='segment 1 theme']", "yellow bottle")
        page.fill("input[aria-label='segment 1 destination']", "table")
        page.select_option("select[aria-label='segment 2 template']", "TASK_COMPLETE")
        page.wait_for_function(
            f"() => document.querySelector('.segment-row[data-index=\"1\"] .rendered').textContent === '{PLACE}'"
        )
        assert page.inner_text(".segment-row[data-index='0'] .rendered") == PICK
        page.check("#reference")
        page.keyboard.press("Escape")  # leave the last field: keys are commands again

        # S saves and opens the next episode to segment
        page.keyboard.press("s")
        page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")
        page.wait_for_function("() => document.getElementById('status').textContent.includes('Episode 0 saved')")
        stored = sidecar(toy_dataset)["0"]
        assert spans(stored["segments"]) == [(0, 30, PICK), (30, 60, PLACE), (60, 90, "TASK_COMPLETE")]
        assert [s["template_id"] for s in stored["segments"]] == ["P1", "L2", "TASK_COMPLETE"]
        assert stored["annotator"] == "ana" and stored["reference"] is True
        assert page.inner_text("#segmented-count") == "1 / 3"

        # episode 1: the task's pool heads the dropdown, episode 0 is shown as its reference
        pool = page.eval_on_selector_all(
            "select[aria-label='segment 0 template'] optgroup:first-of-type option", "els => els.map(e => e.value)"
        )
        assert pool == ["P1", "L2", "TASK_COMPLETE"]
        page.wait_for_selector("#references .reference")
        assert "Episode 0" in page.inner_text("#references")
        assert PICK in page.inner_text("#references")

        # a gap made by editing one segment's start: S is refused, the gap is drawn, nothing is written
        before = (toy_dataset / "episode_segments.json").read_bytes()
        page.fill("#frame-slider", "45")
        page.locator("#frame-slider").blur()
        page.keyboard.press("b")
        page.select_option("select[aria-label='segment 0 template']", "P1")
        page.fill("input[aria-label='segment 0 theme']", "yellow bottle")
        page.select_option("select[aria-label='segment 1 template']", "TASK_COMPLETE")
        page.fill("input[aria-label='segment 1 start frame']", "50")
        page.keyboard.press("Enter")
        page.keyboard.press("s")
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Not saved')")
        assert "gap at frames [45, 50)" in page.inner_text("#status")
        gap = page.locator("#tl-track .tl-band.gap")
        assert (gap.get_attribute("data-start"), gap.get_attribute("data-end")) == ("45", "50")
        assert page.inner_text("#ep-index") == "1"
        assert (toy_dataset / "episode_segments.json").read_bytes() == before

        # the same refusal through the API from the page (token and origin are right)
        answer = page.evaluate(
            """async () => {
                const token = document.querySelector('meta[name="labels-token"]').content;
                const r = await fetch('/api/segment/episodes/1', {method: 'POST',
                    headers: {'Content-Type': 'application/json', 'X-Labels-Token': token},
                    body: JSON.stringify({segments: [{start: 0, end: 40, label: 'TASK_COMPLETE'}]})});
                return [r.status, await r.json()];
            }"""
        )
        assert answer[0] == 422
        assert ("gap", 40, 90) in [(f["kind"], f["start"], f["end"]) for f in answer[1]["findings"]]
        assert (toy_dataset / "episode_segments.json").read_bytes() == before

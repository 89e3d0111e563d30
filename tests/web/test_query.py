"""Query strings are read by the pages' pydantic models (strands_robots.web.query): a bad
value is a 400 naming the parameter, its value and the rule; empty and unknown parameters
are the defaults; nothing is read as something else (docs/review.md, "HTTP endpoints")."""

from __future__ import annotations

import pytest

from strands_robots import episode_labels as el
from strands_robots.segments.templates import known_cohorts
from tests.web.conftest import WRITE, client_for
from tests.web.test_server import sidecar

COUNT_RULE = "must be a non-negative integer written with the digits 0-9 (at most 19 digits)."


@pytest.fixture
def client(labelled_toy):
    with client_for(labelled_toy) as c:
        yield c


@pytest.mark.parametrize(
    "value", ["-1", "+1", "1.0", "1_000", " 1", "1e3", "\u00b2", "\uff11", "0x10", "9" * 20, "abc"]
)
@pytest.mark.parametrize("path", ["/api/queue", "/api/segment/episodes"])
@pytest.mark.parametrize("name", ["offset", "limit"])
def test_counts_are_decimal_digits_only(client, path, name, value):
    response = client.get(path, params={name: value})
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "...'"
    assert response.status_code == 400
    assert response.json() == {"error": f"{name}={shown} {COUNT_RULE}"}


def test_every_bad_parameter_is_named_at_once(client):
    response = client.get("/api/queue?quality=great&offset=-1&verdict=maybe")
    assert response.status_code == 400
    assert response.json()["error"] == (
        "quality='great' is not one of low, medium, high, none. "
        "verdict='maybe' is not one of success, failure, none. "
        f"offset='-1' {COUNT_RULE}"
    )


def test_empty_unknown_and_large_values(client):
    queue = client.get("/api/queue?quality=&offset=&limit=&page=2").json()
    assert (queue["offset"], queue["limit"], queue["filters"]) == (0, 200, {})
    assert client.get("/api/queue?limit=999999").json()["limit"] == 2000  # read as the largest page
    assert client.get("/api/queue?offset=4611686018427387905").json()["offset"] == 1 << 62
    assert client.get("/api/queue?limit=0").json()["episodes"] == []
    listing = client.get("/api/segment/episodes?limit=99999&offset=2").json()
    assert (listing["limit"], listing["offset"], [r["episode"] for r in listing["episodes"]]) == (5000, 2, [2])


def test_cohort_query_is_one_of_the_known_ones(client):
    response = client.get("/api/segment/episodes/0?cohort=robocasa")
    assert response.status_code == 400
    known = ", ".join(known_cohorts())  # the built-in cohorts and any label set registered in this process
    assert known.startswith("robocasa365, agibot, allex")
    assert response.json() == {"error": f"cohort='robocasa' is not one of {known}."}
    assert client.get("/api/segment/episodes/0?cohort=").json()["cohort"] == "generic"
    assert client.get("/api/segment/episodes/0?cohort=allex").json()["cohort"] == "allex"


def test_report_page_episode(client):
    assert 'href="/review#episode=2"' in client.get("/report?episode=2").text
    assert 'href="/review#episode=0"' in client.get("/report").text
    assert 'href="/review#episode=0"' in client.get("/report?episode=").text
    bad = client.get("/report?episode=two")
    assert bad.status_code == 400 and bad.json() == {"error": f"episode='two' {COUNT_RULE}"}
    missing = client.get("/report?episode=7")
    assert missing.status_code == 404 and missing.json() == {"error": "episode 7 is not in this dataset."}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"decision": "grade_only", "note": 5}, "note must be a string."),
        ({"decision": True}, "decision must be a string."),
        ({"decision": "grade_only", "quality": 3}, "quality must be a string or null."),
        (
            {"decision": "grade_only", "reviewer": ["a"], "failure_mode": {}},
            "reviewer must be a string. failure_mode must be a string or null.",
        ),
        (
            {"decision": "grade_only", "episode": 1, "root": "/etc"},
            "unknown keys ['episode', 'root']; this request takes "
            "['decision', 'failure_mode', 'judge_seen', 'note', 'quality', 'reviewer', 'verdict_seen'].",
        ),
        (
            "grade_only",
            "the body must be a JSON object with decision, failure_mode, judge_seen, note, quality, reviewer, "
            "verdict_seen.",
        ),
    ],
)
def test_review_bodies_are_read_by_their_model(client, labelled_toy, body, message):
    before = sidecar(labelled_toy)
    response = client.post("/api/episodes/0/review", json=body, headers=WRITE)
    assert (response.status_code, response.json()) == (400, {"error": message})
    assert sidecar(labelled_toy) == before


def test_a_review_body_with_defaults_is_written(client, labelled_toy):
    stamps = client.get("/api/episodes/0").json()["stamps"]
    body = {"decision": "grade_only", "quality": "", "reviewer": "  ", **stamps}
    response = client.post("/api/episodes/0/review", json=body, headers=WRITE)
    assert response.status_code == 200
    review = el.read_labels(labelled_toy)["episodes"]["0"]["review"]
    assert review["decision"] == "grade_only" and review["quality"] is None and review["reviewer"] != "  "

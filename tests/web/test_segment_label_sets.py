"""The segment page with the generic template set and a label set of your own, in Chromium.

The chosen set stays across episodes and page loads, and the header badge follows it
(docs/segments.md, "Template sets"). The dataset is the toy dataset (3 x 90 frames).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web.conftest import cli_server

GENERIC_IDS = [
    "G_REACH", "G_GRASP", "G_LIFT", "G_MOVE", "G_PLACE", "G_RELEASE", "G_PICK_UP", "G_PUSH", "G_PULL", "G_OPEN",
    "G_CLOSE", "G_POUR", "G_WIPE", "G_INSERT", "G_ROTATE", "G_PRESS", "G_HAND_OVER", "G_NAVIGATE", "G_RETRACT",
    "G_IDLE", "TASK_COMPLETE",
]  # fmt: skip
BADGES = "() => document.getElementById('ep-badges').textContent"


def stored(root: Path) -> dict:
    return json.loads((root / "episode_segments.json").read_text())["episodes"]


def template_values(page, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"select[aria-label='segment {index} template'] option", "els => els.map(e => e.value).filter(Boolean)"
    )


def wait_episode(page, episode: int) -> None:
    page.wait_for_function(f"() => document.getElementById('ep-index').textContent === '{episode}'")


def wait_badge(page, cohort: str) -> None:
    page.wait_for_function(f"() => document.getElementById('ep-badges').textContent.includes('templates: {cohort}')")


@pytest.mark.browser
def test_generic_set_in_chromium_stays_across_episodes_and_loads(page, toy_dataset):
    from strands_robots.web.server import BackgroundServer

    with BackgroundServer(toy_dataset, reviewer="ana") as server:
        page.goto(server.url("/segment"))
        wait_episode(page, 0)
        wait_badge(page, "generic")  # a dataset without segmentations opens with the generic set
        page.select_option("#cohort", "robocasa365")
        wait_badge(page, "robocasa365")
        page.select_option("#cohort", "generic")
        wait_badge(page, "generic")
        assert "templates: robocasa365" not in page.evaluate(BADGES)
        assert template_values(page, 0) == GENERIC_IDS

        page.fill("#frame-slider", "45")
        page.locator("#frame-slider").blur()
        page.keyboard.press("b")
        page.wait_for_function("() => document.querySelectorAll('#tl-track .tl-seg').length === 2")
        page.select_option("select[aria-label='segment 0 template']", "G_GRASP")
        page.fill("input[aria-label='segment 0 theme']", "yellow bottle")
        page.select_option("select[aria-label='segment 1 template']", "G_LIFT")  # its object is optional
        page.wait_for_function(
            "() => document.querySelector('.segment-row[data-index=\"0\"] .rendered').textContent === "
            "'grasp the yellow bottle'"
        )
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        wait_episode(page, 1)
        page.wait_for_function("() => document.getElementById('status').textContent.includes('Episode 0 saved')")
        record = stored(toy_dataset)["0"]
        assert record["cohort"] == "generic"
        assert [(s["start"], s["end"], s["label"], s["template_id"]) for s in record["segments"]] == [
            (0, 45, "grasp the yellow bottle", "G_GRASP"),
            (45, 90, "lift", "G_LIFT"),
        ]

        # the next episode opens in the chosen set, badge included
        wait_badge(page, "generic")
        assert page.input_value("#cohort") == "generic"
        assert sorted(template_values(page, 0)) == sorted(GENERIC_IDS)  # the task's pool first, then the rest
        # and so does a new page load
        page.reload()
        wait_episode(page, 1)
        wait_badge(page, "generic")
        assert page.input_value("#cohort") == "generic"


@pytest.mark.browser
def test_a_label_set_of_your_own_in_chromium(page, toy_dataset, tmp_path):
    from strands_robots.web.server import BackgroundServer

    labels = tmp_path / "kitchen.json"
    labels.write_text(json.dumps({"name": "kitchen", "labels": ["Reach", "Grab mug", "Wipe table"]}))
    with BackgroundServer(toy_dataset, reviewer="ana", label_sets=[labels]) as server:
        page.goto(server.url("/segment"))
        wait_episode(page, 0)
        wait_badge(page, "kitchen")  # the server's label set is where the page starts
        assert page.input_value("#cohort") == "kitchen"
        options = page.eval_on_selector_all("#cohort option", "els => els.map(e => e.value)")
        assert options[:4] == ["robocasa365", "agibot", "allex", "generic"] and "kitchen" in options
        assert template_values(page, 0) == ["kitchen:Reach", "kitchen:Grab mug", "kitchen:Wipe table", "TASK_COMPLETE"]
        shown = page.eval_on_selector_all(
            "select[aria-label='segment 0 template'] option", "els => els.map(e => e.textContent.trim())"
        )
        assert shown[1:4] == ["Reach", "Grab mug", "Wipe table"]  # labels as written, not their ids

        page.fill("#frame-slider", "30")
        page.locator("#frame-slider").blur()
        page.keyboard.press("b")
        page.wait_for_function("() => document.querySelectorAll('#tl-track .tl-seg').length === 2")
        page.select_option("select[aria-label='segment 0 template']", "kitchen:Reach")
        page.select_option("select[aria-label='segment 1 template']", "kitchen:Grab mug")
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        wait_episode(page, 1)
        record = stored(toy_dataset)["0"]
        assert record["cohort"] == "kitchen"
        assert [(s["start"], s["end"], s["label"]) for s in record["segments"]] == [
            (0, 30, "Reach"),
            (30, 90, "Grab mug"),
        ]

        # episode 1 keeps the set; the task's pool now heads the list
        wait_badge(page, "kitchen")
        pool = page.eval_on_selector_all(
            "select[aria-label='segment 0 template'] optgroup:first-of-type option", "els => els.map(e => e.value)"
        )
        assert pool == ["kitchen:Reach", "kitchen:Grab mug"]
        # switching sets: the badge follows, and the choice survives a reload
        page.select_option("#cohort", "generic")
        wait_badge(page, "generic")
        assert "templates: kitchen" not in page.evaluate(BADGES)
        page.reload()
        wait_episode(page, 1)
        wait_badge(page, "generic")

        # episode 0, saved in the kitchen set, opens with its labels
        page.goto(server.url("/segment#episode=0"))
        page.reload()
        wait_episode(page, 0)
        rendered = page.eval_on_selector_all(".segment-row .rendered", "els => els.map(e => e.textContent)")
        assert rendered == ["Reach", "Grab mug"]


def test_segment_command_takes_a_label_set_file(toy_dataset, tmp_path):
    labels = tmp_path / "shelf.txt"
    labels.write_text("# one label per line\nreach\ngrab the box\nput on shelf\n")
    args = ["segment", str(toy_dataset), "--port", "0", "--labels", str(labels)]
    with cli_server(args, r"^segment page: http://127\.0\.0\.1:(\d+)/segment ", "/segment") as served:
        config = served.html.replace(" ", "")
        assert '"default_cohort":"shelf"' in config and '"shelf"' in config
        body = {"segments": [{"start": 0, "end": 90, "label": "grab the box"}], "cohort": "shelf"}
        response = served.post("/api/segment/episodes/2", body)
        assert response.status_code == 200, response.text
    record = stored(toy_dataset)["2"]
    assert record["cohort"] == "shelf" and record["segments"][0]["label"] == "grab the box"


def test_segment_command_refuses_a_bad_label_set_before_serving(toy_dataset, tmp_path):
    labels = tmp_path / "bad.json"
    labels.write_text('["reach", "REACH"]')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "strands_robots.cli.main",
            "segment",
            str(toy_dataset),
            "--port",
            "0",
            "--labels",
            str(labels),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert "'REACH' repeats 'reach'" in result.stderr and "Fix the file" in result.stderr
    assert not (toy_dataset / "episode_segments.json").exists()

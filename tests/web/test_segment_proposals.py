"""Reviewing lerobot-annotate's proposals on the segment page, in Chromium (docs/segments.md,
"Proposals and review"): the queue filtered to proposals, a proposal accepted with ``A``, one
edited and saved with ``S``, each decision stored with the reviewer and the proposal.

The toy dataset (3 episodes x 90 frames at 30 fps, one camera) gets subtask rows on episodes 0
and 1 (pyarrow, LeRobot's shape: ``tests/segments/language_rows.py``), imported as proposals.
"""

from __future__ import annotations

import json

import pytest

from scripts._browser import IMAGES_LOADED
from strands_robots.segments.lerobot_import import import_lerobot
from tests.segments.language_rows import row, write_rows


def stored(root):
    return json.loads((root / "episode_segments.json").read_text())["episodes"]


@pytest.mark.browser
def test_a_proposal_is_accepted_with_one_key_and_another_edited(page, toy_dataset):
    from strands_robots.web.server import BackgroundServer

    write_rows(
        toy_dataset,
        {
            0: [row(0.0, "reach for the bottle"), row(1.0, "grasp the bottle"), row(2.0, "wiggle it a bit")],
            1: [row(0.0, "reach for the bottle"), row(1.5, "lift the bottle")],
        },
    )
    assert import_lerobot(toy_dataset).count("imported") == 2
    with BackgroundServer(toy_dataset, reviewer="ana") as server:
        page.goto(server.url("/segment#episode=0"))
        page.wait_for_function("() => document.getElementById('ep-index').textContent === '0'")
        page.wait_for_function(IMAGES_LOADED)
        assert page.inner_text("#unreviewed-count") == "2"
        page.check("#only-unreviewed")
        page.wait_for_function("() => document.querySelectorAll('#seg-episode-list li').length === 2")
        assert "proposal · lerobot-annotate" in page.inner_text("#seg-episode-list")

        # the draft: the proposal's three segments, the last a free label; the card offers A and Reject
        assert page.is_visible("#proposal-card")
        assert "proposal by lerobot-annotate: awaiting review" in page.inner_text("#episode-view")
        assert "1 free label" in page.inner_text("#proposal-text")
        assert page.locator("#tl-track .tl-seg").count() == 3
        assert page.inner_text(".segment-row[data-index='2'] .rendered") == "wiggle it a bit"
        assert "free label" in page.inner_text(".segment-row[data-index='2'] .label-error")
        page.keyboard.press("a")
        page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")
        page.wait_for_function("() => document.getElementById('status').textContent.includes('proposal accepted')")
        first = stored(toy_dataset)["0"]
        assert (first["annotator"], first["review"]["decision"], first["review"]["by"]) == ("ana", "accepted", "ana")
        assert first["review"]["proposal"]["annotator"] == "lerobot-annotate"
        assert [s["label"] for s in first["segments"]] == [
            "reach for the bottle",
            "grasp the bottle",
            "wiggle it a bit",
        ]
        assert first["segments"][2]["free"] is True

        # episode 1: a boundary at frame 60 splits the lift; the new part gets a template; S saves the edit
        assert page.is_visible("#proposal-card")
        page.fill("#frame-slider", "60")
        page.locator("#frame-slider").blur()
        page.keyboard.press("b")
        page.select_option("select[aria-label='segment 2 template']", "G_PLACE")
        page.fill("input[aria-label='segment 2 theme']", "bottle")
        page.keyboard.press("Escape")
        page.keyboard.press("s")
        page.wait_for_function("() => document.getElementById('status').textContent.includes('Episode 1 saved')")
        second = stored(toy_dataset)["1"]
        assert second["review"]["decision"] == "edited" and second["annotator"] == "ana"
        assert [(s["start"], s["end"], s["label"]) for s in second["segments"]] == [
            (0, 45, "reach for the bottle"),
            (45, 60, "lift the bottle"),
            (60, 90, "place the bottle"),
        ]
        assert [(s["start"], s["end"]) for s in second["review"]["proposal"]["segments"]] == [(0, 45), (45, 90)]
        page.wait_for_function("() => document.getElementById('unreviewed-count').textContent === '0'")
        assert page.locator("#seg-episode-list li").count() == 0

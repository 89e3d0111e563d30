"""Save a screenshot of the segment page to ``docs/segment-page.png`` (for the docs).

Not a test. Copies ``examples/toy_dataset`` to a temporary directory, saves a reference
segmentation of episode 0 (so the label pool and the reference panel have content),
starts the label server on a free loopback port and, with Debian's Chromium
(``apt-get install chromium``) driven by Playwright's Python package (never its own
browser download; see ``scripts/_browser.py``), segments episode 1 half-way by keyboard
before taking the picture::

    .venv/bin/python scripts/screenshot_segment.py [--out docs/segment-page.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

from _browser import IMAGES_LOADED, screenshot


def prepare(root: Path) -> None:
    """A reference segmentation of episode 0 (the toy task: lift the yellow bottle)."""
    from strands_robots.segments import save_segmentation

    save_segmentation(
        root,
        0,
        [
            {"start": 0, "end": 41, "label": "pick up the yellow bottle from the table"},
            {"start": 41, "end": 74, "label": "place the yellow bottle on the table"},
            {"start": 74, "end": 90, "label": "TASK_COMPLETE"},
        ],
        annotator="ben",
        reference=True,
    )


def drive(page, server) -> None:
    """Episode 1 split at frames 38 and 70, two segments labelled, the playhead at frame 52."""
    page.goto(server.url("/segment#episode=1"))
    page.wait_for_selector("#cameras img")
    page.wait_for_function(IMAGES_LOADED)
    for frame in (38, 70):
        page.fill("#frame-slider", str(frame))
        page.locator("#frame-slider").blur()
        page.keyboard.press("b")
    page.select_option("select[aria-label='segment 0 template']", "P1")
    page.fill("input[aria-label='segment 0 theme']", "yellow bottle")
    page.fill("input[aria-label='segment 0 source']", "table")
    page.select_option("select[aria-label='segment 1 template']", "L2")
    page.fill("input[aria-label='segment 1 theme']", "yellow bottle")
    page.locator("input[aria-label='segment 1 theme']").blur()
    page.fill("#frame-slider", "52")
    page.locator("#frame-slider").blur()
    page.wait_for_function(IMAGES_LOADED)
    page.wait_for_function("() => document.querySelectorAll('#findings li').length > 0")
    page.evaluate("() => document.querySelector('.seg-main').scrollTo(0, 0)")
    page.wait_for_timeout(400)


if __name__ == "__main__":
    sys.exit(screenshot(__doc__, "segment-page.png", prepare=prepare, reviewer="ana", drive=drive))

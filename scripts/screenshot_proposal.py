"""Save a screenshot of the segment page reviewing a proposal to ``docs/segment-proposal.png``.

Not a test. Copies ``examples/toy_dataset`` to a temporary directory, stores the proposals
``strands-labels segments import-lerobot`` would store for episodes 0 and 1 (annotator
``lerobot-annotate``, one free label), starts the label server on a free loopback port and,
with Debian's Chromium driven by Playwright's Python package (``scripts/_browser.py``),
opens episode 0 with the queue filtered to proposals before taking the picture::

    .venv/bin/python scripts/screenshot_proposal.py [--out docs/segment-proposal.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

from _browser import IMAGES_LOADED, screenshot


def prepare(root: Path) -> None:
    """Proposals of episodes 0 and 1, as an import of lerobot-annotate's rows stores them."""
    from strands_robots.segments import save_segmentation

    reach, grasp = "reach for the bottle", "grasp the bottle"
    proposals = {
        0: [
            {"start": 0, "end": 30, "label": reach},
            {"start": 30, "end": 60, "label": grasp},
            {"start": 60, "end": 90, "label": "wiggle it a bit", "free": True},
        ],
        1: [{"start": 0, "end": 45, "label": reach}, {"start": 45, "end": 90, "label": "lift the bottle"}],
    }
    for episode, segments in proposals.items():
        save_segmentation(root, episode, segments, annotator="lerobot-annotate", source="proposal", cohort="generic")


def drive(page, server) -> None:
    """Episode 0's proposal, the queue filtered to proposals, the playhead in the free label."""
    page.goto(server.url("/segment#episode=0"))
    page.wait_for_selector("#cameras img")
    page.wait_for_function(IMAGES_LOADED)
    page.check("#only-unreviewed")
    page.wait_for_function("() => document.querySelectorAll('#seg-episode-list li').length === 2")
    page.fill("#frame-slider", "66")
    page.locator("#frame-slider").blur()
    page.wait_for_function(IMAGES_LOADED)
    page.evaluate("() => document.querySelector('.seg-main').scrollTo(0, 0)")
    page.wait_for_timeout(400)


if __name__ == "__main__":
    sys.exit(screenshot(__doc__, "segment-proposal.png", prepare=prepare, reviewer="ana", drive=drive))

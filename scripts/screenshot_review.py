"""Save a screenshot of the review page to ``docs/review-page.png`` (for the README).

Not a test. Copies ``examples/toy_dataset`` to a temporary directory, records its
verdicts (``examples/toy_dataset_verdicts.json``), writes two judge labels that dispute
them, starts the review server on a free loopback port and photographs the page with
Debian's Chromium (``apt-get install chromium``) driven by Playwright's Python package
(never its own browser download; see ``scripts/_browser.py``)::

    .venv/bin/python scripts/screenshot_review.py [--out docs/review-page.png]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _browser import IMAGES_LOADED, REPO, screenshot


def prepare(root: Path) -> None:
    """Verdicts and judge labels on a copy of the toy dataset: two open disputes."""
    from strands_robots import episode_labels as el

    verdicts = json.loads((REPO / "examples" / "toy_dataset_verdicts.json").read_text())
    el.record_deterministic_verdicts(root, verdicts, benchmark="toy-bottle-lift")
    el.annotate_episode(
        root, 0, quality="high", success_opinion=True, model="bedrock:claude-sonnet", note="Clean grasp and lift."
    )
    el.annotate_episode(
        root,
        1,
        quality="medium",
        failure_mode="near_miss",
        success_opinion=False,
        model="bedrock:claude-sonnet",
        note="The fingers close late; the bottle barely leaves the table.",
    )
    el.annotate_episode(
        root,
        2,
        quality="medium",
        success_opinion=True,
        model="bedrock:claude-sonnet",
        note="The bottle is lifted clear of the table in the last frames; the predicate looks too strict.",
    )


def drive(page, server) -> None:
    """Episode 2 at frame 72 with a note typed and a quality chosen, not yet decided."""
    page.goto(server.url("/review#episode=2"))
    page.wait_for_selector("#cameras img")
    page.fill("#frame-slider", "72")
    page.wait_for_function(IMAGES_LOADED)
    page.keyboard.press("/")
    page.keyboard.type("Bottle lifted ~5 cm at frame 72; the predicate missed it.")
    page.keyboard.press("Escape")
    page.select_option("#quality", "medium")
    page.locator("#quality").blur()
    page.wait_for_timeout(300)


if __name__ == "__main__":
    sys.exit(screenshot(__doc__, "review-page.png", prepare=prepare, reviewer="alice", drive=drive))

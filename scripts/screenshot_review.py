"""Save a screenshot of the review page to ``docs/review-page.png`` (for the README).

Not a test. Copies ``examples/toy_dataset`` to a temporary directory, records its
verdicts (``examples/toy_dataset_verdicts.json``), writes two judge labels that dispute
them, starts the review server on a free loopback port and photographs the page with
Debian's Chromium (``apt-get install chromium``) driven by Playwright's Python package
(never its own browser download)::

    .venv/bin/python scripts/screenshot_review.py [--out docs/review-page.png]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "examples" / "toy_dataset"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "review-page.png")
    parser.add_argument("--width", type=int, default=1440)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} not found: apt-get install -y chromium chromium-driver", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    from strands_robots.web.server import BackgroundServer

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "toy_dataset"
        shutil.copytree(TOY, root)
        prepare(root)
        with BackgroundServer(root, reviewer="alice") as server, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": args.width, "height": args.height}, device_scale_factor=1)
            page.goto(server.url("/review#episode=2"))
            page.wait_for_selector("#cameras img")
            page.fill("#frame-slider", "72")
            page.wait_for_function(
                "() => [...document.querySelectorAll('#cameras img')].every(i => i.complete && i.naturalWidth > 0)"
            )
            page.keyboard.press("/")
            page.keyboard.type("Bottle lifted ~5 cm at frame 72; the predicate missed it.")
            page.keyboard.press("Escape")
            page.select_option("#quality", "medium")
            page.locator("#quality").blur()
            page.wait_for_timeout(300)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

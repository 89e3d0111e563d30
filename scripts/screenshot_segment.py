"""Save a screenshot of the segment page to ``docs/segment-page.png`` (for the docs).

Not a test. Copies ``examples/toy_dataset`` to a temporary directory, saves a reference
segmentation of episode 0 (so the label pool and the reference panel have content),
starts the label server on a free loopback port and, with Debian's Chromium
(``apt-get install chromium``) driven by Playwright's Python package (never its own
browser download), segments episode 1 half-way by keyboard before taking the picture::

    .venv/bin/python scripts/screenshot_segment.py [--out docs/segment-page.png]
"""

from __future__ import annotations

import argparse
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
IMAGES_LOADED = "() => [...document.querySelectorAll('#cameras img')].every(i => i.complete && i.naturalWidth > 0)"


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "segment-page.png")
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
        with BackgroundServer(root, reviewer="ana") as server, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": args.width, "height": args.height}, device_scale_factor=1)
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
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

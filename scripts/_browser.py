"""Debian's Chromium under Playwright, for the screenshot scripts and ``tests/web``.

Playwright's Python package drives the system browser ``/usr/bin/chromium``
(``apt-get install -y chromium chromium-driver``), never its own download.
``scripts/screenshot_review.py`` and ``scripts/screenshot_segment.py`` photograph a page of
the label server with :func:`screenshot`; the browser fixtures of ``tests/web/conftest.py``
start the same browser with :func:`launch`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

#: JavaScript predicate for ``page.wait_for_function``: every camera frame shown has loaded.
IMAGES_LOADED = (
    "() => { const i = [...document.querySelectorAll('#cameras img')]; "
    "return i.length > 0 && i.every(x => x.complete && x.naturalWidth > 0); }"
)


def launch(playwright: Any) -> Any:
    """A headless ``/usr/bin/chromium`` from a started ``sync_playwright()`` (a Playwright ``Browser``)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)


def screenshot(
    doc: str,
    name: str,
    *,
    prepare: Callable[[Path], None],
    reviewer: str,
    drive: Callable[[Any, Any], None],
) -> int:
    """Photograph one page of the label server on a labelled copy of ``examples/toy_dataset``.

    Parses ``--out`` (default ``docs/NAME``), ``--width`` and ``--height`` (CSS pixels,
    default 1440 x 900, device scale 1), copies the toy dataset to a temporary directory,
    calls ``prepare(root)`` on the copy, serves it on a free loopback port and calls
    ``drive(page, server)`` before the picture.

    Args:
        doc: The calling script's docstring; its first line describes ``--help``.
        name: File name of the PNG under ``docs/``.
        prepare: Writes the labels the picture shows into the copy.
        reviewer: The server's default reviewer (and annotator) name.
        drive: Opens the page and arranges it (a Playwright ``Page``, a ``BackgroundServer``).

    Returns:
        The exit status: 0 once the PNG is written, 1 when Chromium is not installed.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / name)
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
        with BackgroundServer(root, reviewer=reviewer) as server, sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": args.width, "height": args.height}, device_scale_factor=1)
            drive(page, server)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
    print(f"wrote {args.out}")
    return 0

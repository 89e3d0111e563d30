"""Fixtures of the review page and report tests: labelled copies of real datasets.

``labelled_toy``: ``examples/toy_dataset`` (3 episodes x 90 frames, one AV1 camera,
v3.0 shared mp4) with the verdicts of ``examples/toy_dataset_verdicts.json`` (0 and 1
succeed, 2 fails) and judge labels:

==========  =======  =======  ========  ============  =========
episode     verdict  opinion  quality   failure_mode  dispute
==========  =======  =======  ========  ============  =========
0           success  success  high      —             no
1           success  failure  medium    near_miss     open
2           failure  success  low       incomplete    open
==========  =======  =======  ========  ============  =========

``labelled_no_video``: the shared ``so101-record-test-v30`` (4 episodes, two cameras
whose mp4 files are not in the copy), every verdict success and the judge disputing
episode 1.

Shared by the test modules of this package: the Starlette ``TestClient`` of a dataset
(:func:`client_for`, with :data:`TOKEN` and the :data:`WRITE` headers a page's POST
carries), a CLI command serving until interrupted (:func:`cli_server`) and, for the tests
marked ``browser``, Debian's ``/usr/bin/chromium`` under Playwright (``browser`` and
``page`` fixtures, launched by ``scripts/_browser.py``; skipped when it is absent).
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from scripts._browser import CHROMIUM, launch
from strands_robots import episode_labels as el
from strands_robots.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
TOY_VERDICTS = REPO / "examples" / "toy_dataset_verdicts.json"
JUDGE = "test-judge"

BASE = "http://127.0.0.1:8765"
TOKEN = "test-token-0123456789"
#: Headers of a write from the page: its origin and the per-run token.
WRITE = {"origin": BASE, "x-labels-token": TOKEN}


def client_for(root: Path, **options) -> TestClient:
    """A ``TestClient`` of the label server on ``root`` as if bound to :data:`BASE` with :data:`TOKEN`."""
    app = create_app(root, host="127.0.0.1", port=8765, token=TOKEN, reviewer="tester", **options)
    return TestClient(app, base_url=BASE)


@dataclass(frozen=True)
class CliServer:
    """A ``strands-labels`` command serving a page: its process, address, page HTML and token."""

    process: subprocess.Popen
    base: str
    html: str
    token: str

    def post(self, path: str, body: object) -> httpx.Response:
        """POST ``body`` as JSON the way the page does (this origin, the token)."""
        headers = {"origin": self.base, "x-labels-token": self.token}
        return httpx.post(f"{self.base}{path}", json=body, headers=headers, timeout=30)


@contextlib.contextmanager
def cli_server(args: list[str], announced: str, page: str, host: str = "127.0.0.1") -> Iterator[CliServer]:
    """Run ``strands-labels ARGS`` until the block ends, then interrupt it (SIGINT) and expect exit 0.

    Args:
        args: The command line after ``strands-labels``.
        announced: Pattern the first line of stdout must match; group 1 is the port.
        page: Path of the page fetched (status 200) for its HTML and token.
        host: Host part of the URL the page is fetched at (``[::1]`` for IPv6).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "strands_robots.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        match = re.search(announced, line)
        assert match, line + process.stderr.read()
        base = f"http://{host}:{match.group(1)}"
        html = httpx.get(f"{base}{page}", timeout=30)
        assert html.status_code == 200
        token = re.search(r'name="labels-token" content="([^"]+)"', html.text).group(1)
        yield CliServer(process, base, html.text, token)
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


@pytest.fixture(scope="module")
def browser():
    """Headless ``/usr/bin/chromium`` for one test module (skips when it or playwright is missing)."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra's playwright package is missing")
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh 1440 x 900 page (own context) with a 15 s default timeout."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def labelled_toy(toy_dataset: Path) -> Path:
    el.record_deterministic_verdicts(toy_dataset, json.loads(TOY_VERDICTS.read_text()), benchmark="toy")
    el.annotate_episode(toy_dataset, 0, quality="high", success_opinion=True, model=JUDGE)
    el.annotate_episode(
        toy_dataset,
        1,
        quality="medium",
        failure_mode="near_miss",
        success_opinion=False,
        note="the fingers close late",
        model=JUDGE,
    )
    el.annotate_episode(
        toy_dataset,
        2,
        quality="low",
        failure_mode="incomplete",
        success_opinion=True,
        note="the bottle is lifted",
        model=JUDGE,
    )
    return toy_dataset


@pytest.fixture
def labelled_no_video(shared_dataset, copy_dataset) -> Path:
    root = copy_dataset(shared_dataset("so101-record-test-v30"))
    assert not list(root.glob("videos/**/*.mp4")), "this fixture needs a dataset without its videos"
    el.record_deterministic_verdicts(root, [{"episode": e, "success": True} for e in range(4)])
    el.annotate_episode(root, 1, quality="low", failure_mode="collision", success_opinion=False, model=JUDGE)
    return root

"""The review page in a real headless Chromium (Debian's ``/usr/bin/chromium``; docs/review.md, "Tests").

The server runs in a thread on a free loopback port; Playwright's Python package drives
the system browser (never its own download; the ``browser`` and ``page`` fixtures of
``conftest.py``). Skipped when ``/usr/bin/chromium`` is absent
(``apt-get install -y chromium chromium-driver``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scripts._browser import IMAGES_LOADED

pytestmark = pytest.mark.browser  # the browser and page fixtures of conftest.py skip without chromium


@pytest.fixture
def server(labelled_toy):
    from strands_robots.web.server import BackgroundServer

    with BackgroundServer(labelled_toy, reviewer="alice") as running:
        yield running


def labels(root: Path) -> dict:
    return json.loads((root / "episode_labels.json").read_text())["episodes"]


def test_resolve_disputes_by_keyboard(page, server, labelled_toy):
    page.goto(server.url("/review"))
    page.wait_for_function("() => document.querySelectorAll('#dispute-list li').length === 2")
    assert page.inner_text("#dispute-count") == "2"

    # open the first dispute from the queue and see its frames
    page.click("#dispute-list li:first-child a")
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")
    page.wait_for_function(IMAGES_LOADED)
    assert page.inner_text("#verdict-body").startswith("success")
    assert page.inner_text("#judge-body").startswith("failure")
    assert page.inner_text("#judge-note") == "the fingers close late"

    # scrub: keyboard steps, then the slider to the last frame of the episode
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.getElementById('frame-label').textContent.startsWith('frame 3 / 89')")
    page.fill("#frame-slider", "89")
    page.wait_for_function("() => document.querySelector('#cameras img').src.endsWith('/episodes/1/frames/0/89.jpg')")
    page.wait_for_function(IMAGES_LOADED)
    drawn = page.evaluate(
        "() => { const c = document.getElementById('state-plot');"
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"
    )
    assert drawn > 2000  # the state plot has lines, not a blank canvas
    page.locator("#frame-slider").blur()

    # note with "/", grade with "3", uphold with "U": the page advances to the next dispute
    page.keyboard.press("/")
    page.keyboard.type("grasp holds; the judge misread the lift")
    page.keyboard.press("Escape")
    page.keyboard.press("3")
    page.keyboard.press("u")
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '2'")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('verdict upheld')")
    review = labels(labelled_toy)["1"]["review"]
    assert review["decision"] == "uphold_verdict"
    assert review["note"] == "grasp holds; the judge misread the lift"
    assert review["quality"] == "high" and review["reviewer"] == "alice"
    assert page.inner_text("#dispute-count") == "1"

    # overrule the last dispute: nothing left to advance to
    page.wait_for_function(IMAGES_LOADED)
    page.keyboard.press("o")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('No open disputes left')")
    assert labels(labelled_toy)["2"]["review"]["decision"] == "overrule_verdict"
    assert page.is_visible("#dispute-empty")

    # K goes back through the queue
    page.keyboard.press("k")
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")


def test_a_re_judge_after_the_page_loaded_is_refused_and_the_episode_reloaded(page, server, labelled_toy):
    from strands_robots import episode_labels as el

    page.goto(server.url("/review#episode=1"))
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")
    page.wait_for_function("() => document.getElementById('judge-note').textContent === 'the fingers close late'")
    # another process re-judges episode 1 while the page shows the old label
    el.annotate_episode(labelled_toy, 1, quality="high", success_opinion=False, note="re-judged", keep_history=True)
    el.flush(labelled_toy)
    page.keyboard.press("/")
    page.keyboard.type("kept across the reload")
    page.keyboard.press("Escape")
    page.keyboard.press("u")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('episode was reloaded')")
    assert "judge label changed since the page showed it" in page.inner_text("#status")
    assert "review" not in labels(labelled_toy)["1"]
    page.wait_for_function("() => document.getElementById('judge-note').textContent === 're-judged'")
    assert page.input_value("#note") == "kept across the reload"
    # deciding again on what is shown now is saved
    page.keyboard.press("u")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('verdict upheld')")
    assert labels(labelled_toy)["1"]["review"]["note"] == "kept across the reload"


class _EvilSite(BaseHTTPRequestHandler):
    """Another origin (another port) whose page tries to write to the review server."""

    target = ""

    def do_GET(self):  # noqa: N802 - http.server's naming
        body = f"""<!doctype html><html><body>
<form id="f" method="POST" action="{self.target}" enctype="text/plain">
<input name='{{"decision":"overrule_verdict","reviewer":"mallory","x":"' value='"}}'></form>
</body></html>""".encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_cross_origin_and_tokenless_posts_change_nothing(page, server, labelled_toy):
    target = server.url("/api/episodes/1/review")
    before = (labelled_toy / "episode_labels.json").read_bytes()
    handler = type("Evil", (_EvilSite,), {"target": target})
    evil = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=evil.serve_forever, daemon=True)
    thread.start()
    try:
        page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        # a fetch with the token header needs a CORS preflight, which is refused: the write never happens
        outcome = page.evaluate(
            """async (url) => {
                try {
                    const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json",
                        "X-Labels-Token": "guess"}, body: JSON.stringify({decision: "overrule_verdict"})});
                    return r.status;
                } catch (e) { return "blocked"; }
            }""",
            target,
        )
        assert outcome == "blocked"
        # a plain cross-site form POST reaches the server and is refused
        with page.expect_navigation() as navigation:
            page.evaluate("() => document.getElementById('f').submit()")
        response = navigation.value
        assert response.status == 403
        assert "cross-origin write refused" in response.text()
    finally:
        evil.shutdown()

    # same origin but without the token: refused too
    page.goto(server.url("/review"))
    status = page.evaluate(
        """async (url) => (await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"},
            body: JSON.stringify({decision: "overrule_verdict"})})).status""",
        target,
    )
    assert status == 403
    assert (labelled_toy / "episode_labels.json").read_bytes() == before


def test_dataset_without_video_shows_plot(page, labelled_no_video):
    from strands_robots.web.server import BackgroundServer

    with BackgroundServer(labelled_no_video) as running:
        page.goto(running.url("/review"))
        page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")
        page.wait_for_selector(".camera .missing")
        assert page.locator(".camera .missing").count() == 2
        assert "Video missing" in page.inner_text(".camera .missing >> nth=0")
        assert page.is_visible("#state-plot")
        assert page.locator("#legend button").count() == 6

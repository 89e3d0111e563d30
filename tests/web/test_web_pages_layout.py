"""The review and segment pages in headless Chromium at narrow widths, the channel-group
picker, real-time playback with a speed control, the key legend, the report's loading
text and the segment page's template-set, Enter and unsaved-work behaviour.

Debian's ``/usr/bin/chromium`` under Playwright (the ``browser`` fixture of conftest.py);
skipped without it.
"""

from __future__ import annotations

import time

import pytest

from scripts._browser import IMAGES_LOADED

pytestmark = pytest.mark.browser


@pytest.fixture
def server(labelled_toy):
    from strands_robots.web.server import BackgroundServer

    with BackgroundServer(labelled_toy, reviewer="alice") as running:
        yield running


def page_at(browser, width: int, height: int = 800):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(20_000)
    return context, page


LAYOUT = """() => {
  const box = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    const r = e.getBoundingClientRect(); return {w: r.width, h: r.height, top: r.top + scrollY, bottom: r.bottom + scrollY,
    left: r.left, right: r.right}; };
  const img = document.querySelector('#cameras img');
  const frame = img && img.closest('.frame');
  return {
    header: box('.topbar'), main: box('main'), episode: box('#episode-view'), img: box('#cameras img'),
    frame: frame && (() => { const r = frame.getBoundingClientRect(); return {left: r.left, right: r.right, w: r.width}; })(),
    plot: box('#state-plot'), side: box('.decision'), queue: box('.queue'),
    scrollWidth: document.documentElement.scrollWidth, innerWidth: innerWidth,
    natural: img ? [img.naturalWidth, img.naturalHeight] : null,
  };
}"""


@pytest.mark.parametrize("width", [360, 600, 900, 1440])
@pytest.mark.parametrize("path", ["/review#episode=1", "/segment#episode=1"])
def test_pages_work_from_360_px(browser, server, width, path):
    context, page = page_at(browser, width)
    try:
        page.goto(server.url(path))
        page.wait_for_function("() => document.getElementById('ep-index').textContent === '1'")
        page.wait_for_function(IMAGES_LOADED)
        m = page.evaluate(LAYOUT)
        assert m["scrollWidth"] <= m["innerWidth"] + 1, m  # nothing sticks out sideways
        assert m["header"]["bottom"] <= m["main"]["top"] + 1, m  # the header never overlaps the page
        for part in ("episode", "img", "side", "queue"):
            assert m[part]["w"] >= min(200, width - 60), (part, m)  # no column collapses
        if "review" in path:
            assert m["plot"]["w"] >= min(200, width - 60), m
        # the whole camera image is shown: inside its tile and the window, aspect ratio kept
        assert m["frame"]["left"] - 1 <= m["img"]["left"] and m["img"]["right"] <= m["frame"]["right"] + 1, m
        assert m["img"]["right"] <= width + 1, m
        assert m["img"]["h"] > 60, m
    finally:
        context.close()


def test_channel_groups_by_prefix_with_action_beside_state(page, server):
    page.goto(server.url("/review#episode=1"))
    page.wait_for_function("() => document.querySelectorAll('#channel-groups button').length > 0")
    labels = page.eval_on_selector_all("#channel-groups button", "bs => bs.map(b => b.firstChild.textContent)")
    assert labels == [
        "state · kLeft Shoulder/Elbow/Wrist",
        "state · kRight Shoulder/Elbow/Wrist",
        "state · kLeftHand Pinky/Ring/Middle/…",
        "state · kRightHand Pinky/Ring/Middle/…",
        "action · kLeft Shoulder/Elbow/Wrist",
        "action · kRight Shoulder/Elbow/Wrist",
        "action · kLeftHand Pinky/Ring/Middle/…",
        "action · kRightHand Pinky/Ring/Middle/…",
    ]
    chips = "() => [...document.querySelectorAll('#legend button')].map(b => b.children[1].textContent)"
    # 26 channels: only the first group is drawn at first, its 7 channels listed (no hidden scroll box)
    assert page.evaluate(chips) == [
        "kLeftShoulderPitch",
        "kLeftShoulderRoll",
        "kLeftShoulderYaw",
        "kLeftElbow",
        "kLeftWristRoll",
        "kLeftWristPitch",
        "kLeftWristYaw",
    ]
    assert page.evaluate("() => getComputedStyle(document.getElementById('legend')).overflowY") == "visible"
    page.click("#channel-groups button:has-text('action · kLeftHand')")
    page.wait_for_function("() => document.querySelectorAll('#legend button').length === 13")
    # the choice stays when another episode opens
    page.keyboard.press("n")
    page.wait_for_function("() => document.getElementById('ep-index').textContent !== '1'")
    page.wait_for_function("() => document.querySelectorAll('#legend button').length === 13")
    pressed = page.eval_on_selector_all("#channel-groups button.on", "bs => bs.map(b => b.firstChild.textContent)")
    assert pressed == ["state · kLeft Shoulder/Elbow/Wrist", "action · kLeftHand Pinky/Ring/Middle/…"]


def _play_through(page, speed: str) -> float:
    page.select_option("#speed", speed)
    page.keyboard.press("Home")
    page.wait_for_function(IMAGES_LOADED)
    start = time.monotonic()
    page.keyboard.press(" ")
    page.wait_for_function("() => document.getElementById('play').getAttribute('aria-label') === 'pause'")
    page.wait_for_function(
        "() => document.getElementById('play').getAttribute('aria-label') === 'play'", timeout=30_000
    )
    elapsed = time.monotonic() - start
    assert page.input_value("#frame-slider") == "89"
    return elapsed


def test_playback_follows_the_clock_and_the_speed(page, server):
    page.goto(server.url("/review#episode=0"))
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '0'")
    page.wait_for_function(IMAGES_LOADED)
    # 90 frames at 30 fps are 3 s: never faster than real time at 1x, about 4x faster at 4x
    normal = _play_through(page, "1")
    assert normal >= 2.9, normal
    fast = _play_through(page, "4")
    assert fast < normal * 0.6, (fast, normal)
    # the speed is kept for the next page load
    page.reload()
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '0'")
    assert page.input_value("#speed") == "4"


def test_letter_o_and_digit_zero_look_different_in_the_legend(page, server):
    page.goto(server.url("/review#episode=1"))
    page.wait_for_selector(".shortcuts kbd.digit")
    after = page.evaluate(
        "() => ['letter', 'digit'].map(c => getComputedStyle(document.querySelector('.shortcuts kbd.' + c),"
        " '::after').content)"
    )
    assert after == ['" letter"', '" zero"']
    assert page.inner_text(".shortcuts kbd.letter").startswith("O")
    assert page.inner_text(".shortcuts kbd.digit").startswith("0")


def test_report_tab_says_it_is_drawing(page, server):
    held = []

    def hold(route):  # the plot stays "being drawn" until the test lets it through
        held.append(route)

    page.route("**/plots/quality_by_verdict.png", hold)
    page.goto(server.url("/report"), wait_until="domcontentloaded")
    status = page.locator("figure:has(img[src='/plots/quality_by_verdict.png']) .plot-status")
    while not held:
        page.wait_for_timeout(50)
    assert status.is_visible() and "Drawing" in status.inner_text()
    assert page.locator("img[src='/plots/quality_by_verdict.png']").is_hidden()
    held[0].continue_()
    page.wait_for_function("() => document.querySelectorAll('figure.loading').length === 0", timeout=60_000)
    assert not status.is_visible()
    assert page.evaluate("() => [...document.querySelectorAll('.plot img')].every(i => i.naturalWidth > 0)")


def test_segment_page_keeps_the_template_set_enter_leaves_fields_and_warns_before_closing(page, server):
    page.goto(server.url("/segment#episode=0"))
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '0'")
    page.select_option("#cohort", "agibot")
    page.wait_for_function("() => document.getElementById('ep-badges').textContent.includes('templates: agibot')")
    # Enter leaves a text field (the annotator name), so the next key is a shortcut again
    page.click("#annotator")
    page.keyboard.type("bob")
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") != "annotator"
    # nothing edited: closing the tab asks nothing; after a split it asks
    leave = "() => { const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); return e.defaultPrevented; }"
    assert page.evaluate(leave) is False
    page.keyboard.press("ArrowRight")
    page.keyboard.press("b")
    page.wait_for_function("() => document.getElementById('segment-count').textContent === '2'")
    assert page.evaluate(leave) is True
    page.keyboard.press("z")
    page.wait_for_function("() => document.getElementById('segment-count').textContent === '1'")
    # the chosen set stays for the next episode and after a reload
    page.goto(server.url("/segment#episode=2"))
    page.wait_for_function("() => document.getElementById('ep-index').textContent === '2'")
    assert page.input_value("#cohort") == "agibot"
    assert "templates: agibot" in page.inner_text("#ep-badges")

"""The segment page opens with the dataset's own template set, else ``generic``, remembers
the choice per dataset, and groups its state lane as the review page does
(docs/segments.md, "The segment page")."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from strands_robots.segments import save_segmentation
from tests.web.conftest import client_for


def page_config(client) -> dict:
    html = client.get("/segment").text
    return json.loads(re.search(r'<script type="application/json" id="page-config">(.*?)</script>', html, re.S)[1])


def test_a_dataset_without_segments_opens_with_generic(toy_dataset):
    client = client_for(toy_dataset)
    assert page_config(client)["default_cohort"] == "generic"
    assert client.get("/api/segment/episodes/1").json()["cohort"] == "generic"


def test_a_dataset_opens_with_the_set_its_segments_use(toy_dataset):
    save_segmentation(toy_dataset, 0, [{"start": 0, "end": 40, "label": "Pick"}, {"start": 40, "end": 90,
                      "label": "Place"}], annotator="ana")  # fmt: skip
    client = client_for(toy_dataset)
    assert page_config(client)["default_cohort"] == "agibot"
    assert client.get("/api/segment/episodes/1").json()["cohort"] == "agibot"
    assert client.get("/api/segment/episodes/1?cohort=generic").json()["cohort"] == "generic"  # asked for


def wait_episode(page, episode: int) -> None:
    page.wait_for_function(f"() => document.getElementById('ep-index').textContent === '{episode}'")


@pytest.mark.browser
def test_the_set_is_remembered_per_dataset(page, toy_dataset, tmp_path):
    from strands_robots.web.server import BackgroundServer

    with BackgroundServer(toy_dataset, reviewer="ana") as server:
        page.goto(server.url("/segment"))
        wait_episode(page, 0)
        assert page.input_value("#cohort") == "generic"
        page.select_option("#cohort", "allex")
        page.wait_for_function("() => document.getElementById('ep-badges').textContent.includes('templates: allex')")
        page.reload()
        wait_episode(page, 0)
        assert page.input_value("#cohort") == "allex"
    second = tmp_path / "second_dataset"
    shutil.copytree(toy_dataset, second)
    with BackgroundServer(second, reviewer="ana") as server:
        page.goto(server.url("/segment"))
        wait_episode(page, 0)
        assert page.input_value("#cohort") == "generic"  # another dataset: its own default


@pytest.mark.browser
def test_g1_state_lane_draws_chosen_groups_not_26_channels(page, shared_dataset, tmp_path):
    from strands_robots.web.server import BackgroundServer

    root = shared_dataset("g1-inspire-v21")
    labels = tmp_path / "labels"
    labels.mkdir()
    with BackgroundServer(root, labels_dir=labels, reviewer="ana") as server:
        page.goto(server.url("/segment#episode=1"))
        wait_episode(page, 1)
        page.wait_for_function("() => document.querySelectorAll('#strip-groups button').length > 1")
        chips = page.eval_on_selector_all(
            "#strip-groups button", "els => els.map(e => [e.firstChild.textContent, e.getAttribute('aria-pressed')])"
        )
        on = [label for label, pressed in chips if pressed == "true"]
        assert len(on) == 1, chips  # 26 channels: the first group only, as on the review page
        drawn = int(page.get_attribute("#tl-strip", "data-channels"))
        assert 0 < drawn <= 8
        page.locator("#strip-groups button").nth(1).click()
        page.wait_for_function(f"() => Number(document.getElementById('tl-strip').dataset.channels) > {drawn}")
        # the review page shows the groups chosen here (one choice per dataset)
        page.goto(server.url("/review#episode=1"))
        page.wait_for_function("() => document.querySelectorAll('#channel-groups button').length > 1")
        pressed = page.eval_on_selector_all(
            "#channel-groups button[aria-pressed='true']", "els => els.map(e => e.firstChild.textContent)"
        )
        assert len(pressed) == 2 and on[0] in pressed

"""``strands-labels review``: the command serves the page until interrupted (docs/review.md, "The review page")."""

from __future__ import annotations

import json
import subprocess
import sys

from strands_robots import episode_labels as el
from tests.web.conftest import cli_server


def test_review_command_serves_and_flushes(labelled_toy):
    args = ["review", str(labelled_toy), "--port", "0", "--reviewer", "cli"]
    with cli_server(args, r"http://127\.0\.0\.1:(\d+)/review", "/review") as served:
        assert '"reviewer":"cli"' in served.html.replace(" ", "")
        response = served.post("/api/episodes/2/review", {"decision": "overrule_verdict", "note": "from the cli test"})
        assert response.status_code == 200, response.text
    review = json.loads((labelled_toy / "episode_labels.json").read_text())["episodes"]["2"]["review"]
    assert review["decision"] == "overrule_verdict" and review["reviewer"] == "cli"
    assert [d["episode"] for d in el.list_disputes(labelled_toy)] == [1]


def test_review_command_refuses_wildcard_address(labelled_toy):
    done = subprocess.run(
        [sys.executable, "-m", "strands_robots.cli.main", "review", str(labelled_toy), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "refusing to listen on every interface" in done.stderr

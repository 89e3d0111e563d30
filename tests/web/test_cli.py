"""``strands-labels review``: the command serves the page until interrupted (issue 6, CLI)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import httpx

from strands_robots import episode_labels as el


def test_review_command_serves_and_flushes(labelled_toy):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "strands_robots.cli.main",
            "review",
            str(labelled_toy),
            "--port",
            "0",
            "--reviewer",
            "cli",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/review", line)
        assert match, line + process.stderr.read()
        base = f"http://127.0.0.1:{match.group(1)}"
        page = httpx.get(f"{base}/review", timeout=30)
        assert page.status_code == 200
        token = re.search(r'name="labels-token" content="([^"]+)"', page.text).group(1)
        assert '"reviewer":"cli"' in page.text.replace(" ", "")
        response = httpx.post(
            f"{base}/api/episodes/2/review",
            json={"decision": "overrule_verdict", "note": "from the cli test"},
            headers={"origin": base, "x-labels-token": token},
            timeout=30,
        )
        assert response.status_code == 200, response.text
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
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

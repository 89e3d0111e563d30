"""``strands-labels review``: the command serves the page until interrupted (docs/review.md, "The review page")."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import httpx
import pytest
from typer.testing import CliRunner

from strands_robots import episode_labels as el
from strands_robots.cli.main import app
from strands_robots.web.server import ServerAddressError
from tests.web.conftest import cli_server


def test_review_command_serves_and_flushes(labelled_toy):
    args = ["review", str(labelled_toy), "--port", "0", "--reviewer", "cli"]
    with cli_server(args, r"http://127\.0\.0\.1:(\d+)/review", "/review") as served:
        assert '"reviewer":"cli"' in served.html.replace(" ", "")
        stamps = httpx.get(f"{served.base}/api/episodes/2", timeout=30).json()["stamps"]
        body = {"decision": "overrule_verdict", "note": "from the cli test", **stamps}
        response = served.post("/api/episodes/2/review", body)
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


@pytest.mark.parametrize("command", ["review", "segment"])
@pytest.mark.parametrize("host", ["0", "[::]", "::0", "0:0:0:0:0:0:0:0", "192.0.2.7"])
def test_both_pages_refuse_every_interface_and_remote_addresses(labelled_toy, command, host):
    result = CliRunner().invoke(app, [command, str(labelled_toy), "--host", host, "--port", "0"])
    assert isinstance(result.exception, ServerAddressError), result.output  # `strands-labels` exits 2 on it
    expected = "--allow-remote" if host == "192.0.2.7" else "refusing to listen on every interface"
    assert expected in str(result.exception)
    if host != "192.0.2.7":
        result = CliRunner().invoke(app, [command, str(labelled_toy), "--host", host, "--allow-remote"])
        assert isinstance(result.exception, ServerAddressError) and "every interface" in str(result.exception)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
@pytest.mark.parametrize("typed", ["::1", "[::1]"])
def test_an_ipv6_page_prints_a_well_formed_url(labelled_toy, typed):
    args = ["segment", str(labelled_toy), "--host", typed, "--port", "0"]
    with cli_server(args, r"^segment page: http://\[::1\]:(\d+)/segment  ", "/segment", host="[::1]") as served:
        assert served.base.startswith("http://[::1]:")
        assert httpx.get(served.base + "/review", headers={"host": "0:1"}, timeout=30).status_code == 403


def test_a_request_naming_the_wildcard_host_gets_no_page(labelled_toy):
    args = ["review", str(labelled_toy), "--port", "0"]
    with cli_server(args, r"http://127\.0\.0\.1:(\d+)/review", "/review") as served:
        port = served.base.rsplit(":", 1)[1]
        for host in (f"0:{port}", f"0.0.0.0:{port}", f"[::]:{port}"):
            response = httpx.get(served.base + "/review", headers={"host": host}, timeout=30)
            assert response.status_code == 403 and served.token not in response.text
            write = httpx.post(
                served.base + "/api/episodes/2/review",
                headers={"host": host, "origin": f"http://{host}", "x-labels-token": served.token},
                json={"decision": "overrule_verdict", "reviewer": "x"},
                timeout=30,
            )
            assert write.status_code == 403
    assert "review" not in json.loads((labelled_toy / "episode_labels.json").read_text())["episodes"]["2"]

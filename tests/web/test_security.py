"""Host, Origin and token rules of the label server (docs/review.md, "Security")."""

from __future__ import annotations

import socket

import pytest

from strands_robots.web.security import Guard, allowed_hosts, is_loopback, new_token
from strands_robots.web.server import ServerAddressError, bind

TOKEN = "t" * 43
GOOD = {
    "host": "127.0.0.1:8765",
    "origin": "http://127.0.0.1:8765",
    "x-labels-token": TOKEN,
    "content-type": "application/json",
    "sec-fetch-site": "same-origin",
}


def guard() -> Guard:
    return Guard.for_address("127.0.0.1", 8765, TOKEN)


def test_allowed_hosts():
    assert allowed_hosts("127.0.0.1", 8765) == {"127.0.0.1:8765", "localhost:8765"}
    assert allowed_hosts("::1", 9000) == {"[::1]:9000", "localhost:9000"}
    assert allowed_hosts("192.168.1.5", 80) == {"192.168.1.5:80"}
    assert is_loopback("127.0.0.2") and is_loopback("localhost") and not is_loopback("10.0.0.1")
    assert guard().origins == {"http://127.0.0.1:8765", "http://localhost:8765"}


def test_tokens_are_random_and_long():
    tokens = {new_token() for _ in range(20)}
    assert len(tokens) == 20 and all(len(t) == 43 for t in tokens)


def test_host_check():
    assert guard().host_problem({"host": "127.0.0.1:8765"}) is None
    assert guard().host_problem({"host": "LOCALHOST:8765"}) is None
    for bad in ("evil.example:8765", "127.0.0.1:8766", "127.0.0.1", ""):
        assert "is not this server" in guard().host_problem({"host": bad})


def test_write_accepted_only_with_everything():
    assert guard().write_problem(GOOD) is None
    referer_only = {k: v for k, v in GOOD.items() if k != "origin"} | {"referer": "http://localhost:8765/review#x"}
    assert guard().write_problem(referer_only) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"origin": "http://evil.example"}, "cross-origin"),
        ({"origin": "http://127.0.0.1:8765.evil.example"}, "cross-origin"),
        ({"origin": "null"}, "cross-origin"),
        ({"origin": None}, "cross-origin"),
        ({"sec-fetch-site": "cross-site"}, "cross-site"),
        ({"sec-fetch-site": "same-site"}, "cross-site"),
        ({"x-labels-token": None}, "token"),
        ({"x-labels-token": TOKEN[:-1]}, "token"),
        ({"x-labels-token": TOKEN + "x"}, "token"),
        ({"content-type": "text/plain"}, "application/json"),
        ({"content-type": None}, "application/json"),
    ],
)
def test_write_refused(change, message):
    headers = {k: v for k, v in (GOOD | change).items() if v is not None}
    problem = guard().write_problem(headers)
    assert problem is not None and message in problem


def test_bind_refuses_wildcards_and_busy_ports():
    for host in ("0.0.0.0", "::", ""):
        with pytest.raises(ServerAddressError, match="every interface"):
            bind(host, 0)
    with pytest.raises(ServerAddressError, match="0..65535"):
        bind("127.0.0.1", 70000)
    first = bind("127.0.0.1", 0)
    try:
        port = first.getsockname()[1]
        assert first.family == socket.AF_INET
        with pytest.raises(ServerAddressError, match="another --port"):
            bind("127.0.0.1", port)
    finally:
        first.close()


EVERY_INTERFACE = ["0", "0.0.0.0", "::", "[::]", "::0", "0:0:0:0:0:0:0:0", "[0:0:0:0:0:0:0:0]", "::ffff:0.0.0.0",
                   "00", "0x0", "0.0", " 0 ", "", "*"]  # fmt: skip


@pytest.mark.parametrize("host", EVERY_INTERFACE)
@pytest.mark.parametrize("allow_remote", [False, True])
def test_every_spelling_of_every_interface_is_refused(host, allow_remote):
    with pytest.raises(ServerAddressError, match="refusing to listen on every interface"):
        bind(host, 0, allow_remote=allow_remote)


def test_only_loopback_without_allow_remote():
    from strands_robots.web.server import listen_address

    assert listen_address("127.1")[1] == "127.0.0.1"  # the address bind uses, spelled canonically
    assert listen_address("localhost")[1] in ("127.0.0.1", "::1")
    for remote in ("192.0.2.7", "10.1.2.3", "[2001:db8::1]", "::ffff:192.0.2.7"):
        with pytest.raises(ServerAddressError, match="--allow-remote"):
            listen_address(remote)
    assert listen_address("192.0.2.7", allow_remote=True) == (socket.AF_INET, "192.0.2.7")
    assert listen_address("[2001:db8::1]", allow_remote=True) == (socket.AF_INET6, "2001:db8::1")
    with pytest.raises(ServerAddressError, match="no address of this machine"):
        listen_address("no-such-host.invalid")


@pytest.mark.parametrize("host", ["0:8765", "0.0.0.0:8765", "[::]:8765", "[::0]:8765", "0", "127.1:8765"])
def test_a_host_header_naming_another_spelling_is_refused(host):
    assert guard().host_problem({"host": host}) is not None


def test_a_remote_server_wants_the_token_on_every_request(labelled_toy):
    """Bound with --allow-remote (here an address of the documentation range, never bound: the app is
    driven in process), reads need the token too: the printed URL's ?token= sets it as a cookie."""
    from starlette.testclient import TestClient

    from strands_robots.web.app import create_app
    from strands_robots.web.security import TOKEN_COOKIE
    from strands_robots.web.server import page_url

    token = "remote-token-0123456789"
    base = "http://192.0.2.7:8765"
    app = create_app(labelled_toy, host="192.0.2.7", port=8765, token=token)
    assert app.state.ctx.guard.remote
    assert page_url("192.0.2.7", 8765, "/review", token) == f"{base}/review?token={token}"
    with TestClient(app, base_url=base, follow_redirects=False) as client:
        for path in ("/review", "/api/queue", "/static/style.css", "/review?token=wrong"):
            refused = client.get(path)
            assert refused.status_code == 403 and token not in refused.text
            assert "open the URL it printed" in refused.json()["error"]
        entered = client.get(f"/review?token={token}")
        assert entered.status_code == 303 and entered.headers["location"] == "/review"
        assert f"{TOKEN_COOKIE}={token}" in entered.headers["set-cookie"]
        assert "HttpOnly" in entered.headers["set-cookie"] and "SameSite=Strict" in entered.headers["set-cookie"]
        assert client.get("/review").status_code == 200  # the client keeps the cookie
        assert client.get("/api/queue").status_code == 200
        stamps = client.get("/api/episodes/2").json()["stamps"]  # what the page shows and sends back
        write = client.post(
            "/api/episodes/2/review",
            json={"decision": "overrule_verdict", "reviewer": "remote", **stamps},
            headers={"origin": base, "x-labels-token": token},
        )
        assert write.status_code == 200, write.text
    with TestClient(app, base_url=base) as stranger:  # no cookie: not even a read
        assert stranger.get("/api/episodes/2").status_code == 403


def test_a_loopback_server_needs_no_token_to_read(labelled_toy):
    from starlette.testclient import TestClient

    from strands_robots.web.app import create_app

    app = create_app(labelled_toy, host="127.0.0.1", port=8765, token="t" * 30)
    assert not app.state.ctx.guard.remote
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/review").status_code == 200

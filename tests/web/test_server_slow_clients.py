"""Slow and silent clients against a real server on 127.0.0.1 (docs/review.md, "Security"):
half-open connections are answered 408 and closed once ``request_timeout`` has passed,
connections beyond ``max_connections`` are closed at once, and the page keeps answering."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from strands_robots.web.server import BackgroundServer, ServerLimits

LIMITS = ServerLimits(request_timeout=1.0, keep_alive=1, max_connections=48)
#: The bound within which every slow connection must be closed (the timeout plus scheduling slack).
BOUND_S = LIMITS.request_timeout + 4.0


def _open(port: int, payload: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S + 5)
    if payload:
        sock.sendall(payload)
    return sock


def _closed_within(sock: socket.socket, deadline: float) -> bytes | None:
    """What the server sent before closing, or None when it was still open at ``deadline``."""
    received = b""
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            return None
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    return None


@pytest.fixture
def server(labelled_toy):
    with BackgroundServer(labelled_toy, reviewer="slow", limits=LIMITS) as running:
        yield running


def test_half_open_and_slow_requests_are_closed_within_the_bound(server):
    port = server.port
    host = f"127.0.0.1:{port}".encode()
    token = server.app.state.ctx.guard.token.encode()
    slow = [
        b"",  # connected, never a byte
        b"GET /review HTTP/1.1\r\n",  # a request line, headers never end
        b"GET /review HTTP/1.1\r\nHost: " + host + b"\r\nX-Slow: a",  # a header trickling in
        b"POST /api/episodes/0/review HTTP/1.1\r\nHost: " + host + b"\r\nOrigin: http://" + host + b"\r\n"
        b"X-Labels-Token: " + token + b"\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n{",  # a guarded write whose body never completes
    ]
    started = time.monotonic()
    sockets = [_open(port, slow[i % len(slow)]) for i in range(40)]
    try:
        outcomes = [_closed_within(sock, started + BOUND_S) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
    still_open = [i for i, outcome in enumerate(outcomes) if outcome is None]
    assert not still_open, f"{len(still_open)} of 40 slow connections still open after {BOUND_S} s"
    answered = [outcome for outcome in outcomes if outcome]
    assert answered and all(o.startswith(b"HTTP/1.1 408 ") for o in answered), {o[:60] for o in answered}
    assert httpx.get(server.url("/review"), timeout=10).status_code == 200  # the page still answers


def test_connections_beyond_the_cap_are_closed_at_once(server):
    idle = [_open(server.port, b"") for _ in range(LIMITS.max_connections)]
    try:
        extra = [_open(server.port, b"") for _ in range(8)]
        started = time.monotonic()
        outcomes = [_closed_within(sock, started + LIMITS.request_timeout / 2) for sock in extra]
        assert all(outcome == b"" for outcome in outcomes), outcomes  # closed before any timeout could fire
        for sock in extra:
            sock.close()
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + BOUND_S
    while True:  # the closed idle connections leave; the page answers again
        try:
            if httpx.get(server.url("/review"), timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the page did not answer after the idle connections closed"
        time.sleep(0.1)


def test_a_kept_alive_connection_gets_a_fresh_deadline_per_request(server):
    with httpx.Client(timeout=10) as client:
        for _ in range(3):  # each request well inside its deadline, over more than one timeout in all
            assert client.get(server.url("/api/queue")).status_code == 200
            time.sleep(LIMITS.request_timeout * 0.5)

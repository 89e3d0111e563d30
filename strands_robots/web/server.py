"""Running the label server with uvicorn: in the foreground (CLI) or in a thread (tests, scripts).

The listening socket is bound *before* the app is built, so the Host/Origin guard knows
the real port even when port 0 (any free port) was asked for.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.errors import LabelsError, clipped, quoted
from strands_robots.web.security import host_port

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


class ServerAddressError(LabelsError, OSError):
    """The server cannot listen where asked (busy port, wildcard or unknown address)."""


def listen_address(host: str, *, allow_remote: bool = False) -> tuple[socket.AddressFamily, str]:
    """The address ``host`` names, as the server will bind it: ``(family, canonical IP text)``.

    ``host`` is resolved as ``bind`` would resolve it (``getaddrinfo``: ``0`` is
    ``0.0.0.0``, ``::0`` is ``::``, ``127.1`` is ``127.0.0.1``, ``[::1]`` is ``::1``,
    ``localhost`` is its loopback address).

    Raises:
        ServerAddressError: an unspecified address in any spelling (``0``, ``0.0.0.0``,
            ``::``, ``[::]``, ``::0``, ``0:0:0:0:0:0:0:0``, ``::ffff:0.0.0.0``): the page
            would listen on every interface; an address that is not loopback unless
            ``allow_remote``; a name that does not resolve.
    """
    text = str(host).strip()
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    every = (
        f"refusing to listen on every interface ({clipped(text) or 'empty host'}); pass a concrete address "
        "(the default 127.0.0.1 keeps the page on this machine)."
    )
    if bare in ("", "*"):
        raise ServerAddressError(every)
    try:
        infos = socket.getaddrinfo(bare, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError) as exc:
        raise ServerAddressError(
            f"cannot listen on {clipped(text)}: it is no address of this machine ({exc}); pass an IP address such "
            "as 127.0.0.1."
        ) from exc
    addresses = [(family, ipaddress.ip_address(str(info[0]).split("%", 1)[0])) for family, *_, info in infos]
    for _family, address in addresses:
        mapped = getattr(address, "ipv4_mapped", None) or address
        if address.is_unspecified or mapped.is_unspecified:
            raise ServerAddressError(every)
    remote = [str(a) for _f, a in addresses if not (getattr(a, "ipv4_mapped", None) or a).is_loopback]
    if remote and not allow_remote:
        raise ServerAddressError(
            f"{clipped(text)} ({', '.join(dict.fromkeys(remote))}) is not a loopback address: anyone who can reach "
            "it could read the labels and load the page with its token. Keep the default 127.0.0.1, or pass "
            "--allow-remote (allow_remote=True) to serve it there anyway."
        )
    family, address = addresses[0]
    return family, str(address)


def bind(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, allow_remote: bool = False) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: any free port).

    Raises:
        ServerAddressError: see :func:`listen_address`; a port outside 0..65535, or the
            address is busy or not local.
    """
    family, address = listen_address(host, allow_remote=allow_remote)
    port = int_argument(
        port,
        lambda v: ServerAddressError(f"port must be 0..65535 (0 picks a free one), got {quoted(v)}."),
        minimum=0,
        maximum=65535,
    )
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ServerAddressError(
            f"cannot listen on {host_port(address, port)} ({exc.strerror or exc}); pass another --port "
            "(0 picks a free one)."
        ) from exc
    sock.set_inheritable(True)
    return sock


def page_url(address: str, port: int, page: str = "/", token: str | None = None) -> str:
    """The URL a server announces: ``http://127.0.0.1:8765/review``, ``http://[::1]:8765/review``;
    with ``token`` (a server bound with ``--allow-remote``) ``...?token=TOKEN``."""
    return f"http://{host_port(address, port)}{page}" + (f"?token={token}" if token else "")


def _listening_app(
    root: str | Path, host: str, port: int, allow_remote: bool = False, **options: Any
) -> tuple[socket.socket, Any, str, int]:
    """``(socket, app, address, port)``: ``host:port`` bound (:func:`bind`), then the app of
    ``root`` built for the address and port it got (the socket is closed when that fails)."""
    from strands_robots.web.app import create_app

    sock = bind(host, port, allow_remote=allow_remote)
    address, bound_port = str(sock.getsockname()[0]), int(sock.getsockname()[1])
    try:
        return sock, create_app(root, host=address, port=bound_port, **options), address, bound_port
    except BaseException:
        sock.close()
        raise


@dataclass(frozen=True)
class ServerLimits:
    """How long and how many connections the pages serve (docs/review.md, "Security").

    Attributes:
        request_timeout: Seconds a request (its headers and its body) may take to arrive,
            from the connection's first byte or the previous response; a slower or silent
            client is answered ``408`` and disconnected.
        keep_alive: Seconds an idle kept-alive connection stays open (uvicorn's
            ``timeout_keep_alive``).
        max_connections: Open connections at most; one more is closed at once, and a
            request while this many are open is answered ``503`` (uvicorn's
            ``limit_concurrency``).
        max_header_bytes: Largest request line and headers (h11's incomplete-event limit).
    """

    request_timeout: float = 10.0
    keep_alive: int = 5
    max_connections: int = 64
    max_header_bytes: int = 16 << 10


DEFAULT_LIMITS = ServerLimits()


def _protocol_class(limits: ServerLimits) -> type:
    """uvicorn's h11 protocol with a deadline on each request and a cap on open connections."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    body = b'{"error": "the request took too long to arrive; send it again."}'
    timeout_response = (
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(body), body)
    )

    class LimitedH11Protocol(H11Protocol):  # type: ignore[misc]
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.close()
                return
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
                self._disarm()  # the request has fully arrived (or the connection is ending)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request on this connection gets its own deadline

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(limits.request_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if self.cycle is None or not self.cycle.response_started:
                self.transport.write(timeout_response)
            self.transport.close()

    return LimitedH11Protocol


def _uvicorn_server(app: Any, limits: ServerLimits = DEFAULT_LIMITS) -> Any:
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=_protocol_class(limits),
        timeout_keep_alive=limits.keep_alive,
        limit_concurrency=limits.max_connections,
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )
    return uvicorn.Server(config)


def serve(
    root: str | Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    labels_dir: str | Path | None = None,
    reviewer: str | None = None,
    announce: Any = print,
    page: str = "/review",
    title: str = "review page",
    label_sets: Sequence[str | Path] = (),
    allow_remote: bool = False,
) -> None:
    """Serve the pages of ``root`` until interrupted (Ctrl-C).

    Args:
        root: Dataset root.
        host: Address to listen on (loopback by default; see :func:`listen_address`).
        port: Port (0: any free port).
        labels_dir: Directory of the sidecars (default ``root``).
        reviewer: Default reviewer name (default: the OS user).
        announce: Called with each line to show the user.
        page: Path of the page to point the user at (``/review``, ``/segment``).
        title: How that page is named in the announcements.
        label_sets: Label set files for the segment page (see :func:`~strands_robots.web.app.create_app`).
        allow_remote: Listen on an address that is not loopback (a warning is announced).

    Raises:
        ServerAddressError: see :func:`bind`.
        DatasetError: ``root`` is not a readable dataset.
    """
    sock, app, address, bound_port = _listening_app(
        root, host, port, allow_remote, labels_dir=labels_dir, reviewer=reviewer, label_sets=label_sets
    )
    guard = app.state.ctx.guard
    announce(f"{title}: {page_url(address, bound_port, page, guard.token if guard.remote else None)}  (Ctrl-C to stop)")
    if guard.remote:
        announce(
            f"warning: {address} is not a loopback address (--allow-remote): anyone who can reach it and has this "
            "URL (its token) can read this dataset's labels and write reviews; every request needs the token."
        )
    server = _uvicorn_server(app)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after its graceful shutdown
        pass
    finally:
        sock.close()
    announce(f"{title} stopped; labels are saved.")


class BackgroundServer:
    """The label server in a daemon thread, for tests and scripts.

    Use as a context manager::

        with BackgroundServer(root) as server:
            page.goto(server.url("/review"))

    Args:
        root: Dataset root.
        host: Loopback address to bind.
        limits: Timeouts and connection cap (:class:`ServerLimits`).
        **options: Passed to :func:`strands_robots.web.app.create_app`.

    Attributes:
        address: The bound IP address (after start; ``127.0.0.1`` for ``localhost``).
        port: The bound port (after start).
        app: The Starlette app (``app.state.ctx`` is the server context).
    """

    def __init__(
        self, root: str | Path, *, host: str = DEFAULT_HOST, limits: ServerLimits = DEFAULT_LIMITS, **options: Any
    ) -> None:
        self.root = root
        self.host = host
        self.limits = limits
        self.options = options
        self.port = 0
        self.address = host
        self.app: Any = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    def url(self, path: str = "/") -> str:
        """Absolute URL of ``path`` on this server (``http://[::1]:PORT/...`` for IPv6)."""
        return page_url(self.address, self.port, path)

    def start(self, timeout: float = 20.0) -> BackgroundServer:
        """Bind, build the app and wait until uvicorn accepts connections.

        Raises:
            RuntimeError: uvicorn did not start within ``timeout`` seconds.
        """
        self._sock, self.app, self.address, self.port = _listening_app(self.root, self.host, 0, **self.options)
        self._server = _uvicorn_server(self.app, self.limits)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True, name="labels-web"
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the label server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for the thread (runs the shutdown flush)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

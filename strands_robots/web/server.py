"""Running the label server with uvicorn: in the foreground (CLI) or in a thread (tests, scripts).

The listening socket is bound *before* the app is built, so the Host/Origin guard knows
the real port even when port 0 (any free port) was asked for.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from strands_robots.arguments import int_argument
from strands_robots.dataset.hub import accepts_repo_id
from strands_robots.errors import LabelsError, quoted
from strands_robots.web.security import is_loopback

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


class ServerAddressError(LabelsError, OSError):
    """The server cannot listen where asked (busy port, wildcard or unknown address)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def bind(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: any free port).

    Raises:
        ServerAddressError: a wildcard address (``0.0.0.0``, ``::``: the Host check
            needs one concrete address), a port outside 0..65535, or the address is
            busy or not local.
    """
    if host in ("", "0.0.0.0", "::", "*"):
        raise ServerAddressError(
            f"refusing to listen on every interface ({host or 'empty host'}); pass a concrete address "
            "(the default 127.0.0.1 keeps the page on this machine)."
        )
    port = int_argument(
        port,
        lambda v: ServerAddressError(f"port must be 0..65535 (0 picks a free one), got {quoted(v)}."),
        minimum=0,
        maximum=65535,
    )
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ServerAddressError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port (0 picks a free one)."
        ) from exc
    sock.set_inheritable(True)
    return sock


def _uvicorn_server(app: Any) -> Any:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    return uvicorn.Server(config)


@accepts_repo_id
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
) -> None:
    """Serve the pages of ``root`` until interrupted (Ctrl-C).

    Args:
        root: Dataset root.
        host: Address to listen on (loopback by default; others are announced as such).
        port: Port (0: any free port).
        labels_dir: Directory of the sidecars (default ``root``).
        reviewer: Default reviewer name (default: the OS user).
        announce: Called with each line to show the user.
        page: Path of the page to point the user at (``/review``, ``/segment``).
        title: How that page is named in the announcements.
        label_sets: Label set files for the segment page (see :func:`~strands_robots.web.app.create_app`).

    Raises:
        ServerAddressError: see :func:`bind`.
        DatasetError: ``root`` is not a readable dataset.
    """
    from strands_robots.web.app import create_app

    sock = bind(host, port)
    bound_port = sock.getsockname()[1]
    app = create_app(root, labels_dir=labels_dir, host=host, port=bound_port, reviewer=reviewer, label_sets=label_sets)
    shown = f"[{host}]" if ":" in host else host
    announce(f"{title}: http://{shown}:{bound_port}{page}  (Ctrl-C to stop)")
    if not is_loopback(host):
        announce(
            f"warning: {host} is not a loopback address; anyone who can reach it can read this dataset's labels "
            "and, with the page's token, write reviews."
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
        **options: Passed to :func:`strands_robots.web.app.create_app`.

    Attributes:
        port: The bound port (after start).
        app: The Starlette app (``app.state.ctx`` is the server context).
    """

    def __init__(self, root: str | Path, *, host: str = DEFAULT_HOST, **options: Any) -> None:
        self.root = root
        self.host = host
        self.options = options
        self.port = 0
        self.app: Any = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    def url(self, path: str = "/") -> str:
        """Absolute URL of ``path`` on this server."""
        return f"http://{self.host}:{self.port}{path}"

    def start(self, timeout: float = 20.0) -> BackgroundServer:
        """Bind, build the app and wait until uvicorn accepts connections.

        Raises:
            RuntimeError: uvicorn did not start within ``timeout`` seconds.
        """
        from strands_robots.web.app import create_app

        self._sock = bind(self.host, 0)
        self.port = self._sock.getsockname()[1]
        self.app = create_app(self.root, host=self.host, port=self.port, **self.options)
        self._server = _uvicorn_server(self.app)
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

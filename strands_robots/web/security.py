"""Request guards of the local label server: the rules of docs/review.md, "Security".

:class:`GuardMiddleware` checks the ``Host`` header of every request (DNS rebinding), the
per-run token, ``Origin``/``Referer``, ``Sec-Fetch-Site`` and the JSON content type of every
state-changing request, the token cookie of every request to a server bound with
``--allow-remote``, and adds the security headers to every response. Refusals are ``403``
JSON ``{"error": ...}`` naming the rule; nothing is written.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from strands_robots.errors import quoted

TOKEN_HEADER = "x-labels-token"
#: Cookie carrying the token on a server bound with ``--allow-remote`` (every request needs it).
TOKEN_COOKIE = "labels_token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def new_token() -> str:
    """A fresh per-run token: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (``127.0.0.0/8``, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_port(host: str, port: int) -> str:
    """``host:port`` as a URL and a ``Host`` header write it (``[::1]:8765`` for IPv6)."""
    host = host.strip("[]")
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """``Host`` header values that name this server (lower case).

    Bound to a loopback address, ``localhost:<port>`` is accepted too; otherwise only
    the bound ``host:port`` itself.
    """
    names = {host_port(host, port).lower()}
    if is_loopback(host):
        names.add(f"localhost:{port}")
    return frozenset(names)


@dataclass(frozen=True)
class Guard:
    """The checks of one server run.

    Attributes:
        token: The per-run token state-changing requests must carry.
        hosts: Accepted ``Host`` header values (lower case, with port).
        remote: Bound to an address that is not loopback (``--allow-remote``): every request,
            reads too, carries the token (:data:`TOKEN_COOKIE`, set by the printed URL's
            ``?token=``).
    """

    token: str
    hosts: frozenset[str]
    remote: bool = False

    @classmethod
    def for_address(cls, host: str, port: int, token: str | None = None) -> Guard:
        """The guard of a server bound to ``host:port`` (``remote`` when it is not loopback)."""
        return cls(token=token or new_token(), hosts=allowed_hosts(host, port), remote=not is_loopback(host))

    def token_matches(self, given: str | None) -> bool:
        """Whether ``given`` is this run's token (compared in constant time)."""
        return bool(given) and hmac.compare_digest(str(given).encode(), self.token.encode())

    @property
    def origins(self) -> frozenset[str]:
        """Accepted ``Origin`` values (``http://`` + an accepted host)."""
        return frozenset(f"http://{h}" for h in self.hosts)

    def host_problem(self, headers: Mapping[str, str]) -> str | None:
        """Why the ``Host`` header is refused, or None."""
        host = headers.get("host", "").lower()
        if host not in self.hosts:
            return (
                f"Host {quoted(host or '(none)')} is not this server ({', '.join(sorted(self.hosts))}); "
                "open the page at the address `strands-labels review` printed."
            )
        return None

    def write_problem(self, headers: Mapping[str, str]) -> str | None:
        """Why a state-changing request is refused, or None (Host checked separately)."""
        origin = headers.get("origin")
        if origin is None or origin == "null":
            referer = headers.get("referer")
            if referer:
                parts = urlsplit(referer)
                origin = f"{parts.scheme}://{parts.netloc}"
        if not origin or origin.lower() not in self.origins:
            return f"cross-origin write refused: Origin {quoted(origin or '(none)')} is not this server."
        site = headers.get("sec-fetch-site")
        if site is not None and site != "same-origin":
            return f"cross-site write refused (Sec-Fetch-Site: {site})."
        if not self.token_matches(headers.get(TOKEN_HEADER)):
            return "missing or wrong per-run token: reload the page (the token changes each time the server starts)."
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return f"writes take application/json, got {quoted(content_type or '(none)')}."
        return None


#: The headers of every response (docs/review.md, "Security").
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
_RAW_SECURITY_HEADERS = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]


class GuardMiddleware:
    """ASGI middleware applying a :class:`Guard` to every HTTP request."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        headers = request.headers  # the first of repeated headers: a second Host never wins
        problem = self.guard.host_problem(headers)
        if problem is None and self.guard.remote:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            if self.guard.token_matches((query.get("token") or [None])[0]):  # the printed URL: keep it as a cookie
                path = (scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1")
                cookie = f"{TOKEN_COOKIE}={self.guard.token}; HttpOnly; SameSite=Strict; Path=/"
                location = "/" + path.lstrip("/")  # this server's path, never //other.host; the token dropped
                entered = {"location": location, "set-cookie": cookie, "cache-control": "no-store"}
                await Response(status_code=303, headers=SECURITY_HEADERS | entered)(scope, receive, send)
                return
            if not self.guard.token_matches(request.cookies.get(TOKEN_COOKIE)):
                problem = (
                    "this server listens on an address that is not loopback: open the URL it printed "
                    "(it carries ?token=) in this browser first."
                )
        if problem is None and scope["method"].upper() not in SAFE_METHODS:
            problem = self.guard.write_problem(headers)
        if problem is not None:
            await JSONResponse({"error": problem}, 403, headers=SECURITY_HEADERS)(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_RAW_SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

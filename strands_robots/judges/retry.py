"""Which model-call failures a judge retries, and when a run stops.

One policy for every provider, the SDKs' own retries off; the rule (credentials never,
throttling/5xx/timeouts/dropped connections with backoff, three unreachable requests in a
row stop the run) is docs/judge.md, "Retries and timeouts". The classification reads the
exception and its ``__cause__`` / ``__context__`` chain by HTTP status, class name and,
for SDKs that wrap everything in one class, message.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from strands import ModelRetryStrategy
from strands.types.exceptions import ModelThrottledException

from strands_robots.errors import LabelsError

#: Refused connections / unresolved host names in a row that stop a run.
UNREACHABLE_LIMIT = 3

#: HTTP statuses worth retrying (request timeout, too early, throttled, server side).
_RETRY_STATUSES = frozenset({408, 425, 429})

#: Class-name parts (any class of the exception's MRO) of transient failures.
_TRANSIENT_NAMES = (
    "throttl",
    "timeout",
    "connecterror",
    "connectionerror",
    "apiconnection",
    "remoteprotocol",
    "protocolerror",
    "readerror",
    "writeerror",
    "networkerror",
    "transporterror",
    "serviceunavailable",
    "overloaded",
    "ratelimit",
    "internalserver",
    "toomanyrequests",
    "endpointconnection",
    "serverdisconnected",
    "modelnotready",
)

#: Class-name parts of credential failures (never retried).
_CREDENTIAL_NAMES = ("authentication", "permissiondenied", "nocredentials", "unauthorized", "credentialretrieval")

_CREDENTIAL_TEXT = re.compile(
    r"missing credentials|api[_ ]key (?:client option )?must be set|no api key|invalid api key|incorrect api key|"
    r"unable to locate credentials|invalid_api_key|security token .* invalid|unrecognizedclient",
    re.IGNORECASE,
)

#: Messages of transient failures from SDKs that wrap every failure in one class.
_TRANSIENT_TEXT = re.compile(
    r"connection (?:refused|reset|aborted)|server disconnected|peer closed connection|incomplete chunked read|"
    r"all connection attempts failed|timed? ?out|overloaded|service unavailable|too many requests|rate limit|"
    r"internal server error|bad gateway|gateway timeout",
    re.IGNORECASE,
)

_UNREACHABLE_TEXT = re.compile(
    r"connection refused|all connection attempts failed|name or service not known|nodename nor servname|"
    r"temporary failure in name resolution|getaddrinfo failed|no address associated|failed to connect to ollama|"
    r"could not connect to the endpoint url|cannot connect to host|errno 111|errno -2\b|errno -3\b",
    re.IGNORECASE,
)


class ModelServerUnreachableError(LabelsError, ConnectionError):
    """Nothing answers at the model server's address: the run stops (labels written so far are kept)."""

    remedy = "start the model server, or fix --base-url / the provider's address, then run the same command again."


class RequestLimitError(LabelsError):
    """One episode's conversation reached the request limit without a label (never retried)."""

    remedy = "raise --max-requests-per-episode, or use a model that follows the judge's tool order."


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then its ``__cause__`` / ``__context__`` chain (each exception once)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def http_status(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception carries (``status_code``, ``status``, ``code``, a botocore response)."""
    for name in ("status_code", "status", "code", "http_status"):
        value = getattr(exc, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    response = getattr(exc, "response", None)
    if isinstance(response, dict):  # botocore ClientError
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if isinstance(status, int):
            return status
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _named(exc: BaseException, parts: tuple[str, ...]) -> bool:
    """Whether a class name of ``exc``'s MRO contains one of ``parts``."""
    names = " ".join(cls.__name__.lower() for cls in type(exc).__mro__)
    return any(part in names for part in parts)


def is_credentials_error(exc: BaseException) -> bool:
    """The provider refused or lacks credentials (HTTP 401/403, an authentication error)."""
    return any(
        http_status(link) in (401, 403) or _named(link, _CREDENTIAL_NAMES) or _CREDENTIAL_TEXT.search(str(link))
        for link in exception_chain(exc)
    )


def is_unreachable(exc: BaseException) -> bool:
    """Nothing listens at the address, or its host name does not resolve (connection refused, DNS)."""
    return any(
        isinstance(link, ConnectionRefusedError | socket.gaierror | ModelServerUnreachableError)
        or type(link).__name__ == "ConnectError"  # httpx: no connection made (refused, DNS, no route)
        or _UNREACHABLE_TEXT.search(str(link))
        for link in exception_chain(exc)
    )


def is_transient(exc: BaseException) -> bool:
    """Whether a model-call failure is worth retrying (see the module docstring for the rule)."""
    if isinstance(exc, ModelServerUnreachableError | RequestLimitError) or is_credentials_error(exc):
        return False
    for link in exception_chain(exc):
        if isinstance(link, ModelThrottledException | ConnectionError | TimeoutError):
            return True
        status = http_status(link)
        if status is not None:
            if status in _RETRY_STATUSES or status >= 500:
                return True
            if 400 <= status < 500:
                return False
        if _named(link, _TRANSIENT_NAMES):
            return True
    return any(_TRANSIENT_TEXT.search(str(link)) for link in exception_chain(exc))


class ServerBreaker:
    """Counts unreachable-server failures across a run's workers (thread-safe).

    Args:
        url: The server's address, named in the error (None: taken from the failures).
        limit: Failures in a row that open the breaker.
    """

    def __init__(self, url: str | None = None, limit: int = UNREACHABLE_LIMIT) -> None:
        self.url = url
        self.limit = limit
        self.in_a_row = 0
        self.last: BaseException | None = None
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        """The run must stop: :attr:`limit` unreachable failures in a row."""
        return self.in_a_row >= self.limit

    def answered(self) -> None:
        """A request got an answer (any HTTP status): the server is there."""
        with self._lock:
            self.in_a_row = 0

    def failed(self, exc: BaseException, url: str | None = None) -> bool:
        """Record a failed request; True when it was an unreachable server."""
        if not is_unreachable(exc):
            return False
        with self._lock:
            self.in_a_row += 1
            self.last = exc
            if url and not self.url:
                self.url = url
        return True

    def error(self) -> ModelServerUnreachableError:
        """The one error that stops the run."""
        where = self.url or "the provider's default address"
        last = f" (last: {type(self.last).__name__}: {self.last})" if self.last is not None else ""
        return ModelServerUnreachableError(
            f"no model server answers at {where}: {self.in_a_row} requests in a row were refused or its host name "
            f"did not resolve{last}; the run stopped, labels written so far are kept."
        )

    def check(self) -> None:
        """Raise :meth:`error` when open.

        Raises:
            ModelServerUnreachableError: the breaker is open.
        """
        if self.open:
            raise self.error()


class TransientRetryStrategy(ModelRetryStrategy):
    """strands' model-call retry with backoff, widened to every :func:`is_transient` failure.

    Delays: ``initial_delay * 2**attempt`` seconds, capped at ``max_delay``. A failure is
    not retried once the run's :class:`ServerBreaker` is open.
    """

    def __init__(
        self,
        *,
        max_attempts: int = 5,
        initial_delay: float = 2.0,
        max_delay: float = 60.0,
        breaker: ServerBreaker | None = None,
    ):
        super().__init__(max_attempts=max_attempts, initial_delay=initial_delay, max_delay=max_delay)  # type: ignore[arg-type]
        self.breaker = breaker

    def is_retryable(self, exception: Exception) -> bool:
        """True for :func:`is_transient` failures while the server breaker is closed."""
        if self.breaker is not None and self.breaker.open:
            return False
        return is_transient(exception)


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff of transient model-call failures (see :class:`TransientRetryStrategy`)."""

    max_attempts: int = 5
    initial_delay: float = 2.0
    max_delay: float = 60.0

    def strategy(self, breaker: ServerBreaker | None = None) -> TransientRetryStrategy:
        """A fresh strategy (one per agent: it keeps its attempt counter)."""
        return TransientRetryStrategy(**asdict(self), breaker=breaker)

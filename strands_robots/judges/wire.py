"""What a model judge sends over the wire: labelled images, once; bounded requests; the cost.

:class:`WireModel` wraps the strands model of a judge agent; what it does at every
request (each image beside its label per provider, no image twice, the request limit,
the cost meter, the server breaker) is docs/judge.md, "Model judges over the wire".
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from strands.models.model import Model

from strands_robots.judges.retry import RequestLimitError, ServerBreaker
from strands_robots.model_spec import (
    DEFAULT_MAX_REQUESTS,
    DEFAULT_TIMEOUT_S,
    PROVIDERS,
    build_model,
    parse_model_spec,
)

#: Layout: images stay inside the tool result, each after its label.
INSIDE = "inside"
#: Layout: each label and its image move beside the tool results, into the same user message.
#: Each provider's layout (the one that keeps a label next to its image in its requests) is
#: ``model_spec.PROVIDERS[provider].layout``.
BESIDE = "beside"


#: Installs a fresh HTTP client before a request; returns its closer, or None.
FreshClient = Callable[[], Callable[[], Awaitable[None]] | None]

#: What replaces an image the model has already seen.
NOT_REPEATED = "(image not repeated: it was sent earlier in this conversation)"


@dataclass
class Cost:
    """What model requests cost (one episode, or a whole run when added up).

    Attributes:
        requests: Model requests sent (each retry is one).
        request_bytes: Bytes of the request bodies; None when the provider's client does
            not let them be read.
        images: Images sent.
        input_tokens: Input tokens the provider reported; None when it reported none.
        output_tokens: Output tokens the provider reported; None when it reported none.
    """

    requests: int = 0
    request_bytes: int | None = 0
    images: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None

    def __add__(self, other: Cost) -> Cost:
        def plus(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else a + b

        unknown_bytes = self.request_bytes is None or other.request_bytes is None
        return Cost(
            self.requests + other.requests,
            None if unknown_bytes else plus(self.request_bytes, other.request_bytes),
            self.images + other.images,
            plus(self.input_tokens, other.input_tokens),
            plus(self.output_tokens, other.output_tokens),
        )


def _digest(block: dict[str, Any]) -> bytes:
    source = block["image"].get("source") or {}
    data = source.get("bytes")
    if not isinstance(data, bytes | bytearray):
        data = repr(source).encode()
    return hashlib.blake2b(bytes(data), digest_size=16).digest()


def _split_result(
    content: list[dict[str, Any]], pending: bool, seen: set[bytes], now: set[bytes], layout: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A tool result's blocks -> (blocks kept inside, labelled images to put beside).

    ``seen``: digests of images of earlier messages; ``now``: this message's (filled here).
    """
    kept: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for block in content:
        if "image" not in block:
            kept.append(block)
            continue
        digest = _digest(block)
        send = pending and digest not in seen
        now.add(digest)
        if not send:
            kept.append({"text": NOT_REPEATED})
        elif layout == INSIDE:
            kept.append(block)
        else:
            label = [kept.pop()] if kept and set(kept[-1]) == {"text"} else []
            moved.extend([*label, block])
    if moved:
        images = sum(1 for b in moved if "image" in b)
        kept.append({"text": f"The {images} image(s) follow this tool result, each right after its label."})
    return kept, moved


def shape_messages(messages: list[dict[str, Any]], layout: str) -> list[dict[str, Any]]:
    """The conversation as one request should carry it (see the module docstring).

    Args:
        messages: strands messages; the last one is the message the model answers now.
        layout: :data:`INSIDE` or :data:`BESIDE`.

    Returns:
        New messages (the input is not changed): images of answered messages and images
        already sent replaced by :data:`NOT_REPEATED`; with :data:`BESIDE` the labelled
        images of the last message's tool results after its tool results.
    """
    seen: set[bytes] = set()
    out: list[dict[str, Any]] = []
    last = len(messages) - 1
    for position, message in enumerate(messages):
        pending = position == last
        now: set[bytes] = set()
        content: list[dict[str, Any]] = []
        beside: list[dict[str, Any]] = []
        for block in message.get("content", []):
            if "toolResult" in block and any("image" in b for b in block["toolResult"].get("content", [])):
                result = block["toolResult"]
                kept, moved = _split_result(list(result.get("content", [])), pending, seen, now, layout)
                content.append({**block, "toolResult": {**result, "content": kept}})
                beside.extend(moved)
            elif "image" in block:  # an image of the message itself stays where it is
                content.extend(_split_result([block], pending, seen, now, INSIDE)[0])
            else:
                content.append(block)
        seen |= now
        out.append({**message, "content": content + beside})
    return out


def count_images(messages: list[dict[str, Any]]) -> int:
    """Image blocks in ``messages`` (inside tool results too)."""
    blocks = [block for message in messages for block in message.get("content", [])]
    inner = [b for block in blocks if "toolResult" in block for b in block["toolResult"].get("content", [])]
    return sum(1 for block in blocks + inner if "image" in block)


def merge_ollama_images(formatted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ollama messages with each user label and the image message after it made one message."""
    out: list[dict[str, Any]] = []
    for message in formatted:
        previous = out[-1] if out else None
        if (
            previous is not None
            and set(message) == {"role", "images"}
            and message["role"] == "user"
            and previous.get("role") == "user"
            and set(previous) == {"role", "content"}
        ):
            out[-1] = {**previous, "images": message["images"]}
        else:
            out.append(message)
    return out


@functools.cache
def _labelled_ollama_class() -> type:
    from strands.models.ollama import OllamaModel

    class LabelledOllamaModel(OllamaModel):
        """strands' ``OllamaModel`` sending each label and its image as one message."""

        def _format_request_messages(self, messages: Any, system_prompt: str | None = None) -> list[dict[str, Any]]:
            return merge_ollama_images(super()._format_request_messages(messages, system_prompt))

    return LabelledOllamaModel


class _Meter:
    """Request bodies seen by an HTTP hook (thread-safe)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.requests = 0
        self.url: str | None = None
        self._lock = threading.Lock()

    def add(self, size: int, url: str | None) -> None:
        with self._lock:
            self.bytes += size
            self.requests += 1
            if url:
                self.url = url

    async def httpx_hook(self, request: Any) -> None:
        """httpx ``event_hooks["request"]``: the body's size as the server will see it."""
        length = request.headers.get("content-length")
        if length is None:
            try:
                length = len(request.content)
            except Exception:  # noqa: BLE001 - a streamed body: its size is not known up front
                length = 0
        self.add(int(length), str(request.url))

    def botocore_hook(self, request: Any, **_: Any) -> None:
        """botocore ``before-send``: the body of a Bedrock request."""
        body = request.body
        self.add(len(body) if isinstance(body, bytes | bytearray) else len(str(body or "").encode()), request.url)


class WireModel(Model):
    """A judge's provider model with labelled images, no repeats, a request limit and a cost meter.

    Args:
        inner: The strands model that talks to the provider.
        provider: Its provider name (a key of ``model_spec.PROVIDERS``), or None for a
            model object of another kind (images stay inside tool results).
        max_requests: Requests one conversation may make (None: no limit).
        breaker: The run's unreachable-server breaker (None: none).
        fresh_client: Called before each request to install a fresh HTTP client with the
            byte meter (each episode runs in a new event loop, and a client's connections
            belong to one loop); returns its ``aclose`` when the SDK does not close it.
            None when the hook is installed once, or bytes cannot be read.
        meter: The byte meter, or None when bytes cannot be read.
    """

    def __init__(
        self,
        inner: Any,
        *,
        provider: str | None = None,
        max_requests: int | None = DEFAULT_MAX_REQUESTS,
        breaker: ServerBreaker | None = None,
        fresh_client: FreshClient | None = None,
        meter: _Meter | None = None,
    ) -> None:
        self.inner = inner
        self.provider = provider
        self.layout = PROVIDERS[provider].layout if provider else INSIDE
        self.max_requests = max_requests
        self.breaker = breaker
        self._fresh_client = fresh_client
        self._meter = meter
        self.start_episode()

    # -- strands Model interface: delegate ------------------------------------------------
    def update_config(self, **model_config: Any) -> None:
        """The inner model's ``update_config``."""
        self.inner.update_config(**model_config)

    def get_config(self) -> Any:
        """The inner model's ``get_config``."""
        return self.inner.get_config()

    @property
    def config(self) -> Any:
        """The inner model's ``config`` ({} when it has none)."""
        config = getattr(self.inner, "config", None)
        return config if config is not None else {}

    @property
    def stateful(self) -> bool:
        """The inner model's ``stateful``."""
        return bool(getattr(self.inner, "stateful", False))

    @property
    def context_window_limit(self) -> int | None:
        """The inner model's ``context_window_limit``."""
        return getattr(self.inner, "context_window_limit", None)

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        """The inner model's ``structured_output``."""
        return self.inner.structured_output(*args, **kwargs)

    async def count_tokens(self, *args: Any, **kwargs: Any) -> Any:
        """The inner model's ``count_tokens``."""
        return await self.inner.count_tokens(*args, **kwargs)

    @property
    def judge_model_name(self) -> str | None:
        """The name a label records (the inner model's)."""
        from strands_robots.tools.episode_judge import model_name

        return model_name(self.inner)

    # -- cost ---------------------------------------------------------------------------------
    def start_episode(self) -> None:
        """Start counting a new episode's :attr:`cost`."""
        self.cost = Cost(request_bytes=0 if self._meter is not None else None)
        self._bytes_at_start = self._meter.bytes if self._meter is not None else 0
        self._bytes_unseen = False  # a request was answered without its body passing the meter: bytes unknown

    # -- the request ------------------------------------------------------------------------------
    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        """Shape, count and send one request through the inner model.

        Raises:
            RequestLimitError: this request would exceed ``max_requests``.
            ModelServerUnreachableError: the run's breaker is open.
        """
        answered = sum(1 for m in messages if m.get("role") == "assistant")
        if self.max_requests is not None and answered + 1 > self.max_requests:
            raise RequestLimitError(
                f"the conversation reached {self.max_requests} model requests without a label "
                "(--max-requests-per-episode); the model keeps calling tools instead of finishing."
            )
        if self.breaker is not None:
            self.breaker.check()
        shaped = shape_messages(list(messages), self.layout)
        self.cost.requests += 1
        self.cost.images += count_images(shaped)
        close = self._fresh_client() if self._fresh_client is not None else None
        got_answer = False
        metered = self._meter.requests if self._meter is not None else 0
        try:
            async for event in self.inner.stream(shaped, tool_specs, system_prompt, **kwargs):
                if not got_answer:
                    got_answer = True
                    if self.breaker is not None:
                        self.breaker.answered()
                usage = event.get("metadata", {}).get("usage") if isinstance(event, dict) else None
                if usage:
                    self._add_usage(usage)
                yield event
        except Exception as exc:
            if self.breaker is not None and not got_answer:
                self.breaker.failed(exc, self._meter.url if self._meter is not None else None)
            raise
        finally:
            if self._meter is not None:
                if got_answer and self._meter.requests == metered:
                    self._bytes_unseen = True  # answered, yet no body passed the hook: this route bypasses it
                self.cost.request_bytes = None if self._bytes_unseen else self._meter.bytes - self._bytes_at_start
            if close is not None:
                await close()

    def _add_usage(self, usage: dict[str, Any]) -> None:
        for key, attr in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens")):
            value = usage.get(key)
            if isinstance(value, int):
                current = getattr(self.cost, attr)
                setattr(self.cost, attr, value + (current or 0))


@functools.cache
def _tls_context() -> Any:
    """One TLS context for every fresh client (building one reads the CA bundle: ~0.1 s of CPU)."""
    import httpx

    return httpx.create_ssl_context()


def _httpx_client(meter: _Meter, **options: Any) -> Any:
    """A fresh ``httpx.AsyncClient`` whose requests ``meter`` sees."""
    import httpx

    return httpx.AsyncClient(event_hooks={"request": [meter.httpx_hook]}, verify=_tls_context(), **options)


def _install_meter(model: Any, provider: str, timeout: float | None) -> tuple[_Meter | None, FreshClient | None]:
    """Put a byte meter on ``model``'s HTTP client; returns (meter, per-request installer).

    The installer puts a fresh client in place before each request and returns how to close
    it (or None when the SDK closes it itself).
    """
    meter = _Meter()
    if provider == "openai":

        def fresh_openai() -> None:  # AsyncOpenAI closes its http_client after each request
            client = _httpx_client(meter, timeout=timeout, follow_redirects=True)
            model.client_args = {**model.client_args, "http_client": client}

        return meter, fresh_openai
    if provider == "litellm":
        base = model.client_args.get("api_base")
        model_id = str(model.get_config().get("model_id", ""))
        original = dict(model.client_args)
        if "client" in original:
            return None, None  # the user's own client: leave it alone
        if base is None or not model_id.startswith("openai/"):

            def fresh_litellm_http() -> Callable[[], Awaitable[None]]:
                # litellm's own HTTP routes (ollama_chat/, anthropic/, gemini/, ...) take an AsyncHTTPHandler
                from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

                handler = AsyncHTTPHandler(timeout=timeout, event_hooks={"request": [meter.httpx_hook]})
                model.client_args = {**original, "client": handler}
                return handler.close

            return meter, fresh_litellm_http

        def fresh_litellm() -> Callable[[], Awaitable[None]]:
            import openai

            key = original.get("api_key") or os.environ.get("OPENAI_API_KEY")
            client = openai.AsyncOpenAI(
                base_url=base,
                api_key=key,
                max_retries=0,
                timeout=timeout,
                http_client=_httpx_client(meter, timeout=timeout, follow_redirects=True),
            )
            model.client_args = {**original, "client": client}
            return client.close

        return meter, fresh_litellm
    if provider == "ollama":
        hooks = dict(model.client_args.get("event_hooks") or {})
        hooks["request"] = [*hooks.get("request", []), meter.httpx_hook]
        model.client_args = {**model.client_args, "event_hooks": hooks}
        return meter, None
    if provider == "llamacpp":  # its client is kept for the model's life; each episode runs in a new event loop
        template = model.client

        def fresh_llamacpp() -> Callable[[], Awaitable[None]]:
            model.client = _httpx_client(
                meter, base_url=template.base_url, timeout=template.timeout, headers=template.headers
            )
            return model.client.aclose

        return meter, fresh_llamacpp
    if provider == "anthropic":
        http = getattr(model.client, "_client", None)  # the SDK's httpx client, kept for the model's life
        if http is None or not hasattr(http, "event_hooks"):
            return None, None
        http.event_hooks = {**http.event_hooks, "request": [meter.httpx_hook]}
        return meter, None
    if provider == "bedrock":
        model.client.meta.events.register("before-send.bedrock-runtime", meter.botocore_hook)
        return meter, None
    if provider == "gemini":  # strands builds a genai.Client per request from client_args
        original = dict(model.client_args)
        if (original.get("http_options") or {}).get("httpx_async_client") is not None:
            return None, None  # the user's own client: leave it alone

        def fresh_gemini() -> Callable[[], Awaitable[None]]:
            # google-genai sends through aiohttp when it is installed, unless given an httpx client
            client = _httpx_client(meter, follow_redirects=True)
            options = {**(original.get("http_options") or {}), "httpx_async_client": client}
            model.client_args = {**original, "http_options": options}
            return client.aclose

        return meter, fresh_gemini
    return None, None


def wire_model(
    model: Any,
    *,
    base_url: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT_S,
    max_requests: int | None = DEFAULT_MAX_REQUESTS,
    breaker: ServerBreaker | None = None,
) -> Any:
    """The judge's model: a spec or a strands ``Model`` wrapped in :class:`WireModel`.

    Args:
        model: ``PROVIDER:MODEL_ID`` (built with ``timeout`` and the SDK's own retries
            off, see :func:`strands_robots.model_spec.build_model`), a strands ``Model``
            (its provider's layout when it is one of the strands provider classes; no
            byte meter, since it may be shared), or None (strands' default model, as is).
        base_url: Server of a spec's provider.
        timeout: Seconds per request (specs only).
        max_requests: Requests one conversation may make.
        breaker: The run's unreachable-server breaker.

    Returns:
        A :class:`WireModel`, or ``model`` itself when it is None or already wrapped or
        an offline model (``offline = True``).

    Raises:
        ModelSpecError: see :func:`~strands_robots.model_spec.build_model`.
    """
    if model is None or isinstance(model, WireModel) or getattr(model, "offline", False):
        return model
    if isinstance(model, str):
        provider = parse_model_spec(model).provider
        built = build_model(model, base_url=base_url, timeout=timeout, single_attempt=True)
        if provider == "ollama":
            built.__class__ = _labelled_ollama_class()  # same object, one formatting method overridden
        if provider == "litellm":
            import litellm

            litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout at each failure
        meter, fresh = _install_meter(built, provider, timeout)
        if breaker is not None and breaker.url is None:
            breaker.url = base_url
        return WireModel(
            built, provider=provider, max_requests=max_requests, breaker=breaker, fresh_client=fresh, meter=meter
        )
    build_model(model, base_url=base_url)  # refuses a base_url with a Model object
    known = next((name for name, info in PROVIDERS.items() if type(model).__module__ == info.module), None)
    return WireModel(model, provider=known, max_requests=max_requests, breaker=breaker)

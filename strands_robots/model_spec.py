"""Parse ``PROVIDER:MODEL_ID`` model specs into strands ``Model`` objects.

One parser for every part that talks to a model (the judge agent and the subtask-chain
checker's L3 resolver), so both accept the same strings. Lives below the tools layer:
importing it pulls in no tool and no provider SDK; a provider's module is imported only
when a spec names it.

Spec grammar: ``PROVIDER:MODEL_ID`` where ``PROVIDER`` is one of ``bedrock``,
``anthropic``, ``openai``, ``gemini``, ``litellm``, ``ollama``, ``llamacpp``
(case-insensitive) and ``MODEL_ID`` is everything after the first colon (model ids may
themselves contain colons, e.g. ``ollama:llava:13b`` or Bedrock's ``...-v1:0``).

``base_url`` points a provider at another server, e.g. an OpenAI-compatible local one
(vLLM, LM Studio, llama.cpp's server, ollama's ``/v1``): ``openai:MODEL`` with
``base_url="http://localhost:8000/v1"``. Rule: ``docs/judge.md``, "Model judges".
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

from strands_robots.errors import LabelsError


class ModelSpecError(LabelsError, ValueError):
    """A model spec string is malformed, names an unknown provider, or its SDK is missing."""


class ModelCredentialsError(ModelSpecError):
    """The provider needs credentials and none are configured (raised before any call)."""


def check_bedrock_credentials() -> None:
    """Raise :class:`ModelCredentialsError` when boto3 finds no AWS credentials.

    Looks where botocore looks (environment, ``~/.aws`` files, SSO, container and, unless
    ``AWS_EC2_METADATA_DISABLED=true``, instance metadata) without calling Bedrock.
    """
    import boto3
    import botocore.exceptions

    remedy = (
        "set AWS credentials (`aws configure`, `aws sso login` with AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY), or choose another provider (e.g. ollama:llava) or the offline judge (no model)."
    )
    try:
        credentials = boto3.Session().get_credentials()
    except botocore.exceptions.BotoCoreError as exc:
        raise ModelCredentialsError(f"bedrock: AWS credentials cannot be loaded ({exc}); {remedy}") from None
    if credentials is None:
        raise ModelCredentialsError(f"bedrock needs AWS credentials and none were found; {remedy}")


@dataclass(frozen=True)
class ProviderInfo:
    """Where a provider's strands model class lives, how a base_url reaches it, and where
    its requests keep an image's label (:mod:`strands_robots.judges.wire`'s layouts)."""

    module: str
    cls: str
    extra: str  # strands-agents extra that installs the provider's SDK ("" = core)
    base_url: str  # how a base_url reaches the constructor (see _with_base_url)
    layout: str = "beside"  # "inside": images stay inside tool results; "beside": after them


PROVIDERS: dict[str, ProviderInfo] = {
    "bedrock": ProviderInfo("strands.models.bedrock", "BedrockModel", "", "endpoint_url", "inside"),
    "anthropic": ProviderInfo("strands.models.anthropic", "AnthropicModel", "anthropic", "client_args", "inside"),
    "openai": ProviderInfo("strands.models.openai", "OpenAIModel", "openai", "client_args"),
    "gemini": ProviderInfo("strands.models.gemini", "GeminiModel", "gemini", "http_options"),
    "litellm": ProviderInfo("strands.models.litellm", "LiteLLMModel", "litellm", "api_base"),
    "ollama": ProviderInfo("strands.models.ollama", "OllamaModel", "ollama", "host"),
    "llamacpp": ProviderInfo("strands.models.llamacpp", "LlamaCppModel", "", "base_url"),
}

#: Seconds one model request may take by default (``--timeout``, ``timeout=``).
DEFAULT_TIMEOUT_S = 120.0
#: Model requests one judge conversation may make by default (``--max-requests-per-episode``).
DEFAULT_MAX_REQUESTS = 12

#: ``max_tokens`` of an ``anthropic`` spec when none is given: strands' ``AnthropicModel``
#: requires one (without it every request fails with ``KeyError: 'max_tokens'``), and a
#: judge's longest answer, a ``write_label`` call with its note, is well under it.
ANTHROPIC_MAX_TOKENS = 4096

#: API key an OpenAI-compatible local server gets when none is configured (they ignore it,
#: but the OpenAI client refuses to start without one).
LOCAL_API_KEY = "not-needed"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: ``provider`` (a key of ``PROVIDERS``) and ``model_id``."""

    provider: str
    model_id: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model_id}"


def parse_model_spec(spec: str) -> ModelSpec:
    """Split ``PROVIDER:MODEL_ID`` and check the provider.

    Args:
        spec: e.g. ``"bedrock:us.anthropic.claude-sonnet-4-20250514-v1:0"``,
            ``"ollama:llava:13b"``.

    Returns:
        The parsed :class:`ModelSpec`.

    Raises:
        ModelSpecError: not a string, no colon, empty parts, or an unknown provider.
    """
    if not isinstance(spec, str):
        raise ModelSpecError(f"model spec must be a string 'PROVIDER:MODEL_ID', got {type(spec).__name__}.")
    provider, sep, model_id = spec.strip().partition(":")
    provider = provider.strip().lower()
    model_id = model_id.strip()
    if not sep or not provider or not model_id:
        raise ModelSpecError(
            f"model spec {spec!r} is not of the form PROVIDER:MODEL_ID "
            f"(providers: {', '.join(sorted(PROVIDERS))}), e.g. 'ollama:llava:13b'."
        )
    if provider not in PROVIDERS:
        raise ModelSpecError(
            f"model spec {spec!r} names unknown provider {provider!r}; use one of "
            f"{', '.join(sorted(PROVIDERS))}, or pass a strands Model object instead."
        )
    return ModelSpec(provider, model_id)


def check_base_url(base_url: object) -> str | None:
    """Validate a ``base_url``: None, or an ``http://`` / ``https://`` URL with a host.

    Raises:
        ModelSpecError: not a string, or not an http(s) URL.
    """
    if base_url is None:
        return None
    from urllib.parse import urlparse

    if not isinstance(base_url, str) or not base_url.strip():
        raise ModelSpecError(f"base_url must be an http(s) URL string, got {base_url!r}.")
    url = base_url.strip()
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ModelSpecError(
            f"base_url {url!r} is not an http(s) URL with a host; e.g. 'http://localhost:8000/v1' for an "
            "OpenAI-compatible server."
        )
    return url


def _args(kwargs: dict[str, Any], key: str = "client_args") -> dict[str, Any]:
    """``kwargs[key]`` as a fresh dict put back in ``kwargs`` (the caller's dict is not changed)."""
    kwargs[key] = dict(kwargs.get(key) or {})
    return kwargs[key]


def _with_base_url(provider: str, model_id: str, how: str, url: str, kwargs: dict[str, Any]) -> None:
    """Put ``url`` where ``provider``'s strands class expects a server address."""
    if how in ("client_args", "api_base"):  # openai, anthropic: the SDK client's base_url; litellm: api_base
        client_args = _args(kwargs)
        client_args.setdefault("base_url" if how == "client_args" else "api_base", url)
        openai_compatible = provider == "openai" or (provider == "litellm" and model_id.startswith("openai/"))
        if openai_compatible and "api_key" not in client_args and not os.environ.get("OPENAI_API_KEY"):
            client_args["api_key"] = LOCAL_API_KEY
    elif how == "http_options":  # gemini: google-genai's HttpOptions
        _args(_args(kwargs), "http_options").setdefault("base_url", url)
    else:  # a constructor keyword: host (ollama), base_url (llamacpp), endpoint_url (bedrock)
        kwargs[how] = url


def _with_request_policy(provider: str, timeout: float | None, single_attempt: bool, kwargs: dict[str, Any]) -> None:
    """Put a per-request ``timeout`` (seconds) and "no SDK retries" where ``provider``'s class takes them.

    User-given keyword arguments win (``setdefault``).
    """
    if provider in ("openai", "anthropic", "litellm"):
        client_args = _args(kwargs)
        if timeout is not None:
            client_args.setdefault("timeout", timeout)
        if single_attempt:
            client_args.setdefault("max_retries", 0)
            if provider == "litellm":
                client_args.setdefault("num_retries", 0)
    elif provider == "ollama":
        client_args = _args(kwargs, "ollama_client_args")
        if timeout is not None:
            client_args.setdefault("timeout", timeout)
    elif provider == "llamacpp":
        if timeout is not None:
            kwargs.setdefault("timeout", timeout)
    elif provider == "gemini":
        options = _args(_args(kwargs), "http_options")
        if timeout is not None:
            options.setdefault("timeout", int(timeout * 1000))  # google-genai: milliseconds
        if single_attempt:
            options.setdefault("retry_options", {"attempts": 1})
    elif provider == "bedrock" and "boto_client_config" not in kwargs:
        from botocore.config import Config

        boto: dict[str, Any] = {}
        if timeout is not None:
            boto.update(read_timeout=timeout, connect_timeout=min(timeout, 60.0))
        if single_attempt:
            boto["retries"] = {"total_max_attempts": 1, "mode": "standard"}
        kwargs["boto_client_config"] = Config(**boto)


def build_model(
    model: Any,
    *,
    base_url: str | None = None,
    timeout: float | None = None,
    single_attempt: bool = False,
    **model_kwargs: Any,
) -> Any:
    """Turn ``model`` into what ``strands.Agent(model=...)`` accepts.

    Args:
        model: ``None`` (strands' default model), a strands ``Model`` object (returned
            as is), or a ``PROVIDER:MODEL_ID`` spec string.
        base_url: Server address for a spec (``http(s)://host[:port][/path]``): the
            OpenAI / Anthropic client's ``base_url`` (an ``openai`` spec without
            ``OPENAI_API_KEY`` gets the placeholder key :data:`LOCAL_API_KEY`, as local
            servers need none), Gemini's ``http_options.base_url``, LiteLLM's
            ``api_base``, ollama's ``host``, llama.cpp's ``base_url``, Bedrock's
            ``endpoint_url``. Refused with a ``Model`` object (configure it directly).
            A ``litellm:openai/MODEL`` spec without ``OPENAI_API_KEY`` gets
            :data:`LOCAL_API_KEY` too.
        timeout: Seconds one request may take (the SDK client's timeout; Gemini's in
            milliseconds; Bedrock's read timeout). None: the provider's default.
        single_attempt: Switch the SDK's own retries off (``max_retries=0``, litellm's
            ``num_retries=0``, Gemini's ``retry_options``, botocore's
            ``total_max_attempts=1``), so the caller's retry policy sees every failure.
        **model_kwargs: Extra constructor arguments for the provider class (e.g.
            ``host`` for ollama, ``client_args`` for openai; an ``anthropic`` spec gets
            ``max_tokens`` :data:`ANTHROPIC_MAX_TOKENS` unless given).

    Returns:
        ``None``, the given object, or a new provider model instance.

    Raises:
        ModelSpecError: bad spec, a bad ``base_url`` (or one given without a spec), or
            the provider's SDK is not installed (the message names the extra to install).
        ModelCredentialsError: ``bedrock`` without AWS credentials (the message says how
            to set them).
    """
    url = check_base_url(base_url)
    if model is None or not isinstance(model, str):
        if url is not None:
            raise ModelSpecError(
                "base_url applies to a PROVIDER:MODEL_ID spec (e.g. 'openai:qwen2.5-vl'); configure a Model object's "
                "server on the object itself."
            )
        return model
    parsed = parse_model_spec(model)
    info = PROVIDERS[parsed.provider]
    if parsed.provider == "litellm":  # use the cost map litellm ships, never fetch it at import (offline use)
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        module = importlib.import_module(info.module)
    except ImportError as exc:
        extra = (
            f"pip install 'strands-robots-labels[{info.extra}]' (or 'strands-agents[{info.extra}]')"
            if info.extra
            else "reinstall strands-agents"
        )
        raise ModelSpecError(
            f"provider {parsed.provider!r} needs an SDK that is not installed ({exc.name or exc}); run: {extra}"
        ) from exc
    cls = getattr(module, info.cls)
    kwargs = dict(model_kwargs)
    if parsed.provider == "bedrock" and "boto_session" not in kwargs:
        check_bedrock_credentials()
    if parsed.provider == "ollama":
        kwargs.setdefault("host", None)
    if parsed.provider == "anthropic":
        kwargs.setdefault("max_tokens", ANTHROPIC_MAX_TOKENS)
    if url is not None:
        _with_base_url(parsed.provider, parsed.model_id, info.base_url, url, kwargs)
    if timeout is not None or single_attempt:
        _with_request_policy(parsed.provider, timeout, single_attempt, kwargs)
    kwargs["model_id"] = parsed.model_id
    return cls(**kwargs)

"""Parse ``PROVIDER:MODEL_ID`` model specs into strands ``Model`` objects.

One parser for every part that talks to a model (the judge agent and the subtask-chain
checker's L3 resolver), so both accept the same strings. Lives below the tools layer:
importing it pulls in no tool and no provider SDK; a provider's module is imported only
when a spec names it.

Spec grammar: ``PROVIDER:MODEL_ID`` where ``PROVIDER`` is one of ``bedrock``,
``anthropic``, ``openai``, ``ollama``, ``llamacpp`` (case-insensitive) and ``MODEL_ID``
is everything after the first colon (model ids may themselves contain colons, e.g.
``ollama:llava:13b`` or Bedrock's ``...-v1:0``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from strands_robots.errors import LabelsError


class ModelSpecError(LabelsError, ValueError):
    """A model spec string is malformed, names an unknown provider, or its SDK is missing."""


@dataclass(frozen=True)
class ProviderInfo:
    """Where a provider's strands model class lives and how its model id is passed."""

    module: str
    cls: str
    extra: str  # strands-agents extra that installs the provider's SDK ("" = core)
    id_keyword: str  # constructor keyword that carries the model id


PROVIDERS: dict[str, ProviderInfo] = {
    "bedrock": ProviderInfo("strands.models.bedrock", "BedrockModel", "", "model_id"),
    "anthropic": ProviderInfo("strands.models.anthropic", "AnthropicModel", "anthropic", "model_id"),
    "openai": ProviderInfo("strands.models.openai", "OpenAIModel", "openai", "model_id"),
    "ollama": ProviderInfo("strands.models.ollama", "OllamaModel", "ollama", "model_id"),
    "llamacpp": ProviderInfo("strands.models.llamacpp", "LlamaCppModel", "", "model_id"),
}


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


def build_model(model: Any, **model_kwargs: Any) -> Any:
    """Turn ``model`` into what ``strands.Agent(model=...)`` accepts.

    Args:
        model: ``None`` (strands' default model), a strands ``Model`` object (returned
            as is), or a ``PROVIDER:MODEL_ID`` spec string.
        **model_kwargs: Extra constructor arguments for the provider class (e.g.
            ``host`` for ollama, ``client_args`` for openai).

    Returns:
        ``None``, the given object, or a new provider model instance.

    Raises:
        ModelSpecError: bad spec, or the provider's SDK is not installed (the message
            names the ``strands-agents`` extra to install).
    """
    if model is None or not isinstance(model, str):
        return model
    parsed = parse_model_spec(model)
    info = PROVIDERS[parsed.provider]
    try:
        module = importlib.import_module(info.module)
    except ImportError as exc:
        extra = f"pip install 'strands-agents[{info.extra}]'" if info.extra else "reinstall strands-agents"
        raise ModelSpecError(
            f"provider {parsed.provider!r} needs an SDK that is not installed ({exc.name or exc}); run: {extra}"
        ) from exc
    cls = getattr(module, info.cls)
    kwargs = dict(model_kwargs)
    if parsed.provider == "ollama":
        kwargs.setdefault("host", None)
    kwargs[info.id_keyword] = parsed.model_id
    return cls(**kwargs)

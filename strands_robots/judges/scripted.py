"""Building blocks of models that plan tool calls in code instead of calling a service.

A strands ``Model`` streams events; a model that decides in code emits the same events
a provider would (``messageStart``, content blocks, ``messageStop``), so the agent loop,
tool execution and hooks run exactly as with a real model.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolExchange:
    """One tool call the model made and the result it got back (None while pending)."""

    name: str
    input: dict[str, Any]
    status: str | None
    content: list[dict[str, Any]]

    @property
    def ok(self) -> bool:
        """The tool answered with ``status: success``."""
        return self.status == "success"

    def json(self) -> dict[str, Any]:
        """The first ``json`` block of the result ({} when none)."""
        for block in self.content:
            if "json" in block and isinstance(block["json"], dict):
                return block["json"]
        return {}

    def text(self) -> str:
        """All text blocks of the result, joined by newlines."""
        return "\n".join(block["text"] for block in self.content if "text" in block)


def exchanges(messages: list[dict[str, Any]]) -> list[ToolExchange]:
    """Pair every ``toolUse`` of the conversation with its ``toolResult``, in call order."""
    blocks = [block for message in messages for block in message.get("content", [])]
    results = {b["toolResult"].get("toolUseId", ""): b["toolResult"] for b in blocks if "toolResult" in b}
    out = []
    for use in (b["toolUse"] for b in blocks if "toolUse" in b):
        result = results.get(use.get("toolUseId", ""), {})
        out.append(
            ToolExchange(
                use.get("name", ""), dict(use.get("input") or {}), result.get("status"), result.get("content", [])
            )
        )
    return out


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """Text of the most recent user message that carries text (not only tool results)."""
    for message in reversed(messages):
        texts = [block["text"] for block in message.get("content", []) if "text" in block]
        if texts and message.get("role") == "user":
            return "\n".join(texts)
    return ""


def _metadata() -> dict[str, Any]:
    return {"metadata": {"usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}, "metrics": {"latencyMs": 0}}}


def tool_call_events(name: str, tool_input: dict[str, Any], tool_use_id: str | None = None) -> Iterator[dict[str, Any]]:
    """The stream events of an assistant message that calls one tool."""
    tool_use_id = tool_use_id or f"tooluse_{uuid.uuid4().hex[:16]}"
    yield {"messageStart": {"role": "assistant"}}
    yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tool_use_id}}}}
    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}}
    yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": "tool_use"}}
    yield _metadata()


def text_events(text: str) -> Iterator[dict[str, Any]]:
    """The stream events of a final assistant text message."""
    yield {"messageStart": {"role": "assistant"}}
    yield {"contentBlockDelta": {"delta": {"text": text}}}
    yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": "end_turn"}}
    yield _metadata()

"""A scripted strands model for the judge tests: it replays tool calls, calls no service."""

from __future__ import annotations

import json
from typing import Any

from strands.models.model import Model


class ScriptedModel(Model):
    """Replays ``script`` one step per model call and records what it was shown.

    Each step is ``("tool", name, input)``, ``("text", text)`` or ``("raise", exc)``.
    ``seen`` holds a deep copy of the messages of every call, so a test can check what
    the model received (tool results, images and their labels).
    """

    def __init__(self, script: list[tuple[Any, ...]]):
        self.script = list(script)
        self.seen: list[list[dict[str, Any]]] = []
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {"model_id": "scripted-test-model"}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):  # noqa: ANN001
        raise NotImplementedError
        yield {}

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # noqa: ANN001
        self.calls += 1
        self.seen.append([dict(m, content=list(m["content"])) for m in messages])
        step = self.script.pop(0) if self.script else ("text", "done")
        if step[0] == "raise":
            raise step[1]
        yield {"messageStart": {"role": "assistant"}}
        if step[0] == "tool":
            _, name, tool_input = step
            yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": f"t{self.calls}"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": step[1]}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``toolResult`` block of a conversation, in order."""
    return [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]

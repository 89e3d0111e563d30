"""Helpers for the SSC tests: subtask/event builders, a scripted resolver, a fake strands Model."""

from __future__ import annotations

from typing import Any

from strands.models.model import Model

from strands_robots.ssc.cascade import ANNOTATION_FIELDS, EntryBuilder
from strands_robots.ssc.records import GripperEvent, ParsedAction, SceneGraph, Subtask, SubtaskEntry


def ev(frame: int, arm: str, kind: str) -> GripperEvent:
    return GripperEvent(frame=frame, arm=arm, kind=kind)


def act(verb: str, obj: str | None = None, *targets: tuple[str, str], arm: str | None = None) -> ParsedAction:
    return ParsedAction(verb=verb, obj=obj, targets=list(targets), arm=arm)


def sub(idx: int, start: int, end: int, *actions: ParsedAction, **meta: Any) -> Subtask:
    return Subtask(
        st_idx=idx, start=start, end=end, actions=list(actions), label=actions[0].verb if actions else "", **meta
    )


def state(left: str | None = None, right: str | None = None, same: bool | str = False) -> SceneGraph:
    return SceneGraph(obj_in_left_hand=left, obj_in_right_hand=right, holding_same_object=same)


def build_entry(
    subtask: Subtask,
    before: SceneGraph,
    events: list[GripperEvent],
    *,
    resolver=None,
    fields=ANNOTATION_FIELDS,
) -> SubtaskEntry:
    return EntryBuilder(events, resolver=resolver, annotation_fields=fields, task_name="t").build(subtask, before)


class ScriptedResolver:
    """An L3 resolver replaying answers by query kind and recording every request."""

    def __init__(self, **answers: Any) -> None:
        self.answers = {k: list(v) if isinstance(v, list) else [v] for k, v in answers.items()}
        self.requests: list[Any] = []

    def __call__(self, request):
        self.requests.append(request)
        queue = self.answers.get(request.kind) or [None]
        return queue.pop(0) if len(queue) > 1 else queue[0]


class FakeModel(Model):
    """A strands ``Model`` that replays canned text replies and records what it was sent."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        self.config = model_config

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("the SSC resolver never asks for structured output")
        yield  # pragma: no cover

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.calls.append({"messages": messages, "system_prompt": system_prompt})
        text = self.replies.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}

"""``HeuristicJudgeModel``: the offline judge as a strands ``Model`` (docs/judge.md,
"The offline judge (``heuristic-v1``)": its plan, the prompt it reads, ``drive``).

It grades with :func:`strands_robots.judges.offline_rules.grade_episode` against the
dataset profile (every episode's signals): pass one, or it is computed once per root on
first use.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strands.models.model import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from strands_robots.judges.offline_rules import JUDGE_MODEL, grade_episode
from strands_robots.judges.profile import DatasetProfile
from strands_robots.judges.scripted import ToolExchange, exchanges, last_user_text, text_events, tool_call_events


def judge_prompt(root: str | Path, episodes: list[int], n_frames: int = 4, images: bool = False) -> str:
    """The user prompt that asks a judge (any model) to label ``episodes`` of ``root``."""
    which = f"episode {episodes[0]}" if len(episodes) == 1 else "episodes " + ", ".join(str(e) for e in episodes)
    return (
        f"Label {which} of the dataset at {json.dumps(str(root))}. "
        f"Sample {n_frames} frames each, {'with' if images else 'without'} images."
    )


@dataclass(frozen=True)
class JudgeRequest:
    """What a prompt asks for."""

    root: str
    episodes: tuple[int, ...]
    n_frames: int = 4
    images: bool = False


_ROOT = re.compile(r'dataset at (?:"((?:[^"\\]|\\.)*)"|(\S+?))(?=[.,;]?(?:\s|$))')
_EPISODES = re.compile(r"\bepisodes?\s+(\d+(?:\s*(?:,|and)\s*\d+)*)", re.IGNORECASE)
_FRAMES = re.compile(r"\bsample\s+(\d+)\s+frames?", re.IGNORECASE)


@functools.lru_cache(maxsize=256)  # a plan re-reads the same prompt at every step
def parse_request(text: str) -> JudgeRequest | None:
    """Read root, episodes, frame count and image wish from a :func:`judge_prompt` text."""
    root_match = _ROOT.search(text)
    episodes_match = _EPISODES.search(text)
    if not root_match or not episodes_match:
        return None
    root = json.loads(f'"{root_match.group(1)}"') if root_match.group(1) is not None else root_match.group(2)
    episodes = tuple(int(e) for e in re.findall(r"\d+", episodes_match.group(1)))
    frames_match = _FRAMES.search(text)
    images = bool(re.search(r"\bwith images\b", text, re.IGNORECASE))
    return JudgeRequest(root, episodes, int(frames_match.group(1)) if frames_match else 4, images)


class HeuristicJudgeModel(Model):
    """A strands ``Model`` that grades execution from signals relative to the dataset.

    Args:
        profiles: ``{resolved root: DatasetProfile}`` known in advance (the runner
            computes it once); other roots are profiled on first use.
    """

    judge_model_name = JUDGE_MODEL
    offline = True  # no request leaves the process: never wrapped for the wire (judges.wire)

    def __init__(self, profiles: dict[str | Path, DatasetProfile] | None = None):
        self._profiles = {str(Path(k)): v for k, v in (profiles or {}).items()}
        self._lock = threading.Lock()
        self.config: dict[str, Any] = {"model_id": JUDGE_MODEL}

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a Ray worker gets a copy): everything but the lock."""
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def update_config(self, **model_config: Any) -> None:
        """Update the (informational) config."""
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """The config: ``{"model_id": "heuristic-v1"}``."""
        return dict(self.config)

    def profile(self, root: str | Path) -> DatasetProfile:
        """The profile of a resolved dataset root (computed once, thread-safe)."""
        key = str(Path(root))
        with self._lock:
            if key not in self._profiles:
                self._profiles[key] = DatasetProfile.from_dataset(key)
            return self._profiles[key]

    async def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Not supported: the offline judge only plans tool calls."""
        raise NotImplementedError("HeuristicJudgeModel plans tool calls; it has no structured output.")
        yield {}  # pragma: no cover - makes this an async generator

    async def stream(  # type: ignore[override]
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        """Emit the next tool call of the plan (or the final text) as stream events."""
        for event in self.next_events(list(messages)):  # type: ignore[arg-type]
            yield event  # type: ignore[misc]

    def next_events(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The events of the next assistant message given the conversation so far."""
        step = self.plan(messages)
        if isinstance(step, tuple):
            return list(tool_call_events(*step))
        return list(text_events(step))

    def plan(self, messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | str:
        """The next step given the conversation: ``(tool name, input)`` or the final text."""
        request = parse_request(last_user_text(messages))
        if request is None:
            return (
                'I label episodes when asked as: Label episode N of the dataset at "ROOT". '
                "Sample K frames each, without images."
            )
        history = exchanges(messages)
        outcomes: list[str] = []
        for episode in request.episodes:
            step = self._next_step(request, episode, [x for x in history if x.input.get("episode") == episode])
            if isinstance(step, tuple):
                return step
            outcomes.append(step)
        return "\n".join(outcomes)

    def can_drive(self) -> bool:
        """Whether :meth:`drive` plans as :meth:`stream` would (a subclass overriding the
        streaming methods must run in the agent loop to be heard)."""
        cls = type(self)
        return cls.next_events is HeuristicJudgeModel.next_events and cls.stream is HeuristicJudgeModel.stream

    def drive(self, tools: Any, prompt: str, *, max_steps: int = 64) -> list[dict[str, Any]]:
        """Run the plan for ``prompt`` by calling ``tools`` directly, without the strands event loop.

        The same tool functions run with the same inputs as inside an ``Agent`` (root
        checks, envelopes, journaled label writes, per-tool timing); only the event
        loop's streaming, hooks and message bookkeeping are skipped, which is most of an
        offline episode's cost. ``run_judge`` uses it for the offline judge; a real
        model always goes through the agent.

        Args:
            tools: :class:`~strands_robots.tools.episode_judge.JudgeTools` (tools by name).
            prompt: A :func:`judge_prompt` text.
            max_steps: Tool calls allowed before giving up (a plan never needs more than
                5 per episode).

        Returns:
            The conversation in strands' message format (user prompt, tool uses and
            results, the final assistant text).
        """
        messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": prompt}]}]
        for step_number in range(max_steps):
            step = self.plan(messages)
            if not isinstance(step, tuple):
                messages.append({"role": "assistant", "content": [{"text": step}]})
                return messages
            name, tool_input = step
            use_id = f"tooluse_{step_number}"
            result = getattr(tools, name)(**tool_input)
            use = {"toolUseId": use_id, "name": name, "input": tool_input}
            answer = {"toolUseId": use_id, "status": result.get("status"), "content": result.get("content", [])}
            messages.append({"role": "assistant", "content": [{"toolUse": use}]})
            messages.append({"role": "user", "content": [{"toolResult": answer}]})
        messages.append({"role": "assistant", "content": [{"text": f"stopped after {max_steps} tool calls"}]})
        return messages

    def _next_step(
        self, request: JudgeRequest, episode: int, calls: list[ToolExchange]
    ) -> tuple[str, dict[str, Any]] | str:
        last = {call.name: call for call in calls}  # each tool's latest call
        tries = Counter(call.name for call in calls)
        base = {"root": request.root, "episode": episode}
        sample = {**base, "n_frames": request.n_frames, "include_images": request.images}
        for name, tool_input in (("read_predicate_verdict", base), ("load_episode", base), ("sample_frames", sample)):
            done = last.get(name)
            if done is None:
                return name, tool_input
            if not done.ok:
                if name == "sample_frames" and tries[name] == 1 and done.input.get("include_images"):
                    return name, {**sample, "include_images": False}  # once more, state only
                return f"episode {episode}: not labelled ({done.text()})"
        written = last.get("write_label")
        if written is None:
            payload = last["sample_frames"].json()
            grade = grade_episode(
                payload.get("signals", {}),
                self.profile(last["load_episode"].json().get("root", request.root)),
                last["read_predicate_verdict"].json().get("deterministic"),
                episode=episode,
                state_names=payload.get("state_names") or (),
            )
            return "write_label", {
                **base,
                "quality": grade.quality,
                "failure_mode": grade.failure_mode,
                "note": grade.note,
                "success_opinion": grade.success_opinion,
                "judge_model": JUDGE_MODEL,
            }
        if written.ok:
            judge = written.json().get("judge", {})
            return f"episode {episode}: {judge.get('quality')} ({judge.get('failure_mode')})"
        return f"episode {episode}: not labelled ({written.text()})"

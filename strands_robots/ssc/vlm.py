"""The L3 resolver: vision-language queries through a strands model (paper ``001``, App. F;
docs/ssc.md, "Construction and the cascade", L3: the model spec, the prompt, the frame
grid, the tolerant JSON reading and the failures that leave a query pending).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from strands_robots.errors import LabelsError, LabelValidationError
from strands_robots.ssc.cascade import L3Request
from strands_robots.ssc.records import other_hand

SYSTEM_PROMPT = "You are a robot-manipulation expert analyzing bimanual robot video. Answer strictly in JSON."
ARM_SCHEMA = (
    '{"arm": "left" | "right" | "coop" | "unsure", "confidence": "high" | "medium" | "low", '
    '"reasoning": "brief explanation"}'
)
SAME_SCHEMA = '{"same_object": true | false, "confidence": "high" | "medium" | "low", "reasoning": "brief explanation"}'

#: ``(start, end)`` of a subtask window -> PNG bytes of the frame grid (or None).
FramesProvider = Callable[[int, int], bytes | None]


class ModelReplyError(LabelsError, ValueError):
    """A model reply holds no JSON object even after tolerant extraction."""


def _tail(req: L3Request, schema: str) -> str:
    objects = ", ".join(req.object_list) if req.object_list else "(not listed)"
    return (
        f"IMPORTANT: Only these objects exist in the scene: {objects}. "
        "Do NOT identify or reference objects not in this list.\n"
        f"Respond in JSON format:\n{schema}"
    )


def compose_prompt(req: L3Request) -> str:
    """The App. F prompt text for one query.

    ``arm_assignment`` uses the single template; ``same_object`` branches on
    ``req.branch``: ``a`` (both arms act on the same-named object), ``b`` (one arm
    acquires while the other holds one), ``c`` (arm not yet resolved).
    """
    head = f"In these frames from task '{req.task_name}':\n"
    if req.kind == "arm_assignment":
        return (
            head
            + f"Now robot is {req.action_description}{req.conditions}.{req.other_arm_context}\n"
            + "Which arm performs this action --- left, right, or coop?\n"
            + _tail(req, ARM_SCHEMA)
        )
    name = req.object_name
    if req.branch == "a":
        body = (
            f"Both arms are {req.action_description}.\n"
            f"Are they co-grasping the SAME physical {name}, or are they each holding a DIFFERENT {name} instance?\n"
        )
    elif req.branch == "b" and req.acting_arm in ("left", "right"):
        arm = req.acting_arm
        other = other_hand(arm)
        body = (
            f"{arm.capitalize()} arm is {req.action_description}. {other.capitalize()} arm already holds a {name}.\n"
            f"Is the {arm} arm picking the EXACT SAME physical {name} that the {other} arm holds, "
            "or a DIFFERENT one?\n"
        )
    else:
        body = (
            f"Both arms are reportedly holding a '{name}'.\n"
            f"Are they holding the SAME physical '{name}' cooperatively, or TWO DIFFERENT '{name}' instances?\n"
        )
    return head + body + _tail(req, SAME_SCHEMA)


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.S)


def _close_partial(text: str) -> str:
    """Close an unterminated string and unbalanced brackets of a JSON prefix."""
    stack: list[str] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    out = text + ('"' if in_str else "")
    out = re.sub(r"[,:\s]+$", "", out)  # a dangling comma or colon
    return out + "".join(reversed(stack))


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in a model reply.

    Handles Markdown code blocks, leading or trailing prose, trailing commas and
    partial JSON with missing closing braces (App. F, "Resolution ordering and parsing").

    Raises:
        ModelReplyError: no JSON object can be recovered; the message quotes the reply.
    """
    if not isinstance(text, str):
        raise ModelReplyError(f"model reply is not text: {type(text).__name__}")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        start = cand.find("{")
        while start != -1:
            chunk = cand[start:]
            for attempt in (chunk, re.sub(r",\s*([}\]])", r"\1", chunk), _close_partial(chunk)):
                try:
                    obj, _ = decoder.raw_decode(attempt)
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict):
                    return obj
            start = cand.find("{", start + 1)
    snippet = text.strip().replace("\n", " ")[:200]
    raise ModelReplyError(f"no JSON object in the model reply: {snippet!r}")


def grid_png(rows: Sequence[Sequence[np.ndarray]], *, tile_height: int = 224) -> bytes:
    """Compose image rows (cameras) of tiles (start, middle, end) into one PNG.

    Args:
        rows: ``rows[camera][k]`` = HxWx3 uint8 array.
        tile_height: Height each tile is scaled to (pixels).
    """
    from PIL import Image

    def scaled(arr: np.ndarray) -> Any:
        img = Image.fromarray(np.asarray(arr, dtype=np.uint8))
        return img.resize((max(1, round(img.width * tile_height / max(1, img.height))), tile_height))

    tiles = [[scaled(arr) for arr in row] for row in rows]
    width = max(sum(t.width for t in row) for row in tiles)
    canvas = Image.new("RGB", (width, tile_height * len(tiles)))
    for r, row in enumerate(tiles):
        x = 0
        for t in row:
            canvas.paste(t, (x, r * tile_height))
            x += t.width
    buf = io.BytesIO()
    canvas.save(buf, format="PNG")
    return buf.getvalue()


def window_frames(start: int, end: int) -> list[int]:
    """Start, middle and last frame of ``[start, end)`` (deduplicated)."""
    last = max(start, end - 1)
    return sorted({start, (start + last) // 2, last})


def dataset_frames(
    dataset: Any, episode: int, *, cameras: Sequence[str] | None = None, max_side: int = 320
) -> FramesProvider:
    """A frames provider decoding a LeRobot episode with ``strands_robots.dataset``.

    Cameras whose video is absent are skipped; with no decodable camera the provider
    returns None and the query is asked on text alone.
    """
    keys = list(cameras if cameras is not None else getattr(dataset, "camera_keys", []))
    length = dataset.episodes[episode].length

    def provide(start: int, end: int) -> bytes | None:
        frames = [min(f, length - 1) for f in window_frames(start, min(end, length))]
        rows = []
        for cam in keys:
            try:
                rows.append(dataset.decode_frames(episode, cam, frames, max_side=max_side))
            except (FileNotFoundError, LabelsError):
                continue
        return grid_png(rows) if rows else None

    return provide


class VLMResolver:
    """L3 resolver calling a strands model with the App. F prompts.

    Args:
        model: A ``PROVIDER:MODEL_ID`` spec or a strands ``Model`` object.
        frames: Provider of the frame grid for a window, or None for text-only queries.
        **model_kwargs: Passed to :func:`~strands_robots.model_spec.build_model`.

    Attributes:
        calls: Number of model calls made.
        failures: One line per call that produced no usable answer.
        transcript: ``{"prompt", "reply", "answer"}`` per call (for audit).

    Raises:
        LabelValidationError: ``model`` is None (a model must be chosen explicitly).
        ModelSpecError: a bad spec or a missing provider SDK.
    """

    def __init__(self, model: Any, *, frames: FramesProvider | None = None, **model_kwargs: Any) -> None:
        from strands_robots.model_spec import build_model

        if model is None:
            raise LabelValidationError("VLMResolver needs a model: pass a 'PROVIDER:MODEL_ID' spec or a strands Model.")
        self.model = build_model(model, **model_kwargs)
        self.frames = frames
        self.calls = 0
        self.failures: list[str] = []
        self.transcript: list[dict[str, Any]] = []

    def __call__(self, request: L3Request) -> Mapping[str, Any] | None:
        """Ask the model one query; the parsed JSON answer, or None on failure."""
        from strands import Agent

        prompt = compose_prompt(request)
        content: list[dict[str, Any]] = [{"text": prompt}]
        image = self.frames(request.start, request.end) if self.frames is not None else None
        if image:
            content.append({"image": {"format": "png", "source": {"bytes": image}}})
        self.calls += 1
        record: dict[str, Any] = {"st_idx": request.st_idx, "kind": request.kind, "prompt": prompt, "reply": None}
        self.transcript.append(record)
        try:
            agent = Agent(model=self.model, system_prompt=SYSTEM_PROMPT, tools=[], callback_handler=None)
            reply = str(agent(cast(Any, content)))
        except Exception as exc:  # a provider error must not lose the chain; it is recorded
            self.failures.append(f"st{request.st_idx} {request.kind}: model call failed: {type(exc).__name__}: {exc}")
            return None
        record["reply"] = reply
        try:
            answer = extract_json(reply)
        except ModelReplyError as exc:
            self.failures.append(f"st{request.st_idx} {request.kind}: {exc}")
            return None
        record["answer"] = answer
        return answer

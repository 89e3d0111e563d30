"""A fake vision-language model server on loopback: five providers' wire formats, scripted, logged.

Serves

- ``POST /v1/chat/completions``: OpenAI's chat completions, streaming as server-sent
  events or not, as the request asks;
- ``POST /api/chat``: ollama's chat, streaming as JSON lines or not;
- ``POST /v1/messages``: Anthropic's Messages API, streaming as server-sent events or not;
- ``POST /v1beta/models/MODEL:generateContent`` and ``:streamGenerateContent`` (server-sent
  events): Gemini's API;
- ``POST /model/MODEL/converse`` and ``/converse-stream`` (AWS event-stream frames):
  the Bedrock runtime's Converse API.

Every request is logged (:attr:`FakeVLM.log`: path, body bytes, parsed body, images, the
reply and the usage reported), so a test can compare what a client says it sent with what
arrived. The conversation of any of these formats is read through :func:`as_chat` (one
view: OpenAI-style messages) to decide the next reply.

Replies come from a script (:meth:`FakeVLM.push`), then from the judge policy
(:func:`judge_step`), which plays a well-behaved judge: ``read_predicate_verdict``,
``sample_frames`` (with images when the prompt asks), ``write_label``, a final text.
Faults a step can carry: an HTTP status (500, 429, ...), a dropped connection, a
malformed tool call (arguments that are not JSON), a delay before the answer.

``GET /_log`` answers the log's totals (:meth:`FakeVLM.totals`) as JSON.

By hand (then point the judge at it)::

    python -m tests.fake_vlm --port 8000 [--delay 0.2]
    strands-labels judge ROOT --model openai:fake-vlm --base-url http://127.0.0.1:8000/v1
    strands-labels judge ROOT --model ollama:fake-vlm --base-url http://127.0.0.1:8000

In tests: ``with FakeVLM() as server: ... server.openai_url ...`` (a free port on
127.0.0.1, stopped on exit).
"""

from __future__ import annotations

import argparse
import json
import re
import select
import socket
import struct
import threading
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from strands_robots.judges.heuristic import parse_request

#: Output tokens every reply reports.
OUTPUT_TOKENS = 7


@dataclass
class Step:
    """One scripted reply.

    Attributes:
        kind: ``"auto"`` (the judge policy), ``"tool"``, ``"text"``, ``"status"`` (an HTTP
            error), ``"drop"`` (close the connection without an answer) or ``"malformed"``
            (a tool call whose arguments are not JSON; ollama: not an object).
        name: Tool name (``"tool"``, ``"malformed"``).
        arguments: Tool arguments (``"tool"``).
        text: Reply text (``"text"``) or error text (``"status"``).
        status: HTTP status (``"status"``).
        delay: Seconds to wait before answering.
    """

    kind: str = "auto"
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    status: int = 200
    delay: float = 0.0


@dataclass
class Logged:
    """One request as the server received it."""

    path: str
    body_bytes: int
    body: dict[str, Any]
    images: int
    reply: str
    status: int
    usage: dict[str, int] | None
    started: float
    finished: float = 0.0


def _client_gone(connection: socket.socket) -> bool:
    """The client closed its end (e.g. after its timeout): a peek reads end-of-file."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


#: Path -> wire format.
_ROUTES = (
    (re.compile(r"^/v1/chat/completions$"), "openai"),
    (re.compile(r"^/api/chat$"), "ollama"),
    (re.compile(r"^/v1/messages$"), "anthropic"),
    (re.compile(r"^(?:/v1(?:beta)?)?/models/[^/:]+:(?:stream)?[gG]enerateContent$"), "gemini"),
    (re.compile(r"^/model/[^/]+/converse(?:-stream)?$"), "bedrock"),
)


def wire_format(path: str) -> str | None:
    """``openai``, ``ollama``, ``anthropic``, ``gemini`` or ``bedrock`` for a request path (None: unknown)."""
    return next((name for pattern, name in _ROUTES if pattern.match(path)), None)


def _is_image(value: dict[str, Any]) -> bool:
    """An image part of any of the formats (OpenAI ``image_url``, Anthropic ``image``,
    Gemini ``inlineData``, Bedrock ``image``)."""
    if value.get("type") in ("image_url", "image"):
        return True
    if "inlineData" in value or "inline_data" in value:
        return True
    return isinstance(value.get("image"), dict) and "source" in value["image"]


def _count_images(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if _is_image(value) else 0
        return own + sum(_count_images(v) for k, v in value.items() if k not in ("image_url", "inlineData", "image"))
    if isinstance(value, list):
        return sum(_count_images(v) for v in value)
    return 0


def _images_in(path: str, body: dict[str, Any]) -> int:
    if wire_format(path) == "ollama":
        return sum(len(message.get("images") or []) for message in body.get("messages", []))
    return _count_images(body.get("messages", body.get("contents", [])))


def _texts(blocks: Any) -> str:
    """The text of a content value of any format (a string, or blocks with ``text``)."""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        return json.dumps(blocks)
    out = []
    for block in blocks:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif isinstance(block, dict) and "json" in block:
            out.append(json.dumps(block["json"]))
    return "\n".join(out)


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": arguments}}


def as_chat(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The conversation of a request of any format as OpenAI-style ``{"messages": [...]}``:
    ``user`` text, ``assistant`` ``tool_calls`` and ``tool`` results (their text)."""
    kind = wire_format(path)
    if kind in ("openai", "ollama", None):
        return body
    messages: list[dict[str, Any]] = []
    if kind == "gemini":
        for content in body.get("contents", []):
            role = "assistant" if content.get("role") == "model" else "user"
            text, calls = [], []
            for part in content.get("parts", []):
                call = part.get("functionCall") or part.get("function_call")  # the API reads either spelling
                answer = part.get("functionResponse") or part.get("function_response")
                if call is not None:
                    calls.append(_call(call.get("name", ""), call.get("args", {})))
                elif answer is not None:
                    messages.append({"role": "tool", "content": json.dumps(answer.get("response"))})
                elif isinstance(part.get("text"), str):
                    text.append(part["text"])
            messages.append({"role": role, "content": "\n".join(text), **({"tool_calls": calls} if calls else {})})
        return {"messages": messages}
    use, result, call_name, call_input = (
        ("tool_use", "tool_result", "name", "input")
        if kind == "anthropic"
        else ("toolUse", "toolResult", "name", "input")
    )
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            messages.append({"role": message.get("role"), "content": content})
            continue
        text, calls = [], []
        for block in content or []:
            if kind == "anthropic" and block.get("type") == use:
                calls.append(_call(block.get(call_name, ""), block.get(call_input, {})))
            elif kind == "anthropic" and block.get("type") == result:
                messages.append({"role": "tool", "content": _texts(block.get("content", []))})
            elif kind == "bedrock" and use in block:
                calls.append(_call(block[use].get(call_name, ""), block[use].get(call_input, {})))
            elif kind == "bedrock" and result in block:
                messages.append({"role": "tool", "content": _texts(block[result].get("content", []))})
            elif isinstance(block.get("text"), str):
                text.append(block["text"])
        role = message.get("role")
        messages.append({"role": role, "content": "\n".join(text), **({"tool_calls": calls} if calls else {})})
    return {"messages": messages}


def event_stream_frame(event_type: str, payload: dict[str, Any]) -> bytes:
    """One AWS event-stream message (the framing of Bedrock's ``ConverseStream`` answers).

    Layout: total length, headers length, CRC32 of those 8 bytes, headers (``:event-type``,
    ``:content-type``, ``:message-type``, each a string header: name length, name, type 7,
    value length, value), the JSON payload, CRC32 of everything before it.
    """
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")):
        encoded = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(encoded)) + encoded
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _calls(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of the conversation so far, with arguments, in order."""
    out = []
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            arguments = function.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    arguments = {}
            out.append((function.get("name", ""), arguments if isinstance(arguments, dict) else {}))
    return out


def judge_step(body: dict[str, Any]) -> Step:
    """What a well-behaved judge does next, read from the conversation in ``body``."""
    messages = body.get("messages", [])
    prompt = next((_text_of(m) for m in messages if m.get("role") == "user"), "")
    request = parse_request(prompt)
    if request is None:
        return Step("text", text="I was not asked to label an episode.")
    root, episode = request.root, request.episodes[0]
    tool_texts = [_text_of(m) for m in messages if m.get("role") == "tool"]
    if any("label written" in text or "label recorded" in text for text in tool_texts):
        return Step("text", text=f"Episode {episode} labelled.")
    called = [name for name, arguments in _calls(body) if "root" in arguments]  # malformed calls do not count
    if "read_predicate_verdict" not in called:
        return Step("tool", "read_predicate_verdict", {"root": root, "episode": episode})
    if "sample_frames" not in called:
        arguments = {"root": root, "episode": episode, "n_frames": request.n_frames, "include_images": request.images}
        return Step("tool", "sample_frames", arguments)
    arguments = {"root": root, "episode": episode, "quality": "medium", "note": "fake judge: looked at the frames."}
    return Step("tool", "write_label", arguments)


class FakeVLM:
    """The server. Args: ``port`` (0: a free one), ``delay`` (seconds before every answer)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, delay: float = 0.0) -> None:
        self.delay = delay
        self.log: list[Logged] = []
        self._script: deque[Step] = deque()
        self._lock = threading.Lock()
        self._counter = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                if self.path == "/api/show":  # ollama's model details (litellm asks): not a model request, not logged
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    body = json.dumps({"capabilities": ["completion", "tools", "vision"], "model_info": {}}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                server._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/_log":  # the request log's totals (a server in another process)
                    body = json.dumps(server.totals()).encode()
                else:
                    body = b'{"models": []}' if self.path.startswith("/api/") else b'{"data": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- control --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (ollama's base URL)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI base URL)."""
        return f"{self.url}/v1"

    def push(self, *steps: Step) -> None:
        """Script the next replies (then the judge policy answers)."""
        with self._lock:
            self._script.extend(steps)

    def start(self) -> FakeVLM:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-vlm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeVLM:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until every logged request has been answered (or given up on)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self._lock:
                if all(e.finished for e in self.log):
                    return
            time.sleep(0.05)

    def totals(self) -> dict[str, int]:
        """Requests, body bytes, images, input and output tokens over :attr:`log` (answered or not;
        tokens of delivered answers only), once every request is finished."""
        self.wait_idle()
        with self._lock:
            log = list(self.log)
        return {
            "requests": len(log),
            "request_bytes": sum(e.body_bytes for e in log),
            "images": sum(e.images for e in log),
            "input_tokens": sum((e.usage or {}).get("input", 0) for e in log),
            "output_tokens": sum((e.usage or {}).get("output", 0) for e in log),
        }

    # -- serving ----------------------------------------------------------------------------
    def _next(self, path: str, body: dict[str, Any]) -> Step:
        with self._lock:
            step = self._script.popleft() if self._script else Step()
        if step.kind == "auto":
            auto = judge_step(as_chat(path, body))
            auto.delay = step.delay
            return auto
        return step

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.time()
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        path = handler.path.split("?")[0].replace("%3A", ":").replace("%3a", ":")
        step = self._next(path, body)
        usage = (
            {"input": max(1, len(raw) // 4), "output": OUTPUT_TOKENS} if step.kind not in ("status", "drop") else None
        )
        entry = Logged(path, len(raw), body, _images_in(path, body), step.kind, step.status, None, started)
        with self._lock:
            self.log.append(entry)
            self._counter += 1
            call_id = f"call_{self._counter}"
        delay = self.delay + step.delay
        if delay:
            time.sleep(delay)
        if _client_gone(handler.connection):  # the client timed out meanwhile: nothing is delivered
            entry.reply, entry.usage, entry.finished = "client gone", None, time.time()
            handler.close_connection = True
            return
        try:
            if step.kind == "drop":
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
            elif step.kind == "status":
                self._error(handler, path, step)
            elif wire_format(path) == "ollama":
                self._ollama(handler, body, step, usage or {}, call_id)
            elif wire_format(path) == "openai":
                self._openai(handler, body, step, usage or {}, call_id)
            elif wire_format(path) == "anthropic":
                self._anthropic(handler, body, step, usage or {}, call_id)
            elif wire_format(path) == "gemini":
                self._gemini(handler, path, step, usage or {}, call_id)
            elif wire_format(path) == "bedrock":
                self._bedrock(handler, path, step, usage or {}, call_id)
            else:
                self._error(handler, path, Step("status", status=404, text=f"no route {path}"))
            entry.usage = usage  # reported: the answer went out
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        entry.finished = time.time()

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: bytes, kind: str) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def _error(self, handler: BaseHTTPRequestHandler, path: str, step: Step) -> None:
        text = step.text or f"scripted failure {step.status}"
        kind = wire_format(path)
        if kind == "ollama":
            payload: dict[str, Any] = {"error": text}
        elif kind == "anthropic":
            payload = {"type": "error", "error": {"type": "api_error", "message": text}}
        elif kind == "gemini":
            payload = {"error": {"code": step.status, "message": text, "status": "INTERNAL"}}
        elif kind == "bedrock":
            error_type = {429: "ThrottlingException", 400: "ValidationException", 403: "AccessDeniedException"}
            name = error_type.get(step.status, "InternalServerException")
            payload = {"message": text}
            handler.send_response(step.status)
            handler.send_header("x-amzn-ErrorType", f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/")
            encoded = json.dumps(payload).encode()
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(encoded)))
            handler.end_headers()
            handler.wfile.write(encoded)
            return
        else:
            payload = {"error": {"message": text, "type": "server_error", "code": str(step.status)}}
        self._send(handler, step.status, json.dumps(payload).encode(), "application/json")

    @staticmethod
    def _arguments_text(step: Step) -> str:
        return '{"root": "unterminated' if step.kind == "malformed" else json.dumps(step.arguments)

    def _openai(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: Step, usage: dict[str, int], call_id: str
    ) -> None:
        model = body.get("model", "fake-vlm")
        usage_block = {
            "prompt_tokens": usage["input"],
            "completion_tokens": usage["output"],
            "total_tokens": usage["input"] + usage["output"],
        }
        tool = step.kind in ("tool", "malformed")
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": step.name, "arguments": self._arguments_text(step)},
        }
        finish = "tool_calls" if tool else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": None if tool else step.text}
            if tool:
                message["tool_calls"] = [call]
            payload = {
                "id": f"chatcmpl-{call_id}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage_block,
            }
            self._send(handler, 200, json.dumps(payload).encode(), "application/json")
            return
        base = {
            "id": f"chatcmpl-{call_id}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        delta: dict[str, Any] = {"role": "assistant"}
        if tool:
            delta["tool_calls"] = [{"index": 0, **call}]
        else:
            delta["content"] = step.text
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage_block})
        payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(handler, 200, payload.encode(), "text/event-stream")

    def _ollama(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: Step, usage: dict[str, int], call_id: str
    ) -> None:
        model = body.get("model", "fake-vlm")
        stamp = "2026-01-01T00:00:00Z"
        message: dict[str, Any] = {"role": "assistant", "content": "" if step.kind != "text" else step.text}
        if step.kind == "tool":
            message["tool_calls"] = [{"function": {"name": step.name, "arguments": step.arguments}}]
        elif step.kind == "malformed":
            message["tool_calls"] = [{"function": {"name": step.name, "arguments": {"episode": "not a number"}}}]
        final = {
            "model": model,
            "created_at": stamp,
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "prompt_eval_count": usage["input"],
            "eval_count": usage["output"],
        }
        if body.get("stream", True):
            lines = [{"model": model, "created_at": stamp, "message": message, "done": False}, final]
            payload = "".join(json.dumps(line) + "\n" for line in lines)
            self._send(handler, 200, payload.encode(), "application/x-ndjson")
        else:
            self._send(handler, 200, json.dumps({**final, "message": message}).encode(), "application/json")

    def _anthropic(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], step: Step, usage: dict[str, int], call_id: str
    ) -> None:
        model = body.get("model", "fake-vlm")
        tool = step.kind in ("tool", "malformed")
        stop = "tool_use" if tool else "end_turn"
        if tool:
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{call_id}", "name": step.name, "input": {}}
            delta: dict[str, Any] = {"type": "input_json_delta", "partial_json": self._arguments_text(step)}
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
        message = {
            "id": f"msg_{call_id}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": usage["input"], "output_tokens": 0},
        }
        if not body.get("stream"):
            final = dict(block)
            if tool:
                final["input"] = step.arguments
            else:
                final["text"] = step.text
            whole = {**message, "content": [final], "stop_reason": stop}
            whole["usage"] = {"input_tokens": usage["input"], "output_tokens": usage["output"]}
            self._send(handler, 200, json.dumps(whole).encode(), "application/json")
            return
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": usage["output"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        self._send(handler, 200, payload.encode(), "text/event-stream")

    def _gemini(
        self, handler: BaseHTTPRequestHandler, path: str, step: Step, usage: dict[str, int], call_id: str
    ) -> None:
        if step.kind == "tool":
            part: dict[str, Any] = {"functionCall": {"id": call_id, "name": step.name, "args": step.arguments}}
        elif step.kind == "malformed":  # Gemini's arguments are an object: a wrong type stands in for bad JSON
            part = {"functionCall": {"id": call_id, "name": step.name, "args": {"episode": "not a number"}}}
        else:
            part = {"text": step.text}
        answer = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": usage["input"],
                "candidatesTokenCount": usage["output"],
                "totalTokenCount": usage["input"] + usage["output"],
            },
            "modelVersion": path.split("/")[-1].split(":")[0],
        }
        if path.endswith(":streamGenerateContent"):
            self._send(handler, 200, f"data: {json.dumps(answer)}\r\n\r\n".encode(), "text/event-stream")
        else:
            self._send(handler, 200, json.dumps(answer).encode(), "application/json")

    def _bedrock(
        self, handler: BaseHTTPRequestHandler, path: str, step: Step, usage: dict[str, int], call_id: str
    ) -> None:
        tool = step.kind in ("tool", "malformed")
        stop = "tool_use" if tool else "end_turn"
        numbers = {"inputTokens": usage["input"], "outputTokens": usage["output"]}
        numbers["totalTokens"] = numbers["inputTokens"] + numbers["outputTokens"]
        if not path.endswith("/converse-stream"):
            block: dict[str, Any] = (
                {"toolUse": {"toolUseId": f"tooluse_{call_id}", "name": step.name, "input": step.arguments}}
                if tool
                else {"text": step.text}
            )
            answer = {
                "output": {"message": {"role": "assistant", "content": [block]}},
                "stopReason": stop,
                "usage": numbers,
                "metrics": {"latencyMs": 1},
            }
            self._send(handler, 200, json.dumps(answer).encode(), "application/json")
            return
        if tool:
            start = {
                "contentBlockIndex": 0,
                "start": {"toolUse": {"toolUseId": f"tooluse_{call_id}", "name": step.name}},
            }
            delta = {"contentBlockIndex": 0, "delta": {"toolUse": {"input": self._arguments_text(step)}}}
            frames = [("contentBlockStart", start), ("contentBlockDelta", delta)]
        else:
            frames = [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": step.text}})]
        events = [
            ("messageStart", {"role": "assistant"}),
            *frames,
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("messageStop", {"stopReason": stop}),
            ("metadata", {"usage": numbers, "metrics": {"latencyMs": 1}}),
        ]
        payload = b"".join(event_stream_frame(name, data) for name, data in events)
        self._send(handler, 200, payload, "application/vnd.amazon.eventstream")


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.fake_vlm --port 8000``: serve until Ctrl-C, one line per request."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--quiet", action="store_true", help="print no line per request")
    args = parser.parse_args(argv)
    server = FakeVLM(port=args.port, delay=args.delay).start()
    print(f"fake VLM on {server.openai_url} (OpenAI) and {server.url} (ollama); Ctrl-C stops it", flush=True)
    shown = 0
    try:
        while True:
            time.sleep(0.5)
            for entry in [] if args.quiet else server.log[shown:]:
                print(f"{entry.path} {entry.body_bytes} bytes, {entry.images} images -> {entry.reply}", flush=True)
            shown = len(server.log)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()

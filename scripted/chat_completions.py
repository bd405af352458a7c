"""A scripted OpenAI-format backend: POST /v1/chat/completions, for gateways that translate.

LiteLLM's proxy turns a Messages request into a chat-completions request when the model behind
it speaks OpenAI's format. This server stands behind it in tests, playing the same scenarios as
scripted/server.py (a turn's `text`, `tool_calls` or `error`, and `expect:
tool_result_contains`), in the shapes OpenAI's own SDK reads (openai/openai-python,
src/openai/types/chat/: chat_completion.py, the chat.completion object;
chat_completion_chunk.py, the stream of chat.completion.chunk objects, ended by `data: [DONE]`,
a tool call's `id`, `type: function` and `function.arguments` as a JSON string, and the last
chunk's usage with empty `choices` when stream_options.include_usage asks for it;
shared/error_object.py, the error).

    gateway ──▶ POST /v1/chat/completions ──▶ next turn ──▶ JSON, or chunks then [DONE]
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

from scripted.record import LoopbackServer
from scripted.server import check_scenario

CREATED = 1_767_225_600  # a fixed time, so that replies are the same each run


class ChatHandler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions, answered by the ScriptedChatCompletions that owns the
    server."""

    server_version = "scripted-chat-completions"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.split("?")[0] != "/v1/chat/completions":
            self._send_json(404, error_body(f"Not found: POST {self.path}"))
            return
        body = json.loads(raw or b"{}")
        status, reply = self.server.owner.answer(body)
        if status != 200 or not body.get("stream"):
            self._send_json(status, reply)
            return
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for data in chunks_of(reply, with_usage):
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _send_json(self, status: int, body: dict) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ScriptedChatCompletions(LoopbackServer):
    """`start()` it (its URL), `play()` a scenario, send requests, then read `requests` and
    `problems`."""

    handler = ChatHandler
    url = ""  # where it serves, once started

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = 0
        self.play({"turns": []})

    def start(self) -> str:
        self.url = super().start()
        return self.url

    def play(self, scenario: dict) -> None:
        check_scenario(scenario)
        with self._lock:
            self._turns = deque(scenario["turns"])
            self.requests: list[dict] = []
            self.problems: list[str] = []

    def remaining(self) -> int:
        return len(self._turns)

    def answer(self, body: dict) -> tuple[int, dict]:
        with self._lock:
            self.requests.append(body)
            if not self._turns:
                self.problems.append("scripted scenario has no turn left for this request")
                return 400, error_body("no turn left")
            turn = self._turns.popleft()
            if "error" in turn:  # in OpenAI's shape, as the backend's own refusal
                return turn["error"]["status"], error_body(turn["error"].get("message", ""))
            wanted = turn.get("expect", {}).get("tool_result_contains")
            if wanted is not None and not any(
                message.get("role") == "tool" and wanted in text_of(message.get("content"))
                for message in body.get("messages", [])
            ):
                self.problems.append(f"expect failed: no tool message contains {wanted!r}")
                return 400, error_body(self.problems[-1])
            return 200, self._completion(turn, body)

    def _completion(self, turn: dict, body: dict) -> dict:
        calls = [
            {
                "id": self._next_id("call_scripted"),
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call.get("input", {}))},
            }
            for call in turn.get("tool_calls", [])
        ]
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
        if calls:
            message["tool_calls"] = calls
        prompt = len(json.dumps(body.get("messages", []))) // 4
        completion = max(1, len(json.dumps(message)) // 4)
        return {
            "id": self._next_id("chatcmpl-scripted"),
            "object": "chat.completion",
            "created": CREATED,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids:04d}"


def text_of(content: Any) -> str:
    """A chat message's content: a string, or a list of text parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def error_body(message: str) -> dict:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }


def chunks_of(completion: dict, with_usage: bool) -> list[dict]:
    """The completion as the stream of chunks that rebuilds it: the role, the text, each tool
    call (its id and name first, then its arguments), the finish reason, then the usage."""
    choice, base = completion["choices"][0], {**completion, "object": "chat.completion.chunk"}
    del base["usage"]

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    message = choice["message"]
    chunks = [chunk({"role": "assistant", "content": ""})]
    if message.get("content"):
        chunks.append(chunk({"content": message["content"]}))
    for index, call in enumerate(message.get("tool_calls", [])):
        opening = {
            **call,
            "index": index,
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        arguments = {"index": index, "function": {"arguments": call["function"]["arguments"]}}
        chunks += [chunk({"tool_calls": [opening]}), chunk({"tool_calls": [arguments]})]
    chunks.append(chunk({}, choice["finish_reason"]))
    if with_usage:
        chunks.append({**base, "choices": [], "usage": completion["usage"]})
    return chunks

"""A scripted Messages API: real HTTP, real SDK, scripted model.

Tests and the offline demo point the official `anthropic` SDK at this server
instead of at Claude. The agent code runs unchanged; only the "model" is a
script. Every request is first checked against the API's own rules (in
`scripted/rules.py`: a `tool_use` without its `tool_result` is an HTTP 400
here too), then answered with the next turn of the script, as JSON or as the
SSE stream the SDK parses.

    agent ──SDK──▶ POST /v1/messages ──▶ API rules ok? ──no──▶ 400, api.violations
                                              │ yes
                                              ▼
                 next turn of the matching track ──▶ JSON or SSE reply
                 (expect failed / no turn left ──▶ 400, api.problems)

A scenario is plain data, usually a YAML file:

    name: create and run a file
    task: "Create hello.py and run it."    # the demo uses it as the user's task
    turns:                                  # one entry per model call, in order
      - text: "I'll write the file."
        tool_calls:
          - name: write_file
            input: {path: hello.py, content: "print('hi')\\n"}
      - expect: {tool_result_contains: "wrote"}   # checked on the request that gets this turn
        text: "Done."
      - error: {status: 429, message: "slow down"}
    tracks:                                 # optional scripts for concurrent subagents
      - match: "find the auth code"         # a substring of the request's first user message
        turns: [{text: "It is in auth.py."}]
      - match: "Write a summary"            # in: last -- a substring of its last user message
        in: last                            # (a question appended to the whole history)
        turns: [{text: "We read a.py.", repeat: 3}]

Turn keys: `thinking` (the model's thinking before it writes: a signed thinking
block, as the request's model and `thinking.display` return it); `text` (on a
model that puts the notes between tool calls in thinking blocks, a text that
comes with tool calls is one of those); `tool_calls` (each `name`, `input`,
and `invalid: true` to skip the schema check); `stop_reason` (default
`tool_use` with tool calls, else `end_turn`; `max_tokens` leaves a thinking
block that comes last unsigned, as a reply cut before its signature); `expect`
(`tool_result_contains`, `tool_result_is_error`, `last_user_contains`,
`system_contains`, `tools`); `latency` in seconds;
`hold: true` (the reply waits, after its latency, until the test calls
`api.release()`, so the test decides what happens first; `hold: midway`
streams the first half of the reply's events, then waits the same way, as a
model stalls mid-sentence); `repeat: N`; or
`error` (`status`, `message`, `retry_after_ms`; `midstream: true` sends it as
an `event: error` inside an HTTP 200 stream, after the first half of the
turn's `text`) instead of content.

Scenario keys besides `turns` and `tracks`: `endpoint` (a row of
scripted/endpoints.py: the server answers as that endpoint does, from its auth
header to its error bodies; default `anthropic`); `rejects` (request fields that the
endpoint answers with 400 "Extra inputs are not permitted", as some
Anthropic-compatible endpoints do: `cache_control`, `thinking`,
`thinking.display`); `context_window` (tokens: a smaller window than the
model's, so that "prompt is too long" comes by size in a short test). Other
top-level keys (`name`, `task`, ...) are left for the reader.

Per model (scripted/models.py), as the real API does: thinking on or off by
default, signed thinking blocks checked when they come back, the notes
between tool calls in thinking blocks on 5.5-style models, prompt caching with
its per-model minimum, the largest max_tokens, and a 404 for an unknown model.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import hmac
import json
import os
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from scripted.endpoints import BY_NAME, EXTRA_INPUTS, Endpoint, unknown_endpoint
from scripted.models import MODELS, Model
from scripted.rules import (
    blocks_of,
    cache_breakpoint_errors,
    declared_tools,
    model_errors,
    plain_text,
    tool_results,
    validate_request,
)

# -- configuration --

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    # not the Messages API's: servers built on FastAPI answer a request that fails validation
    # with 422 (https://fastapi.tiangolo.com/tutorial/handling-errors/)
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
STOP_REASONS = {
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
}
TURN_KEYS = {
    "thinking",
    "text",
    "tool_calls",
    "stop_reason",
    "expect",
    "latency",
    "hold",
    "repeat",
    "error",
}
CALL_KEYS = {"name", "input", "invalid"}
ERROR_KEYS = {"status", "message", "retry_after_ms", "midstream", "param"}
REJECTABLE = {"cache_control", "thinking", "thinking.display"}  # what `rejects` may name
EXPECT_KEYS = {
    "tool_result_contains",
    "tool_result_is_error",
    "last_user_contains",
    "system_contains",
    "tools",
}
TEXT_CHUNK = 16  # characters per delta, so streaming shows in a terminal...
MAX_DELTAS = 400  # ...but a huge text is cut into at most about this many deltas
NO_TURN_LEFT = "scripted scenario has no turn left for this request"
HOLD_LIMIT = 30  # seconds a `hold: true` reply waits for api.release() before it goes out anyway
# A thinking block's signature proves that the API made the block, for this model, with this
# text: the real API refuses one that was changed, lost its signature, or came from another model.
# https://platform.claude.com/docs/en/build-with-claude/thinking (the signature is opaque and
# must come back unchanged); the fixed key keeps the docs' recorded requests the same each build.
SIGNING_KEY = b"scripted-messages-api"
# Prompt caching looks for an earlier cache entry at most this many blocks before a breakpoint.
# https://platform.claude.com/docs/en/build-with-claude/prompt-caching
CACHE_LOOKBACK = 20
CHARACTERS_PER_TOKEN = 4  # a deterministic stand-in for the tokenizer

# -- loading a scenario --


def load_scenario(path: str | Path) -> dict:
    """Read a YAML scenario and check its shape; a ValueError names the file and the step."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None
    return check_scenario(data, str(path))


def check_scenario(data: Any, source: str = "scenario") -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise ValueError(f"{source}: a scenario must be a mapping with a `turns` list")
    tracks = data.get("tracks", [])
    if not isinstance(tracks, list) or not all(
        isinstance(track, dict)
        and isinstance(track.get("match"), str)
        and track["match"]
        and isinstance(track.get("turns"), list)
        and track.get("in", "first") in ("first", "last")
        for track in tracks
    ):
        raise ValueError(
            f"{source}: `tracks` must be a list of mappings, each with a `match` and `turns` "
            "(and `in`: first or last)"
        )
    rejects = data.get("rejects", [])
    if not isinstance(rejects, list) or set(rejects) - REJECTABLE:
        raise ValueError(f"{source}: `rejects` is a list of fields among {sorted(REJECTABLE)}")
    if data.get("endpoint", "anthropic") not in BY_NAME:
        raise ValueError(f"{source}: `endpoint` is one of {sorted(BY_NAME)}")
    window = data.get("context_window", 1)
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        raise ValueError(f"{source}: `context_window` is a positive number of tokens")
    for track in [{"match": None, "turns": data["turns"]}, *tracks]:
        for number, turn in enumerate(track["turns"], 1):
            if problem := turn_shape_problem(turn):
                raise ValueError(f"{source}: {step_label(track['match'], number)}: {problem}")
    return data


def step_label(match: str | None, number: int) -> str:
    return f"turn {number}" if match is None else f"track {match!r}, turn {number}"


def turn_shape_problem(turn: Any) -> str | None:
    if not isinstance(turn, dict):
        return "a turn must be a mapping"
    if unknown := set(turn) - TURN_KEYS:
        return f"unknown key(s) {sorted(unknown)}; a turn may have {sorted(TURN_KEYS)}"
    if "error" in turn:
        error = turn["error"]
        content_keys = {"thinking", "text", "tool_calls", "stop_reason"}
        if isinstance(error, dict) and error.get("midstream"):
            content_keys = {"thinking", "tool_calls", "stop_reason"}  # the text it breaks off
        if content_keys & set(turn):
            return f"an `error` turn cannot also have {', '.join(sorted(content_keys))}"
        if (
            not isinstance(error, dict)
            or set(error) - ERROR_KEYS
            or error.get("status") not in ERROR_TYPES
        ):
            return (
                f"`error` needs a `status` in {sorted(ERROR_TYPES)} and may have "
                f"{sorted(ERROR_KEYS)}"
            )
    elif not {"thinking", "text", "tool_calls"} & set(turn):
        return "a turn needs `thinking`, `text`, `tool_calls` or `error`"
    for key in ("thinking", "text"):
        if key in turn and (not isinstance(turn[key], str) or not turn[key]):
            return f"`{key}` must be a non-empty string"
    calls = turn.get("tool_calls", [])
    if not isinstance(calls, list) or not all(is_tool_call(call) for call in calls):
        return (
            "each tool call needs a `name` and an `input` mapping, and may have "
            f"{sorted(CALL_KEYS)}"
        )
    if turn.get("stop_reason", "end_turn") not in STOP_REASONS:
        return f"`stop_reason` must be one of {sorted(STOP_REASONS)}"
    expect = turn.get("expect", {})
    if (
        not isinstance(expect, dict)
        or set(expect) - EXPECT_KEYS
        or not isinstance(expect.get("tools", []), list)
    ):
        return f"`expect` may have {sorted(EXPECT_KEYS)}, with `tools` a list of names"
    if not isinstance(turn.get("latency", 0), (int, float)) or turn.get("latency", 0) < 0:
        return "`latency` must be a number of seconds"
    if turn.get("hold", False) not in (True, False, "midway"):
        return "`hold` must be true, false or midway"
    if not isinstance(turn.get("repeat", 1), int) or turn.get("repeat", 1) < 1:
        return "`repeat` must be a positive integer"
    return None


def is_tool_call(call: Any) -> bool:
    return (
        isinstance(call, dict)
        and not set(call) - CALL_KEYS
        and isinstance(call.get("name"), str)
        and isinstance(call.get("input", {}), dict)
    )


# -- checking a turn against its request --


def expect_failures(expect: dict, body: dict) -> list[str]:
    last_user = next(message for message in reversed(body["messages"]) if message["role"] == "user")
    results, failures = tool_results(last_user), []
    if "tool_result_contains" in expect:
        results = [
            result for result in results if expect["tool_result_contains"] in plain_text(result)
        ]
        if not results:
            failures.append(
                "no tool_result in the last user message contains "
                f"{expect['tool_result_contains']!r}"
            )
    if "tool_result_is_error" in expect and not any(
        bool(result.get("is_error")) == expect["tool_result_is_error"] for result in results
    ):
        failures.append(f"no matching tool_result has is_error={expect['tool_result_is_error']}")
    if "last_user_contains" in expect and expect["last_user_contains"] not in plain_text(
        last_user["content"]
    ):
        failures.append(f"the last user message does not contain {expect['last_user_contains']!r}")
    if "system_contains" in expect and expect["system_contains"] not in plain_text(
        body.get("system", "")
    ):
        failures.append(f"the system prompt does not contain {expect['system_contains']!r}")
    if "tools" in expect and set(expect["tools"]) != set(declared_tools(body)):
        failures.append(
            f"the declared tools are {sorted(declared_tools(body))}, not {sorted(expect['tools'])}"
        )
    return failures


def tool_call_problems(calls: list[dict], body: dict) -> list[str]:
    """A scripted call that does not fit the request's tools is a typo in the scenario, not in the
    agent."""
    problems, declared = [], declared_tools(body)
    for call in [call for call in calls if not call.get("invalid")]:
        if call["name"] not in declared:
            problems.append(
                f"tool call {call['name']!r} is not among the declared tools {sorted(declared)}"
            )
        elif declared[call["name"]] is not None:
            validator = jsonschema.Draft202012Validator(declared[call["name"]])
            if error := jsonschema.exceptions.best_match(
                validator.iter_errors(call.get("input", {}))
            ):
                problems.append(
                    f"tool call {call['name']!r} does not fit its input_schema: {error.message}"
                )
    return problems


# -- composing a reply --


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def tokens(data: Any) -> int:
    return len(canonical(data)) // CHARACTERS_PER_TOKEN


def sign(model: str, thinking: str) -> str:
    """The signature of a thinking block: bound to the model and to the text the client got."""
    digest = hmac.new(SIGNING_KEY, f"{model}\n{thinking}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def signature_errors(body: dict) -> list[str]:
    """A thinking block must come back exactly as the API sent it, signature included. Not
    enforced: what the API answers to a thinking block without its `thinking` text (the SDK
    always sends it; no page says), here read as empty."""
    errors = []
    for i, message in enumerate(body["messages"]):
        if message["role"] != "assistant":
            continue
        for j, block in enumerate(blocks_of(message)):
            if block["type"] != "thinking":
                continue
            signature = block.get("signature")
            if not signature or signature != sign(body["model"], block.get("thinking", "")):
                errors.append(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
    return errors


def prompt_units(body: dict) -> list[dict]:
    """The request's blocks in the order a prompt cache reads them: tools, system, messages.
    A block's own cache_control is left out: moving a breakpoint does not change the prefix."""
    units = []
    for tool in body.get("tools") or []:
        units.append({"tool": without_cache_control(tool)})
    system = body.get("system")
    if isinstance(system, str) and system:
        system = [{"type": "text", "text": system}]
    for block in system or []:
        units.append({"system": without_cache_control(block)})
    for i, message in enumerate(body["messages"]):
        for block in blocks_of(message):
            units.append({"message": i, "role": message["role"], **without_cache_control(block)})
    return units


def without_cache_control(block: dict) -> dict:
    return {key: value for key, value in block.items() if key != "cache_control"}


def breakpoints(body: dict, units: list[dict]) -> list[int]:
    """Where the request's cache breakpoints fall, as prefix lengths in units: each block marked
    with cache_control, and for a top-level cache_control (automatic caching) the last
    cacheable block. Thinking blocks cannot carry a breakpoint. Not pinned by a test: automatic
    caching passing over a thinking block at the very end, which only a prefill of a thinking-only
    reply would send (no agent of ours does); do not rely on it."""
    marked = []
    for tool in body.get("tools") or []:
        marked.append("cache_control" in tool)
    system = body.get("system")
    if isinstance(system, list):
        marked += ["cache_control" in block for block in system]
    elif system:
        marked.append(False)
    for message in body["messages"]:
        marked += ["cache_control" in block for block in blocks_of(message)]
    found = [index + 1 for index, is_marked in enumerate(marked) if is_marked]
    if "cache_control" in body:
        cacheable = [
            index + 1
            for index, unit in enumerate(units)
            if unit.get("type") not in ("thinking", "redacted_thinking")
        ]
        if cacheable:
            found.append(cacheable[-1])
    return sorted(set(found))


def count_usage(body: dict, content: list[dict], model: Model, cache: dict[str, int]) -> dict:
    """Token counts (four characters of JSON a token) and prompt caching as documented: each
    breakpoint reads the longest prefix cached within CACHE_LOOKBACK blocks before it; a prefix
    shorter than the model's minimum is never written, silently; the longest breakpoint's prefix
    is written if it is not there yet. Input tokens are what neither read nor wrote.
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching"""
    units = prompt_units(body)
    keys, sizes, digest, characters = [""], [0], hashlib.sha256(body["model"].encode()), 0
    # Another tool_choice invalidates the cached messages, not the tools and system (the docs'
    # table of what invalidates the cache); none sent is "auto", the default with tools.
    choice = canonical(body.get("tool_choice") or {"type": "auto"})
    for unit in units:
        if unit.get("message") == 0 and choice:
            digest.update(choice.encode())  # keys only: the count of tokens stays as it was
            choice = ""
        text = canonical(unit)
        digest.update(text.encode())
        characters += len(text)
        keys.append(digest.hexdigest())
        sizes.append(characters // CHARACTERS_PER_TOKEN)
    read = 0
    marks = breakpoints(body, units)
    for mark in marks:
        for length in range(mark, max(mark - CACHE_LOOKBACK, 0), -1):
            if keys[length] in cache:
                read = max(read, sizes[length])
                break
    written = 0
    if marks and sizes[marks[-1]] >= model.cache_minimum and keys[marks[-1]] not in cache:
        written = max(sizes[marks[-1]] - read, 0)
    for mark in marks:
        if sizes[mark] >= model.cache_minimum:
            cache[keys[mark]] = sizes[mark]
    return {
        "input_tokens": max(sizes[-1] - read - written, 0),
        "output_tokens": max(1, tokens(content)),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
    }


def sse_events(message: dict, usage_at_end: bool = False) -> list[tuple[str, dict]]:
    """The same message as the event sequence the SDK's stream accumulator rebuilds. With
    usage_at_end, message_start counts nothing and message_delta carries every count, as some
    compatible endpoints stream (scripted/endpoints.py, `usage_at_start`)."""
    start_usage = {**message["usage"], "output_tokens": 1}
    end_usage = {"output_tokens": message["usage"]["output_tokens"]}
    if usage_at_end:
        start_usage = {"input_tokens": 0, "output_tokens": 0}
        end_usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    events = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening, delta_type, key, payload = (
                {"type": "text", "text": ""},
                "text_delta",
                "text",
                block["text"],
            )
        elif block["type"] == "thinking":
            opening = {"type": "thinking", "thinking": ""}
            if "signature" in block:  # an endpoint may send thinking blocks without one
                opening["signature"] = ""
            delta_type, key, payload = "thinking_delta", "thinking", block["thinking"]
        else:
            opening = {**block, "input": {}}
            delta_type, key, payload = "input_json_delta", "partial_json", to_json(block["input"])
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        events += [
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": delta_type, key: piece},
                },
            )
            for piece in chunks(payload)
        ]
        if block.get("signature"):  # the signature comes last; a block cut short has none
            delta = {"type": "signature_delta", "signature": block["signature"]}
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": end_usage,
            },
        )
    )
    return events + [("message_stop", {"type": "message_stop"})]


def broken_stream_events(
    message: dict, error: dict, usage_at_end: bool = False
) -> list[tuple[str, dict]]:
    """An HTTP 200 stream that breaks off: the first half of the message's events, then an
    `event: error`, as the API sends when it is overloaded mid-reply.
    https://platform.claude.com/docs/en/build-with-claude/streaming#error-events"""
    events = sse_events(message, usage_at_end)
    return events[: max(len(events) // 2, 1)] + [("error", error)]


def chunks(text: str) -> list[str]:
    size = max(TEXT_CHUNK, len(text) // MAX_DELTAS + 1)
    return [text[start : start + size] for start in range(0, len(text), size)]


def error_body(status: int, message: str) -> dict:
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
    }


def openai_error_body(status: int, message: str, param: str | None = None) -> dict:
    """An error as OpenAI-format servers write it, which some Messages-API endpoints answer with
    too (llama.cpp's server): no top-level `type`, the code beside the message.
    openai/openai-python: src/openai/types/shared/error_object.py (code, message, param, type)"""
    return {
        "error": {
            "message": message,
            "type": ERROR_TYPES.get(status, "api_error"),
            "param": param,  # the request field it is about, if the scenario names one
            "code": status,
        }
    }


# -- playing an endpoint (a row of scripted/endpoints.py) --


def endpoint_model(endpoint: Endpoint) -> Model:
    """A model that is not Claude, served by an endpoint of other models. It is played with the
    rules of a Claude model that takes every thinking type, prefill and a forced tool choice
    (Sonnet 4.6's), so that no rule of Claude's refuses what the row does not say it refuses.
    Its limits are the row's; where no source gives one, the largest of current Claude models.
    On a row that ignores the request's `thinking` (vLLM), whether the model thinks is the
    server's setting (vLLM's --reasoning-parser), not the request's: a scenario's `thinking`
    turn is played as the thinking it returns, whatever the request asks."""
    return replace(
        MODELS["claude-sonnet-4-6"],
        context_window=endpoint.context_window or 1_000_000,
        max_output=endpoint.max_output or 128_000,
        thinking_by_default="thinking" in endpoint.ignores,
    )


def uses_model_table(endpoint: Endpoint) -> bool:
    """Claude's own API, a gateway in front of it, or a proxy that passes Claude ids on."""
    return endpoint.model == "" or endpoint.model in MODELS


def auth_sent(headers: dict) -> set[str]:
    """Which of the two key headers the request carries."""
    sent = set()
    if headers.get("x-api-key"):
        sent.add("x-api-key")
    if headers.get("authorization"):
        sent.add("bearer")
    return sent


def as_seen_by(endpoint: Endpoint, body: dict) -> dict:
    """The request as the endpoint's model gets it: the fields it ignores are gone. Not played:
    `thinking.budget_tokens` (DeepSeek's row). Once a request is valid, nothing of the server
    reads the budget (the scripted model does not think by budget), so no client could tell
    whether it was dropped; the row lists it for the docs table, not for the tests."""
    seen = {key: value for key, value in body.items() if key not in endpoint.ignores}
    if "tool_result.is_error" in endpoint.ignores:
        seen["messages"] = [without_is_error(message) for message in body["messages"]]
    return seen


def without_is_error(message: dict) -> dict:
    if not isinstance(message.get("content"), list):
        return message
    blocks = [
        {key: value for key, value in block.items() if key != "is_error"}
        if block.get("type") == "tool_result"
        else block
        for block in message["content"]
    ]
    return {**message, "content": blocks}


def field_in(body: dict, name: str) -> bool:
    """`cache_control`, or a dotted `thinking.display`: the field is in the request."""
    outer, _, inner = name.partition(".")
    if not inner:
        return outer in body
    return isinstance(body.get(outer), dict) and inner in body[outer]


def thinking_as_returned(endpoint: Endpoint, content: list[dict]) -> list[dict]:
    """The reply's thinking blocks as the endpoint returns them (endpoints.THINKING)."""
    kind = endpoint.thinking or "signed"
    blocks = []
    for block in content:
        if block["type"] != "thinking" or kind == "signed":
            blocks.append(block)
        elif kind == "empty signature":
            blocks.append({**block, "signature": ""})
        elif kind == "no signature":
            blocks.append({"type": "thinking", "thinking": block["thinking"]})
        elif kind == "random signature":  # vLLM: a new uuid4().hex for each block
            blocks.append({**block, "signature": uuid.uuid4().hex})
    return blocks  # kind "none": no thinking block at all


# -- the server --


@dataclass
class Recorded:
    body: dict
    raw: bytes
    headers: dict  # names in lower case
    track: str  # "default", or the `match` of the track that answered
    size: int
    received: float = field(default_factory=time.monotonic)
    answered: float = 0.0  # time.monotonic() as the reply starts to go out (0.0 until then)
    reply: dict | None = None  # {"status", "body"} of the answer: the message or the error


@dataclass
class Reply:
    status: int
    body: dict
    stream: bool = False
    latency: float = 0.0
    headers: dict = field(default_factory=dict)
    hold: bool | str = False  # True: wait before the reply; "midway": halfway through the stream
    # The release() of the scenario that was playing when the request came. A handler thread can
    # reach its wait late, after the test is over and the next one has called play().
    released: threading.Event | None = None
    error_event: dict | None = None  # an `event: error` that breaks the stream off midway
    usage_at_end: bool = False  # the counts come in message_delta, not message_start
    param: str | None = None  # the field an OpenAI-shaped error names (Claude's errors name none)


class ScriptedAPI:
    """One loopback server: `play()` a scenario, run the agent, then read the records."""

    def __init__(self, endpoint: str = "anthropic") -> None:
        self.default_endpoint = endpoint  # a scenario's `endpoint` key plays another
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._ids: dict[str, int] = {}  # by prefix and track: see _next_id()
        self.play({"turns": []})

    def start(self) -> str:
        if self._httpd is None:
            self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            self._httpd.daemon_threads = True
            self._httpd.api = self
            # A short poll: stop() waits for the loop to notice, up to one interval (default 0.5 s,
            # paid by every test session and demo that starts a server).
            serve = functools.partial(self._httpd.serve_forever, poll_interval=0.05)
            threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def client_env(self, api_key: str = "scripted") -> dict[str, str]:
        """Environment variables that point an SDK client (in this process or a child) at this
        server (see loopback_env)."""
        return {**loopback_env(self.start()), "ANTHROPIC_API_KEY": api_key}

    def endpoint_env(self, name: str, key: str = "scripted") -> dict[str, str]:
        """What a learner sets for the endpoint `name` of scripted/endpoints.py, pointed at this
        server: the key in the variable its header wants, and its model id."""
        endpoint, env = BY_NAME[name], self.client_env(key)
        env["ANTHROPIC_AUTH_TOKEN"] = ""
        if endpoint.auth == ("bearer",):  # the SDK sends ANTHROPIC_AUTH_TOKEN as Bearer
            env.update({"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": key})
        if endpoint.model:
            env["MODEL_ID"] = endpoint.model
        env.update(endpoint.settings)
        return env

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def play(self, scenario: dict | str | Path) -> None:
        scenario = (
            load_scenario(scenario)
            if isinstance(scenario, (str, Path))
            else check_scenario(scenario)
        )
        tracks = [{"match": None, "turns": scenario["turns"]}, *scenario.get("tracks", [])]
        with self._lock:
            self.scenario = scenario
            self._matched_last = {track["match"] for track in tracks if track.get("in") == "last"}
            self._tracks = [
                (
                    track["match"],
                    deque(
                        (step_label(track["match"], number), turn)
                        for number, turn in enumerate(track["turns"], 1)
                        for _ in range(turn.get("repeat", 1))
                    ),
                )
                for track in tracks
            ]
            self._cache: dict[str, int] = {}  # prompt cache: prefix key -> its tokens
            self._paused: set[str] = set()  # pause_turn replies, which may come back to resume
            self._thinking_of: dict[str, list[str]] = {}  # a reply's first tool_use id: the
            # signatures of its thinking blocks, which must come back with the tool calls
            self.requests: list[Recorded] = []
            self.violations: list[str] = []
            self.problems: list[str] = []
            # 400s that are not the agent's fault: an endpoint's refusal of an optional field,
            # a prompt too long for the context window. The agent is to recover from them.
            self.refused: list[str] = []
            self._released = threading.Event()

    def release(self) -> None:
        """Let the replies of `hold: true` turns go out, the waiting ones and any still to come."""
        self._released.set()

    def wait_for_release(self, reply: Reply) -> None:
        if not reply.released.wait(HOLD_LIMIT):
            with self._lock:
                if reply.released is not self._released:
                    return  # that scenario's test is over: not a problem of the one playing now
                self.problems.append(
                    f"a `hold: true` reply waited {HOLD_LIMIT} s: the test never called release()"
                )

    def remaining(self) -> int:
        with self._lock:
            return sum(len(turns) for _, turns in self._tracks)

    def answer(
        self, method: str, path: str, raw: bytes, headers: dict
    ) -> tuple[Reply, Recorded | None]:
        """Record the request and choose its reply; the handler sleeps and writes outside the
        lock."""
        with self._lock:
            reply, record = self._answer(method, path, raw, headers)
            reply.headers["request-id"] = self._next_id("req_scripted")
            if reply.status >= 400 and self.endpoint.error_shape == "openai":
                message = reply.body["error"]["message"]
                reply.body = openai_error_body(reply.status, message, reply.param)
            if record is not None:
                record.reply = {"status": reply.status, "body": reply.body}
            return reply, record

    def _answer(
        self, method: str, path: str, raw: bytes, headers: dict
    ) -> tuple[Reply, Recorded | None]:
        if (method, path) != ("POST", "/v1/messages"):
            self.problems.append(
                f"no such endpoint {method} {path}; the scripted API serves POST /v1/messages"
            )
            return error_reply({"status": 404, "message": f"Not found: {method} {path}"}), None
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        record = Recorded(body if isinstance(body, dict) else {}, raw, headers, "", len(raw))
        self.requests.append(record)
        endpoint, sent = self.endpoint, auth_sent(headers)
        if not sent and endpoint.key_checked is not False:
            self.violations.append("x-api-key header is required")
            return error_reply({"status": 401, "message": "x-api-key header is required"}), record
        wrong_header = endpoint.auth is not None and sent and not sent & set(endpoint.auth)
        if endpoint.key_checked is not False and wrong_header:
            wanted = " or ".join(endpoint.auth)
            self.refused.append(f"{endpoint.name} takes its key in {wanted}, not in {sent.pop()}")
            return error_reply({"status": 401, "message": f"send the key in {wanted}"}), record
        errors = [] if "anthropic-version" in headers else ["anthropic-version: header is required"]
        errors += (
            validate_request(body)
            if isinstance(body, dict)
            else ["request body must be a JSON object"]
        )
        if errors:
            self.violations += errors
            return error_reply({"status": 400, "message": "; ".join(errors)}), record
        refused = self._endpoint_refuses(body)
        if refused:
            self.refused.append(refused)
            return error_reply({"status": 400, "message": refused}), record
        body = as_seen_by(endpoint, body)
        model = endpoint_model(endpoint)
        if uses_model_table(endpoint):
            model = MODELS.get(body["model"])
        if model is None:  # https://platform.claude.com/docs/en/api/errors (404 not_found_error)
            self.violations.append(f"model: {body['model']!r} is not a model the API knows")
            return error_reply({"status": 404, "message": f"model: {body['model']}"}), record
        beyond = self._beyond_endpoint_limit(body, model)
        if beyond:
            self.refused.append(beyond)
            return error_reply({"status": 400, "message": beyond}), record
        errors = model_errors(body, model) + cache_breakpoint_errors(body)
        if endpoint.thinking in (None, "signed"):  # the others check no signature
            errors += signature_errors(body) + self._missing_thinking_errors(body)
        errors += self._prefill_errors(body, model)
        if errors:
            self.violations += errors
            return error_reply({"status": 400, "message": "; ".join(errors)}), record
        too_long = self._too_long(body, model)
        if too_long:
            self.refused.append(too_long)
            return error_reply({"status": 400, "message": too_long}), record
        return self._play_turn(body, record, model), record

    @property
    def endpoint(self) -> Endpoint:
        """The row of scripted/endpoints.py the server plays: the scenario's, else its own."""
        return BY_NAME[self.scenario.get("endpoint", self.default_endpoint)]

    def _endpoint_refuses(self, body: dict) -> str:
        """What an Anthropic-compatible endpoint that lacks an optional field answers: its row's
        own words, or for the scenario's `rejects` those of the endpoints in front of Bedrock or
        Vertex."""
        rejects = {
            name: EXTRA_INPUTS.format(field=name) for name in self.scenario.get("rejects", [])
        }
        rejects.update(self.endpoint.rejects)
        for name in sorted(rejects):  # cache_control, thinking, thinking.display
            if field_in(body, name):
                return rejects[name].replace("{model}", body["model"])
        return ""

    def _missing_thinking_errors(self, body: dict) -> list[str]:
        """The reply that asked for the tools being answered must come back with its thinking
        blocks, unchanged and in place: the model goes on from its own thinking.
        https://platform.claude.com/docs/en/build-with-claude/thinking (thinking with tool use)"""
        messages = body["messages"]
        if len(messages) < 2 or not tool_results(messages[-1]):
            return []
        reply = blocks_of(messages[-2])
        calls = [block["id"] for block in reply if block["type"] == "tool_use"]
        if not calls or calls[0] not in self._thinking_of:
            return []
        sent = self._thinking_of[calls[0]]
        back = [block.get("signature") for block in reply if block["type"] == "thinking"]
        if back == sent:
            return []
        return [
            f"messages.{len(messages) - 2}: the thinking blocks of a reply with tool_use blocks "
            "must be passed back with them, unmodified, while its tool results are answered"
        ]

    def _prefill_errors(self, body: dict, model: Model) -> list[str]:
        """On a model without prefill the conversation ends on a user message, unless it sends
        a pause_turn reply back so that the model resumes it.
        https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide
        https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons"""
        last = body["messages"][-1]
        if model.prefill or last["role"] != "assistant":
            return []
        if content_key(blocks_of(last)) in self._paused:
            return []
        return [
            f"messages.{len(body['messages']) - 1}: {body['model']} does not support assistant "
            "message prefill; the conversation must end with a user message"
        ]

    def _too_long(self, body: dict, model: Model) -> str:
        """By size, as the real API refuses a prompt longer than the context window.
        https://platform.claude.com/docs/en/build-with-claude/context-windows"""
        window = self.scenario.get("context_window", model.context_window)
        size = sum(tokens(unit) for unit in prompt_units(body))
        if size <= window:
            return ""
        return self._too_long_message(size, window)

    def _too_long_message(self, size: int, window: int) -> str:
        template = self.endpoint.too_long or "prompt is too long: {size} tokens > {window} maximum"
        return template.format(size=size, window=window)

    def _beyond_endpoint_limit(self, body: dict, model: Model) -> str:
        """A max_tokens that a server of other models refuses: a setting of the user's, not a
        rule of Claude's, so it is a refusal to recover from, not the agent's violation."""
        if uses_model_table(self.endpoint) or body["max_tokens"] <= model.max_output:
            return ""
        if self.endpoint.too_long:
            return self._too_long_message(body["max_tokens"], model.max_output)
        return f"max_tokens: {body['max_tokens']} > {model.max_output}, the most this server allows"

    def _play_turn(self, body: dict, record: Recorded, model: Model) -> Reply:
        record.track, turns = self._track_for(body)
        if not turns:
            self.problems.append(
                f"{NO_TURN_LEFT} (track {record.track!r}, request {len(self.requests)})"
            )
            return error_reply({"status": 400, "message": NO_TURN_LEFT})
        label, turn = turns.popleft()
        if failures := expect_failures(turn.get("expect", {}), body):
            self.problems.append(f"{label}: expect failed: {'; '.join(failures)}")
            return error_reply({"status": 400, "message": self.problems[-1]})
        stream = body.get("stream") is True
        usage_at_end = self.endpoint.usage_at_start is False
        if "error" in turn and turn["error"].get("midstream") and stream:
            if self.endpoint.stream_errors is False:
                self.problems.append(f"{label}: {self.endpoint.name} sends no error events")
            return Reply(
                200,
                self._message(turn, body, model, self._track_tag(record.track)),
                stream=True,
                latency=turn.get("latency", 0),
                error_event=error_body(turn["error"]["status"], turn["error"].get("message", "")),
                usage_at_end=usage_at_end,
            )
        if "error" in turn:
            return error_reply(turn["error"], turn.get("latency", 0))
        self.problems += [
            f"{label}: {problem}"
            for problem in tool_call_problems(turn.get("tool_calls", []), body)
        ]
        return Reply(
            200,
            self._message(turn, body, model, self._track_tag(record.track)),
            stream,
            turn.get("latency", 0),
            hold=turn.get("hold", False),
            released=self._released,
            usage_at_end=usage_at_end,
        )

    def _track_for(self, body: dict) -> tuple[str, deque]:
        """The first track whose `match` is in the first user message (or, with `in: last`, the
        last) and has turns left, else the default."""
        first_text = plain_text(body["messages"][0]["content"])
        last_text = plain_text(body["messages"][-1]["content"])
        for match, turns in self._tracks[1:]:
            text = last_text if match in self._matched_last else first_text
            if match in text and turns:
                return match, turns
        return "default", self._tracks[0][1]

    def _message(self, turn: dict, body: dict, model: Model, track: str = "") -> dict:
        content = self._thinking_and_text(turn, body, model)
        content += [
            {
                "type": "tool_use",
                "id": self._next_id(f"{self.endpoint.tool_id_prefix or 'toolu_'}01scripted", track),
                "name": call["name"],
                "input": call.get("input", {}),
            }
            for call in turn.get("tool_calls", [])
        ]
        stop_reason = turn.get("stop_reason", "tool_use" if turn.get("tool_calls") else "end_turn")
        if stop_reason == "max_tokens" and content and content[-1]["type"] == "thinking":
            content[-1]["signature"] = ""  # cut off before its signature came
        if stop_reason == "pause_turn":
            self._paused.add(content_key(content))
        calls = [block["id"] for block in content if block["type"] == "tool_use"]
        signatures = [block["signature"] for block in content if block["type"] == "thinking"]
        if calls and signatures:
            self._thinking_of[calls[0]] = signatures
        usage = count_usage(body, content, model, self._cache)
        if self.endpoint.usage is not None:
            usage = {name: usage[name] for name in self.endpoint.usage}
        return {
            "id": self._next_id("msg_01scripted", track),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": thinking_as_returned(self.endpoint, content),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _thinking_and_text(self, turn: dict, body: dict, model: Model) -> list[dict]:
        """The thinking and text blocks of the reply, as this model returns them.
        https://platform.claude.com/docs/en/build-with-claude/thinking (display: summarized
        returns the thinking as text, omitted returns an empty block with its signature)
        https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5 (on Sonnet
        5.5 the text between tool calls comes back in thinking blocks; between_tools turns off
        the thinking before the first call)"""
        setting = body.get("thinking") or {}
        kind = setting.get("type", "adaptive" if model.thinking_by_default else "disabled")
        display = setting.get("display", model.default_display)
        content = []
        if "thinking" in turn and kind in ("adaptive", "enabled"):
            content.append(thinking_block(turn["thinking"], display, body["model"]))
        if "text" in turn:
            if turn.get("tool_calls") and model.notes_in_thinking and kind != "disabled":
                content.append(thinking_block(turn["text"], display, body["model"]))
            else:
                content.append({"type": "text", "text": turn["text"]})
        return content

    def _next_id(self, prefix: str, track: str = "") -> str:
        """A new id. Each track of the scenario counts its own (`track` is its tag, "" for the
        main one), so parallel subagents get the same ids whichever order their threads run in,
        and two builds of the pages show the same ones. The counts go on across play(): a
        conversation that spans two scenarios never gets an id twice."""
        key = f"{prefix}{track}"
        self._ids[key] = self._ids.get(key, 0) + 1
        return f"{key}{self._ids[key]:04d}"

    def _track_tag(self, track: str) -> str:
        """What a track's ids carry: nothing for the main one, t2, t3... for the others, by their
        place in the scenario."""
        matches = [match for match, _ in self._tracks]
        return "" if track == "default" else f"t{matches.index(track) + 1}"


def thinking_block(thinking: str, display: str, model: str) -> dict:
    shown = thinking if display == "summarized" else ""
    return {"type": "thinking", "thinking": shown, "signature": sign(model, shown)}


def content_key(blocks: list[dict]) -> str:
    """What identifies a reply that comes back: its block types, texts and ids."""
    return canonical([[block["type"], block.get("text"), block.get("id")] for block in blocks])


def error_reply(error: dict, latency: float = 0.0) -> Reply:
    status, headers = error["status"], {}
    if status == 429 or status >= 500:  # the SDK retries these; tell it to retry at once
        headers = {"retry-after-ms": str(error.get("retry_after_ms", 1)), "x-should-retry": "true"}
    message = error.get("message", f"scripted {ERROR_TYPES[status]}")
    return Reply(status, error_body(status, message), latency=latency, headers=headers,
                 param=error.get("param"))


def loopback_env(url: str) -> dict[str, str]:
    """Environment variables that point an SDK client at a server on 127.0.0.1 (this one, or the
    recording proxy and the replay server). NO_PROXY keeps a proxy set for the real network
    (HTTP_PROXY, ALL_PROXY) from catching loopback traffic. SSL_CERT_FILE: these servers speak
    plain HTTP, so no certificate is ever checked, yet each new client loads the trusted
    certificates it names, by default the system's whole bundle (about 30 ms; the tests make a
    client per test). One small certificate that nothing is signed with stands in for it."""
    no_proxy = ",".join(
        filter(
            None,
            [
                os.environ.get("NO_PROXY") or os.environ.get("no_proxy"),
                "127.0.0.1",
                "localhost",
            ],
        )
    )
    return {
        "ANTHROPIC_BASE_URL": url,
        "NO_PROXY": no_proxy,
        "no_proxy": no_proxy,
        "SSL_CERT_FILE": str(Path(__file__).with_name("loopback-cert.pem")),
    }


class Handler(BaseHTTPRequestHandler):
    server_version = "scripted-messages-api"

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply, record = self.server.api.answer(self.command, self.path.split("?")[0], raw, headers)
        time.sleep(reply.latency)  # outside the lock, so concurrent requests overlap
        if reply.hold is True:
            self.server.api.wait_for_release(reply)
        if record is not None:
            # Before the first byte goes out: a client that has the reply must find it stamped.
            # Stamped after the write, the client could read the record before this line ran.
            record.answered = time.monotonic()
        try:
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError):
            # the client hung up mid-reply (it stopped reading a stream); there is no one to tell
            pass

    do_GET = do_PUT = do_DELETE = do_POST  # so other endpoints get the API's 404, not a bare 501

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.stream:
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            events = sse_events(reply.body, reply.usage_at_end)
            if reply.error_event is not None:
                events = broken_stream_events(reply.body, reply.error_event, reply.usage_at_end)
            for number, (event, data) in enumerate(events):
                if reply.hold == "midway" and number == len(events) // 2:
                    self.wfile.flush()
                    self.server.api.wait_for_release(reply)
                self.wfile.write(f"event: {event}\ndata: {to_json(data)}\n\n".encode())
            return
        payload = to_json(reply.body).encode()
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # api.requests is the log; lines on stderr would clutter the test output


def main(argv: list[str] | None = None) -> int:
    """Serve a scenario on 127.0.0.1 as one endpoint answers, until Ctrl-C."""
    api = start_from_command_line(argv)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        api.stop()
    return 0


def start_from_command_line(argv: list[str] | None) -> ScriptedAPI:
    """The server that `main` keeps up, started, and the settings that point a script at it
    printed; an unknown --endpoint exits with one line that lists the names."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument(
        "--endpoint",
        default="anthropic",
        help=f"answer as this row of scripted/endpoints.py does: {', '.join(BY_NAME)}",
    )
    parser.add_argument(
        "--scenario",
        type=Path,
        default=Path(__file__).with_name("scenarios") / "v1_demo.yaml",
        help="the scenario to play (default: the v1 demo's)",
    )
    args = parser.parse_args(argv)
    if unknown_endpoint(args.endpoint):
        raise SystemExit(unknown_endpoint(args.endpoint))
    api = ScriptedAPI(args.endpoint)
    api.play(args.scenario)
    print(f"A scripted {BY_NAME[args.endpoint].title}; point a script at it with:")
    for name, value in api.endpoint_env(args.endpoint).items():
        print(f"  {name}={value}")
    return api


if __name__ == "__main__":
    raise SystemExit(main())

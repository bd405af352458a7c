"""The Messages API's request rules, as a pure function the scripted server applies.

The real API answers HTTP 400 when a request breaks one of these rules; the
scripted server does the same and records the breach, so a test fails on the
agent code that sent it. The rule agents break most often is the pairing of
tool calls and results:

    assistant: [text, tool_use A, tool_use B]
    user:      [tool_result A, tool_result B, text]   <- the very next message, results first

Messages are written like the API's own (`messages.3: ...`), so a failing test
reads like the error a user of the real API would see.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jsonschema

from scripted.models import Model

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
THINKING_TYPES = ("adaptive", "enabled", "disabled", "between_tools")
DISPLAYS = ("summarized", "omitted")
MAX_BREAKPOINTS = 4  # https://platform.claude.com/docs/en/build-with-claude/prompt-caching

# -- the rules --


def validate_request(body: dict) -> list[str]:
    """Check a request body against the Messages API's rules; an empty list means valid."""
    if not isinstance(body, dict):
        return ["request body must be a JSON object"]
    errors = (
        top_level_errors(body)
        + tools_errors(body.get("tools"))
        + messages_errors(body.get("messages"))
    )
    if (
        not errors
        and "tools" not in body
        and any(
            block["type"] in ("tool_use", "tool_result")
            for m in body["messages"]
            for block in blocks_of(m)
        )
    ):
        errors.append(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )
    return errors


def top_level_errors(body: dict) -> list[str]:
    errors = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        errors.append("model: Field required (a non-empty string)")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        errors.append("max_tokens: Field required (a positive integer)")
    system = body.get("system", "")
    if not isinstance(system, str) and not (
        isinstance(system, list) and all(map(is_text_block, system))
    ):
        errors.append("system: must be a string or a list of non-empty text blocks")
    choice = body.get("tool_choice", {"type": "auto"})
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        errors.append("tool_choice: `type` must be one of 'auto', 'any', 'tool', 'none'")
    elif choice["type"] == "tool" and choice.get("name") not in declared_tools(body):
        errors.append(f"tool_choice.name: {choice.get('name')!r} is not one of the declared tools")
    cache = body.get("cache_control", {"type": "ephemeral"})
    if (
        not isinstance(cache, dict)
        or cache.get("type") != "ephemeral"
        or set(cache) - {"type", "ttl"}
        or cache.get("ttl", "5m") not in ("5m", "1h")
    ):
        errors.append(
            "cache_control: must be {\"type\": \"ephemeral\"}, with an optional ttl of '5m' or '1h'"
        )
    return errors + thinking_errors(body)


def thinking_errors(body: dict) -> list[str]:
    """The shape of `thinking`; which types a model accepts is model_errors' business.
    https://platform.claude.com/docs/en/build-with-claude/thinking"""
    if "thinking" not in body:
        return []
    thinking = body["thinking"]
    if not isinstance(thinking, dict) or thinking.get("type") not in THINKING_TYPES:
        return [f"thinking.type: must be one of {', '.join(THINKING_TYPES)}"]
    errors = []
    if "display" in thinking and thinking["display"] not in DISPLAYS:
        errors.append(f"thinking.display: must be one of {', '.join(DISPLAYS)}")
    if "display" in thinking and thinking["type"] in ("disabled", "between_tools"):
        errors.append("thinking.display: Extra inputs are not permitted")
    if thinking["type"] == "enabled" and not isinstance(thinking.get("budget_tokens"), int):
        errors.append("thinking.budget_tokens: Field required")
    return errors


def model_errors(body: dict, model: Model) -> list[str]:
    """What this model refuses: max_tokens above its maximum output, a thinking type it lacks,
    a forced tool choice where it is not supported.
    https://platform.claude.com/docs/en/about-claude/models/overview (max output)
    https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide (thinking disabled,
    forced tool choice)"""
    errors = []
    if body["max_tokens"] > model.max_output:
        errors.append(
            f"max_tokens: {body['max_tokens']} > {model.max_output}, which is the maximum "
            f"allowed number of output tokens for {body['model']}"
        )
    kind = (body.get("thinking") or {}).get("type")
    if kind is not None and kind not in model.thinking_types:
        errors.append(
            f"thinking.type: {kind!r} is not supported on {body['model']}; it accepts "
            f"{', '.join(model.thinking_types)}"
        )
    choice = (body.get("tool_choice") or {}).get("type")
    if choice in ("any", "tool") and not model.forced_tool_choice:
        errors.append(
            f"tool_choice: forced tool use ({choice!r}) is not supported on {body['model']}; "
            "use 'auto' or 'none'"
        )
    return errors


def cache_breakpoint_errors(body: dict) -> list[str]:
    """At most four breakpoints, a top-level cache_control (automatic caching) counting as one.
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching"""
    found = int("cache_control" in body)
    found += sum("cache_control" in tool for tool in body.get("tools") or [])
    if isinstance(body.get("system"), list):
        found += sum("cache_control" in block for block in body["system"])
    for message in body["messages"]:
        found += sum("cache_control" in block for block in blocks_of(message))
    if found <= MAX_BREAKPOINTS:
        return []
    return [
        f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
    ]


def tools_errors(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return ["tools: Input should be a valid list"]
    errors, names = [], set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            errors.append(f"tools.{i}: Input should be an object")
            continue
        if tool.get("type", "custom") != "custom":
            continue  # server tools (web search, ...) have their own shape
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            errors.append(f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        elif name in names:
            errors.append(f"tools: Tool names must be unique ({name!r} appears twice)")
        names.add(name)
        if not isinstance(tool.get("description", ""), str):
            errors.append(f"tools.{i}.description: Input should be a valid string")
        errors += schema_errors(tool.get("input_schema"), f"tools.{i}.input_schema")
    return errors


def schema_errors(schema: Any, where: str) -> list[str]:
    if not isinstance(schema, dict):
        return [f"{where}: Field required (an object)"]
    if schema.get("type") != "object":
        return [f"{where}.type: Input should be 'object'"]
    # The real API's answer to a top-level combinator (tool definitions:
    # https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use)
    if {"oneOf", "allOf", "anyOf"} & set(schema):
        return [f"{where}: input_schema does not support oneOf, allOf, or anyOf at the top level"]
    problem = schema_problem(json.dumps(schema, sort_keys=True))
    if problem:
        return [f"{where}: JSON schema is invalid: {problem}"]
    return []


@functools.lru_cache(maxsize=1024)
def schema_problem(schema_json: str) -> str:
    """What is wrong with a JSON schema, "" if nothing. Checking one against the 2020-12
    metaschema takes milliseconds and a client sends the same tools with every request, so each
    distinct schema is checked once."""
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(schema_json))
    except jsonschema.SchemaError as error:
        return error.message
    return ""


def messages_errors(messages: Any) -> list[str]:
    if not isinstance(messages, list) or not messages:
        return ["messages: Field required (a non-empty list)"]
    errors = [
        error for i, message in enumerate(messages) for error in message_shape_errors(i, message)
    ]
    if errors:
        return errors  # the rules below assume well-formed messages
    if messages[0]["role"] != "user":
        errors.append('messages.0.role: the first message must use the "user" role')
    for i in range(1, len(messages)):
        if messages[i]["role"] == messages[i - 1]["role"]:
            errors.append(
                f'messages.{i}: roles must alternate between "user" and "assistant", '
                f'but found two "{messages[i]["role"]}" messages in a row'
            )
    return errors + tool_pairing_errors(messages)


def message_shape_errors(i: int, message: Any) -> list[str]:
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return [f"messages.{i}.role: Input should be 'user' or 'assistant'"]
    content, role = message.get("content"), message["role"]
    if isinstance(content, str):
        return [] if content.strip() else [f"messages.{i}.content: text content must be non-empty"]
    if not isinstance(content, list) or not content:
        return [f"messages.{i}.content: must be a non-empty string or a non-empty list of blocks"]
    errors = []
    for j, block in enumerate(content):
        where, kind = (
            f"messages.{i}.content.{j}",
            block.get("type") if isinstance(block, dict) else None,
        )
        if not isinstance(kind, str):
            errors.append(f"{where}: a content block must be an object with a `type`")
        elif kind == "text" and not is_text_block(block):
            errors.append(f"{where}: text content blocks must be non-empty")
        elif kind == "tool_use" and not (
            role == "assistant"
            and isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
            and isinstance(block.get("input"), dict)
        ):
            errors.append(
                f"{where}: a tool_use block belongs in an assistant message, with id, name and "
                "input"
            )
        elif kind == "tool_result" and not (
            role == "user" and isinstance(block.get("tool_use_id"), str)
        ):
            errors.append(
                f"{where}: a tool_result block belongs in a user message, with a tool_use_id"
            )
    return errors


def tool_pairing_errors(messages: list[dict]) -> list[str]:
    """The rule agents break most: each tool_use is answered in the very next user message,
    results first; in any order, since the calls of one reply are unordered.
    https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls
    https://platform.claude.com/docs/en/agents-and-tools/tool-use/parallel-tool-use"""
    errors, seen_ids = [], set()
    for i, message in enumerate(messages):
        if message["role"] == "user":
            errors += tool_result_errors(i, message, tool_use_ids(messages[i - 1]) if i else [])
            continue
        ids = tool_use_ids(message)
        errors += [
            f"messages.{i}: tool_use ids must be unique; {id_!r} was used before"
            for id_ in ids
            if id_ in seen_ids
        ]
        seen_ids.update(ids)
        answered = (
            {block["tool_use_id"] for block in tool_results(messages[i + 1])}
            if i + 1 < len(messages)
            else set()
        )
        if missing := [id_ for id_ in ids if id_ not in answered]:
            errors.append(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
    return errors


def tool_result_errors(i: int, message: dict, asked_ids: list[str]) -> list[str]:
    errors, answered, other_block_seen = [], set(), False
    for j, block in enumerate(blocks_of(message)):
        if block["type"] != "tool_result":
            other_block_seen = True
            continue
        where, id_ = f"messages.{i}.content.{j}", block["tool_use_id"]
        if other_block_seen:
            errors.append(
                f"{where}: `tool_result` blocks must come before any other content in a user "
                "message"
            )
        if id_ not in asked_ids:
            errors.append(
                f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {id_}. Each "
                "`tool_result` block must have a corresponding `tool_use` block in the previous "
                "message."
            )
        elif id_ in answered:
            errors.append(f"{where}: duplicate `tool_result` for tool_use id {id_}")
        answered.add(id_)
    return errors


# -- reading a request --


def blocks_of(message: dict) -> list[dict]:
    content = message.get("content", [])
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and bool(block["text"].strip())
    )


def tool_use_ids(message: dict) -> list[str]:
    blocks = blocks_of(message) if message["role"] == "assistant" else []
    return [block["id"] for block in blocks if block["type"] == "tool_use"]


def tool_results(message: dict) -> list[dict]:
    return [block for block in blocks_of(message) if block["type"] == "tool_result"]


def plain_text(content: Any) -> str:
    """The text in a string, a text block, a tool_result, or a list of those."""
    if isinstance(content, list):
        return "\n".join(plain_text(block) for block in content)
    if isinstance(content, dict):
        return content.get("text") or plain_text(content.get("content", ""))
    return content if isinstance(content, str) else ""


def declared_tools(body: dict) -> dict[str, Any]:
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    return {
        tool["name"]: tool.get("input_schema")
        for tool in tools
        if isinstance(tool, dict) and "name" in tool
    }

"""Each request rule of the scripted server, pinned over HTTP: a realistic breach, the status and
the message the real API answers it with, and the request next to it that the rule lets through.

The requests go through the real SDK's HTTP client (`client.post`), so that bodies the typed
`messages.create()` would not even build still reach the server as JSON; the few requests no SDK
sends (no key, no version header, a body that is not JSON) go out through urllib. Cases come in
twos and threes where order, count or pairing matters (two tool calls and one result, the second
of two thinking blocks changed), blank text is whitespace as well as "", and each limit is tried
on both sides of its edge.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import anthropic
import pytest

from scripted.models import MODELS
from scripted.server import CACHE_LOOKBACK, validate_request
from tests.agents import BASH_TOOL

MODEL = "claude-sonnet-4-6"  # takes thinking enabled/disabled, forced tool choice and prefill
SONNET_5_5 = "claude-sonnet-5-5"
BASH = BASH_TOOL
READ = {
    "name": "read_file",
    "description": "Read a file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
ASK = {"role": "user", "content": "List the files, then read the notes."}
REPLY = {"role": "assistant", "content": "There is notes.txt."}
AGAIN = {"role": "user", "content": "And now?"}


def call(id_: str, name: str = "bash") -> dict:
    return {"type": "tool_use", "id": id_, "name": name, "input": {}}


def result(id_: str, content: str = "ok") -> dict:
    return {"type": "tool_result", "tool_use_id": id_, "content": content}


def text(words: str) -> dict:
    return {"type": "text", "text": words}


def calls(*ids: str) -> dict:
    """An assistant reply that asks for a tool call per id, after a note."""
    return {"role": "assistant", "content": [text("Let me look."), *map(call, ids)]}


def results(*blocks: dict) -> dict:
    return {"role": "user", "content": list(blocks)}


def body(*messages: dict, **fields) -> dict:
    return {"model": MODEL, "max_tokens": 100, "tools": [BASH, READ], "messages": list(messages),
            **fields}


def without(request: dict, field: str) -> dict:
    return {key: value for key, value in request.items() if key != field}


@pytest.fixture
def client(scripted_api) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_api.start(), api_key="k", max_retries=0)


def send(client: anthropic.Anthropic, request) -> anthropic.types.Message:
    return client.post("/v1/messages", body=request, cast_to=anthropic.types.Message)


def refusal(scripted_api, client, request, status: int = 400) -> str:
    """The error message the server answers `request` with; it uses up no scripted turn."""
    scripted_api.play({"turns": [{"text": "Never sent."}]})
    with pytest.raises(anthropic.APIStatusError) as raised:
        send(client, request)
    assert raised.value.status_code == status
    assert raised.value.body["type"] == "error"
    assert scripted_api.remaining() == 1
    return raised.value.body["error"]["message"]


def refused(test):
    """A test that breaks a rule on purpose: the violation, and the turn it leaves unplayed."""
    return pytest.mark.allow_violations(pytest.mark.allow_leftover_turns(test))


def accepted(scripted_api, client, request) -> None:
    scripted_api.play({"turns": [{"text": "Fine."}]})
    assert send(client, request).content[0].text == "Fine."


# -- the request as a whole: headers, body, model, max_tokens, system --


def raw_post(url: str, data: bytes, headers: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url + "/v1/messages", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


GOOD = json.dumps(body(ASK)).encode()
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"}


@refused
@pytest.mark.parametrize(
    ("data", "headers", "status", "kind", "message"),
    [
        (GOOD, without(HEADERS, "x-api-key"), 401, "authentication_error",
         "x-api-key header is required"),
        (GOOD, without(HEADERS, "anthropic-version"), 400, "invalid_request_error",
         "anthropic-version: header is required"),
        (b'{"model": "claude-sonnet-4-6", "max_tokens": 100,', HEADERS, 400,
         "invalid_request_error", "request body must be a JSON object"),
        (b"[]", HEADERS, 400, "invalid_request_error", "request body must be a JSON object"),
    ],
    ids=["no api key", "no anthropic-version", "cut-off JSON", "a JSON list"],
)
def test_a_request_no_sdk_would_send_is_refused(scripted_api, data, headers, status, kind,
                                                message):
    scripted_api.play({"turns": [{"text": "Never sent."}]})
    got = raw_post(scripted_api.start(), data, headers)
    assert got == (status, {"type": "error", "error": {"type": kind, "message": message}})
    assert scripted_api.remaining() == 1 and scripted_api.violations == [message]


def test_a_bearer_token_stands_in_for_the_api_key(scripted_api):
    scripted_api.play({"turns": [{"text": "Fine."}]})
    headers = {**without(HEADERS, "x-api-key"), "authorization": "Bearer k"}
    status, reply = raw_post(scripted_api.start(), GOOD, headers)
    assert (status, reply["content"][0]["text"]) == (200, "Fine.")


MAX_TOKENS = "max_tokens: Field required (a positive integer)"
NAME = "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"
SYSTEM = "system: must be a string or a list of non-empty text blocks"


@refused
@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (without(body(ASK), "model"), "model: Field required (a non-empty string)"),
        (body(ASK, model=""), "model: Field required (a non-empty string)"),
        (without(body(ASK), "max_tokens"), MAX_TOKENS),
        (body(ASK, max_tokens=0), MAX_TOKENS),
        (body(ASK, max_tokens=-5), MAX_TOKENS),
        (body(ASK, max_tokens=True), MAX_TOKENS),
        (body(ASK, max_tokens="100"), MAX_TOKENS),
        (body(ASK, system=[text("Be brief."), text(" \n\t")]), SYSTEM),
        (body(ASK, system=[text(""), text("Be brief.")]), SYSTEM),
        (body(ASK, system=[{"type": "image"}]), SYSTEM),
        (body(ASK, system=7), SYSTEM),
        (["not", "an", "object"], "request body must be a JSON object"),
    ],
    ids=[
        "no model", "empty model", "no max_tokens", "max_tokens 0", "max_tokens negative",
        "max_tokens true", "max_tokens a string", "system's last block blank",
        "system's first block empty", "system an image", "system a number", "body a list",
    ],
)
def test_the_request_fields_are_checked(scripted_api, client, request_body, message):
    assert refusal(scripted_api, client, request_body) == message


@pytest.mark.parametrize(
    "request_body",
    [
        body(ASK, max_tokens=1),
        body(ASK, system="Be brief."),
        body(ASK, system=[text("Be brief."), text("Answer in English.")]),
    ],
    ids=["max_tokens 1", "system a string", "system two text blocks"],
)
def test_the_smallest_and_the_ordinary_request_fields_pass(scripted_api, client, request_body):
    accepted(scripted_api, client, request_body)


# -- tool_choice, cache_control, thinking: the shapes every model checks --
CHOICE = "tool_choice: `type` must be one of 'auto', 'any', 'tool', 'none'"
CACHE = "cache_control: must be {\"type\": \"ephemeral\"}, with an optional ttl of '5m' or '1h'"
THINKING = "thinking.type: must be one of adaptive, enabled, disabled, between_tools"


@refused
@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (body(ASK, tool_choice={"type": "sometimes"}), CHOICE),
        (body(ASK, tool_choice="auto"), CHOICE),
        (body(ASK, tool_choice={"type": "tool", "name": "write_file"}),
         "tool_choice.name: 'write_file' is not one of the declared tools"),
        (body(ASK, tool_choice={"type": "tool"}),
         "tool_choice.name: None is not one of the declared tools"),
        (body(ASK, tools=[without(READ, "name"), BASH],
              tool_choice={"type": "tool", "name": "bash"}),
         f"tools.0.name: {NAME}"),
        (body(ASK, cache_control={"type": "persistent"}), CACHE),
        (body(ASK, cache_control={"type": "ephemeral", "ttl": "2h"}), CACHE),
        (body(ASK, cache_control={"type": "ephemeral", "scope": "org"}), CACHE),
        (body(ASK, cache_control="ephemeral"), CACHE),
        (body(ASK, thinking={"type": "sometimes"}), THINKING),
        (body(ASK, thinking="adaptive"), THINKING),
        (body(ASK, thinking={"type": "adaptive", "display": "full"}),
         "thinking.display: must be one of summarized, omitted"),
        (body(ASK, thinking={"type": "disabled", "display": "omitted"}),
         "thinking.display: Extra inputs are not permitted"),
        (body(ASK, model=SONNET_5_5, thinking={"type": "between_tools", "display": "summarized"}),
         "thinking.display: Extra inputs are not permitted"),
        (body(ASK, thinking={"type": "enabled"}), "thinking.budget_tokens: Field required"),
        (body(ASK, thinking={"type": "enabled", "budget_tokens": "2000"}),
         "thinking.budget_tokens: Field required"),
    ],
    ids=[
        "tool_choice sometimes", "tool_choice a string", "tool_choice an undeclared tool",
        "tool_choice tool without a name", "tool_choice beside a tool without a name",
        "cache_control persistent", "cache_control ttl 2h",
        "cache_control an extra key", "cache_control a string", "thinking sometimes",
        "thinking a string", "display full", "display with thinking disabled",
        "display with between_tools", "enabled without a budget", "budget a string",
    ],
)
def test_tool_choice_cache_control_and_thinking_are_checked(scripted_api, client, request_body,
                                                            message):
    assert refusal(scripted_api, client, request_body) == message


@pytest.mark.parametrize(
    "fields",
    [
        {"tool_choice": {"type": "none"}},
        {"tool_choice": {"type": "any"}},
        {"tool_choice": {"type": "tool", "name": "read_file"}},  # the second of two tools
        {"cache_control": {"type": "ephemeral", "ttl": "5m"}},
        {"cache_control": {"type": "ephemeral", "ttl": "1h"}},
        {"thinking": {"type": "enabled", "budget_tokens": 2000}, "max_tokens": 4000},
        {"thinking": {"type": "adaptive", "display": "omitted"}},
        {"thinking": {"type": "disabled"}},
    ],
    ids=lambda fields: json.dumps(fields),
)
def test_the_documented_values_pass(scripted_api, client, fields):
    accepted(scripted_api, client, body(ASK, **fields))


# -- what each model refuses (scripted/models.py) --


@refused
@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        (body(ASK, max_tokens=MODELS[MODEL].max_output + 1),
         f"max_tokens: {MODELS[MODEL].max_output + 1} > {MODELS[MODEL].max_output}, which is the "
         "maximum allowed number of output tokens for claude-sonnet-4-6"),
        (body(ASK, model=SONNET_5_5, thinking={"type": "disabled"}),
         "thinking.type: 'disabled' is not supported on claude-sonnet-5-5; it accepts adaptive, "
         "between_tools"),
        (body(ASK, model=SONNET_5_5, thinking={"type": "enabled", "budget_tokens": 50}),
         "thinking.type: 'enabled' is not supported on claude-sonnet-5-5; it accepts adaptive, "
         "between_tools"),
        (body(ASK, thinking={"type": "between_tools"}),
         "thinking.type: 'between_tools' is not supported on claude-sonnet-4-6; it accepts "
         "adaptive, enabled, disabled"),
        (body(ASK, model=SONNET_5_5, tool_choice={"type": "any"}),
         "tool_choice: forced tool use ('any') is not supported on claude-sonnet-5-5; use 'auto' "
         "or 'none'"),
        (body(ASK, model=SONNET_5_5, tool_choice={"type": "tool", "name": "bash"}),
         "tool_choice: forced tool use ('tool') is not supported on claude-sonnet-5-5; use "
         "'auto' or 'none'"),
        (body(ASK, model="claude-sonnet-5-5", max_tokens=128_001, tool_choice={"type": "any"}),
         "max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for "
         "claude-sonnet-5-5; tool_choice: forced tool use ('any') is not supported on "
         "claude-sonnet-5-5; use 'auto' or 'none'"),
    ],
    ids=[
        "max_tokens one over the model's", "5.5 thinking disabled", "5.5 thinking enabled",
        "4.6 between_tools", "5.5 tool_choice any", "5.5 tool_choice tool", "two at once",
    ],
)
def test_what_a_model_refuses(scripted_api, client, request_body, message):
    assert refusal(scripted_api, client, request_body) == message


@pytest.mark.parametrize(
    "request_body",
    [
        body(ASK, max_tokens=MODELS[MODEL].max_output),
        body(ASK, model=SONNET_5_5, max_tokens=128_000, tool_choice={"type": "none"}),
        body(ASK, model=SONNET_5_5, thinking={"type": "between_tools"}),
    ],
    ids=["max_tokens at the model's", "5.5 at 128K, tool_choice none", "5.5 between_tools"],
)
def test_what_a_model_takes_at_its_limits(scripted_api, client, request_body):
    accepted(scripted_api, client, request_body)


@refused
def test_an_unknown_model_is_not_found(scripted_api, client):
    message = refusal(scripted_api, client, body(ASK, model="claude-sonnet-9"), status=404)
    assert message == "model: claude-sonnet-9"
    assert scripted_api.violations == ["model: 'claude-sonnet-9' is not a model the API knows"]


# -- cache breakpoints: at most four, wherever they are --
MARK = {"cache_control": {"type": "ephemeral"}}


def marked_body(tools: int, system: int, blocks: int, top_level: bool) -> dict:
    """A request with breakpoints on its first `tools` tools, `system` system blocks and
    `blocks` message blocks (spread over two user messages), and a top-level one if asked."""
    tools_list = [{**tool, **MARK} if i < tools else tool for i, tool in enumerate([BASH, READ])]
    system_blocks = [{**text(f"Rule {i}."), **(MARK if i < system else {})} for i in range(3)]
    words = [{**text(f"Part {i}."), **(MARK if i < blocks else {})} for i in range(4)]
    messages = [results(*words[:2]), REPLY, results(*words[2:])]
    fields = {"tools": tools_list, "system": system_blocks, **(MARK if top_level else {})}
    return body(*messages, **fields)


@refused
@pytest.mark.parametrize(
    ("tools", "system", "blocks", "top_level"),
    [(2, 2, 0, True), (0, 3, 2, False), (1, 0, 4, False), (2, 1, 1, True), (0, 0, 4, True)],
    ids=["tools, system, top level", "system, messages", "tool, both messages",
         "one of each", "messages and top level"],
)
def test_a_fifth_cache_breakpoint_is_refused_wherever_it_is(scripted_api, client, tools, system,
                                                            blocks, top_level):
    request = marked_body(tools, system, blocks, top_level)
    found = tools + system + blocks + int(top_level)
    message = f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
    assert refusal(scripted_api, client, request) == message


@pytest.mark.parametrize(
    ("tools", "system", "blocks", "top_level"),
    [(2, 1, 0, True), (0, 0, 4, False), (1, 1, 1, True)],
    ids=["tools, system, top level", "four message blocks", "one of each"],
)
def test_four_cache_breakpoints_pass(scripted_api, client, tools, system, blocks, top_level):
    accepted(scripted_api, client, marked_body(tools, system, blocks, top_level))


# -- tool definitions --


@refused
@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ({"bash": BASH}, "tools: Input should be a valid list"),
        ([BASH, "read_file"], "tools.1: Input should be an object"),
        ([BASH, {**READ, "name": "read file"}], f"tools.1.name: {NAME}"),
        ([{**BASH, "name": ""}, READ], f"tools.0.name: {NAME}"),
        ([BASH, {**READ, "name": "r" * 65}], f"tools.1.name: {NAME}"),
        ([BASH, {**READ, "name": "read_file!"}], f"tools.1.name: {NAME}"),
        ([BASH, {**READ, "name": 7}], f"tools.1.name: {NAME}"),
        ([BASH, READ, BASH], "tools: Tool names must be unique ('bash' appears twice)"),
        ([BASH, {**READ, "description": ["Read", "a file"]}],
         "tools.1.description: Input should be a valid string"),
        ([BASH, without(READ, "input_schema")], "tools.1.input_schema: Field required (an object)"),
        ([BASH, {**READ, "input_schema": "object"}],
         "tools.1.input_schema: Field required (an object)"),
        ([BASH, {**READ, "input_schema": {"type": "string"}}],
         "tools.1.input_schema.type: Input should be 'object'"),
        ([BASH, {**READ, "input_schema": {"properties": {}}}],
         "tools.1.input_schema.type: Input should be 'object'"),
        *[
            ([BASH, {**READ, "input_schema": {**READ["input_schema"], combinator: []}}],
             "tools.1.input_schema: input_schema does not support oneOf, allOf, or anyOf at the "
             "top level")
            for combinator in ("oneOf", "allOf", "anyOf")
        ],
        ([BASH, {**READ, "input_schema": {"type": "object", "properties": {"path": {"type": 1}}}}],
         "tools.1.input_schema: JSON schema is invalid: 1 is not valid under any of the given "
         "schemas"),
        ([{**BASH, "name": "run shell"}, {**READ, "input_schema": {"type": "array"}}],
         f"tools.0.name: {NAME}; tools.1.input_schema.type: Input should be 'object'"),
        (["bash", {**READ, "name": "read file"}],
         f"tools.0: Input should be an object; tools.1.name: {NAME}"),
        ([{"type": "web_search_20250305", "name": "web search"}, {**READ, "name": "read file"}],
         f"tools.1.name: {NAME}"),
    ],
    ids=[
        "a mapping", "a name only", "a space in the name", "an empty name", "65 characters",
        "punctuation", "a number as name", "the first name again last", "a list as description",
        "no schema", "schema a string", "schema of a string", "schema without a type",
        "oneOf", "allOf", "anyOf", "an invalid schema", "two tools wrong",
        "a name only, then a wrong one", "a server tool, then a wrong one",
    ],
)
def test_tool_definitions_are_checked(scripted_api, client, tools, message):
    assert refusal(scripted_api, client, body(ASK, tools=tools)) == message


@pytest.mark.parametrize(
    "tools",
    [
        [{**BASH, "name": "b" * 64}, {**READ, "name": "r"}],
        [BASH, without(READ, "description")],
        [BASH, {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
        [{**BASH, "name": "Read-File_2"}, READ],
    ],
    ids=["64 and 1 characters", "no description", "a server tool", "upper case, hyphen, digit"],
)
def test_tool_definitions_within_the_rules_pass(scripted_api, client, tools):
    accepted(scripted_api, client, body(ASK, tools=tools))


# -- messages and their blocks --
TEXT_EMPTY = "text content blocks must be non-empty"
CONTENT = "must be a non-empty string or a non-empty list of blocks"
TOOL_USE_PLACE = "a tool_use block belongs in an assistant message, with id, name and input"
TOOL_RESULT_PLACE = "a tool_result block belongs in a user message, with a tool_use_id"


@refused
@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([], "messages: Field required (a non-empty list)"),
        ({"role": "user", "content": "Hi."}, "messages: Field required (a non-empty list)"),
        ([ASK, {"role": "system", "content": "Be brief."}],
         "messages.1.role: Input should be 'user' or 'assistant'"),
        ([ASK, "Hi."], "messages.1.role: Input should be 'user' or 'assistant'"),
        ([{"role": "user", "content": ""}], "messages.0.content: text content must be non-empty"),
        ([{"role": "user", "content": " \n\t "}],
         "messages.0.content: text content must be non-empty"),
        ([ASK, REPLY, {"role": "user", "content": "\n"}],
         "messages.2.content: text content must be non-empty"),
        ([{"role": "user", "content": []}], f"messages.0.content: {CONTENT}"),
        ([ASK, {"role": "assistant", "content": None}], f"messages.1.content: {CONTENT}"),
        ([{"role": "user", "content": [text("Hi."), {"text": "no type"}]}],
         "messages.0.content.1: a content block must be an object with a `type`"),
        ([{"role": "user", "content": [text("Hi."), "Hello."]}],
         "messages.0.content.1: a content block must be an object with a `type`"),
        ([{"role": "user", "content": [text("")]}], f"messages.0.content.0: {TEXT_EMPTY}"),
        ([{"role": "user", "content": [text("Hi."), text("  \n")]}],
         f"messages.0.content.1: {TEXT_EMPTY}"),
        ([{"role": "user", "content": [text("\t"), text("Hi.")]}],
         f"messages.0.content.0: {TEXT_EMPTY}"),
        ([{"role": "user", "content": [{"type": "text", "text": 7}]}],
         f"messages.0.content.0: {TEXT_EMPTY}"),
        ([ASK, {"role": "assistant", "content": [text("Looking."), text(" ")]}, AGAIN],
         f"messages.1.content.1: {TEXT_EMPTY}"),
        ([{"role": "user", "content": [text("Run it."), call("toolu_1")]}],
         f"messages.0.content.1: {TOOL_USE_PLACE}"),
        ([ASK, {"role": "assistant", "content": [text("Go."), without(call("toolu_1"), "id")]}],
         f"messages.1.content.1: {TOOL_USE_PLACE}"),
        ([ASK, {"role": "assistant", "content": [without(call("toolu_1"), "name")]}],
         f"messages.1.content.0: {TOOL_USE_PLACE}"),
        ([ASK, {"role": "assistant", "content": [{**call("toolu_1"), "input": "ls"}]}],
         f"messages.1.content.0: {TOOL_USE_PLACE}"),
        ([ASK, {"role": "assistant", "content": [text("Done."), result("toolu_1")]}],
         f"messages.1.content.1: {TOOL_RESULT_PLACE}"),
        ([ASK, calls("toolu_1"), results(without(result("toolu_1"), "tool_use_id"))],
         f"messages.2.content.0: {TOOL_RESULT_PLACE}"),
        ([REPLY, ASK], 'messages.0.role: the first message must use the "user" role'),
        ([ASK, AGAIN],
         'messages.1: roles must alternate between "user" and "assistant", but found two "user" '
         "messages in a row"),
        ([ASK, REPLY, REPLY, AGAIN],
         'messages.2: roles must alternate between "user" and "assistant", but found two '
         '"assistant" messages in a row'),
    ],
    ids=[
        "no messages", "a message, not a list", "a system role", "a bare string",
        "empty string", "whitespace-only string", "the third message a newline", "no blocks",
        "content null", "a block without a type", "a string among blocks", "empty text block",
        "the second text block blank", "the first text block a tab", "text a number",
        "a blank block in a reply", "tool_use from the user", "tool_use without id",
        "tool_use without name", "tool_use input a string", "tool_result from the assistant",
        "tool_result without its id", "assistant first", "two users", "two assistants",
    ],
)
def test_messages_and_blocks_are_checked(scripted_api, client, messages, message):
    request = {"model": MODEL, "max_tokens": 100, "tools": [BASH], "messages": messages}
    assert refusal(scripted_api, client, request) == message


# -- the pairing of tool calls and results --
UNANSWERED = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "{ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message."
)
UNEXPECTED = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each "
    "`tool_result` block must have a corresponding `tool_use` block in the previous message."
)


@refused
@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([ASK, calls("toolu_1", "toolu_2"), results(result("toolu_1"))],
         UNANSWERED.format(i=1, ids="toolu_2")),
        ([ASK, calls("toolu_1", "toolu_2"), results(result("toolu_2"))],
         UNANSWERED.format(i=1, ids="toolu_1")),
        ([ASK, calls("toolu_1", "toolu_2", "toolu_3"), results(result("toolu_2"))],
         UNANSWERED.format(i=1, ids="toolu_1, toolu_3")),
        ([ASK, calls("toolu_1", "toolu_2")], UNANSWERED.format(i=1, ids="toolu_1, toolu_2")),
        ([ASK, calls("toolu_1", "toolu_2"), AGAIN, REPLY, AGAIN],
         UNANSWERED.format(i=1, ids="toolu_1, toolu_2")),
        ([ASK, calls("toolu_1"), results(result("toolu_1")), calls("toolu_2", "toolu_3"),
          results(result("toolu_3"))],
         UNANSWERED.format(i=3, ids="toolu_2")),
        ([ASK, calls("toolu_1"), results(result("toolu_1"), result("toolu_9"))],
         UNEXPECTED.format(i=2, j=1, id="toolu_9")),
        ([ASK, REPLY, results(result("toolu_1"))], UNEXPECTED.format(i=2, j=0, id="toolu_1")),
        ([results(result("toolu_1"))], UNEXPECTED.format(i=0, j=0, id="toolu_1")),
        ([results(result("toolu_1")), calls("toolu_1")],
         UNEXPECTED.format(i=0, j=0, id="toolu_1") + "; " + UNANSWERED.format(i=1, ids="toolu_1")),
        ([ASK, calls("toolu_1"), results(result("toolu_1")), calls("toolu_2"),
          results(result("toolu_2"), result("toolu_1"))],
         UNEXPECTED.format(i=4, j=1, id="toolu_1")),
        ([ASK, calls("toolu_1", "toolu_2"),
          results(result("toolu_1"), result("toolu_2"), result("toolu_1"))],
         "messages.2.content.2: duplicate `tool_result` for tool_use id toolu_1"),
        ([ASK, calls("toolu_1", "toolu_2"),
          results(text("Here:"), result("toolu_1"), result("toolu_2"))],
         "messages.2.content.1: `tool_result` blocks must come before any other content in a "
         "user message; messages.2.content.2: `tool_result` blocks must come before any other "
         "content in a user message"),
        ([ASK, calls("toolu_1", "toolu_2"),
          results(result("toolu_1"), text("And:"), result("toolu_2"))],
         "messages.2.content.2: `tool_result` blocks must come before any other content in a "
         "user message"),
        ([ASK, calls("toolu_1"), results(result("toolu_1")), calls("toolu_2", "toolu_1"),
          results(result("toolu_2"), result("toolu_1"))],
         "messages.3: tool_use ids must be unique; 'toolu_1' was used before"),
        ({"tools": None}, "Requests which include `tool_use` or `tool_result` blocks must define "
         "tools."),
    ],
    ids=[
        "two calls, the first answered", "two calls, the second answered",
        "three calls, the middle answered", "two calls at the end", "two calls, then text",
        "the second round half answered", "an extra result", "a result after a plain reply",
        "a result first of all", "a result first, its call last", "an answer to an earlier round",
        "a result twice",
        "text before the results", "text between the results", "an id used again",
        "tool blocks without tools",
    ],
)
def test_tool_calls_and_results_must_pair(scripted_api, client, messages, message):
    if isinstance(messages, dict):  # the round trip below, sent without `tools`
        request = without(body(ASK, calls("toolu_1"), results(result("toolu_1"))), "tools")
    else:
        request = body(*messages)
    assert refusal(scripted_api, client, request) == message


# The calls of one reply are unordered, so their results may come in any order:
# https://platform.claude.com/docs/en/agents-and-tools/tool-use/parallel-tool-use
@pytest.mark.parametrize(
    "messages",
    [
        [ASK, calls("toolu_1", "toolu_2"), results(result("toolu_2"), result("toolu_1"))],
        [ASK, calls("toolu_1", "toolu_2"),
         results(result("toolu_1"), result("toolu_2"), text("Both ran."))],
        [ASK, calls("toolu_1"), results(result("toolu_1")), calls("toolu_2", "toolu_3"),
         results(result("toolu_2"), result("toolu_3")), REPLY, AGAIN],
        [ASK, {"role": "assistant", "content": "The answer is"}],
    ],
    ids=["results in the other order", "text after the results", "two rounds, then a reply",
         "prefill on a model that has it"],
)
def test_a_conversation_within_the_rules_passes(scripted_api, client, messages):
    accepted(scripted_api, client, body(*messages))


# -- thinking blocks come back as they came, all of them, in their order --
SHOWN = {"type": "adaptive", "display": "summarized"}
THINKING_TURN = {
    "thinking": "The user wants the files listed; run ls.",
    "text": "Listing the files first.",  # on 5.5, a second thinking block
    "tool_calls": [{"name": "bash", "input": {"command": "ls"}}],
}


def thought(scripted_api, client) -> list[dict]:
    """A 5.5 reply with two thinking blocks (its thinking, then its note) and a tool call."""
    scripted_api.play({"turns": [THINKING_TURN, {"text": "Fine."}]})
    reply = client.messages.create(model=SONNET_5_5, max_tokens=1000, tools=[BASH],
                                   messages=[ASK], thinking=SHOWN)
    content = [block.model_dump() for block in reply.content]
    assert [block["type"] for block in content] == ["thinking", "thinking", "tool_use"]
    assert content[0]["signature"] != content[1]["signature"]
    return content


def answer(client, content: list[dict], model: str = SONNET_5_5) -> anthropic.types.Message:
    [call_id] = [block["id"] for block in content if block["type"] == "tool_use"]
    messages = [ASK, {"role": "assistant", "content": content},
                results(result(call_id, "notes.txt"))]
    return client.messages.create(model=model, max_tokens=1000, tools=[BASH], messages=messages,
                                  thinking=SHOWN)


def test_two_thinking_blocks_sent_back_as_they_came_pass(scripted_api, client):
    assert answer(client, thought(scripted_api, client)).content[0].text == "Fine."


MISSING_THINKING = (
    "messages.1: the thinking blocks of a reply with tool_use blocks must be passed back with "
    "them, unmodified, while its tool results are answered"
)


@refused
@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("the second changed", "messages.1.content.1: Invalid `signature` in `thinking` block"),
        ("the second unsigned",
         f"messages.1.content.1: Invalid `signature` in `thinking` block; {MISSING_THINKING}"),
        ("signatures swapped",
         "messages.1.content.0: Invalid `signature` in `thinking` block; "
         f"messages.1.content.1: Invalid `signature` in `thinking` block; {MISSING_THINKING}"),
        ("the second left out", MISSING_THINKING),
        ("the first left out", MISSING_THINKING),
        ("in the other order", MISSING_THINKING),
        ("the second changed, after the call",
         "messages.1.content.2: Invalid `signature` in `thinking` block"),
    ],
)
def test_a_thinking_block_changed_lost_or_moved_is_refused(scripted_api, client, how, message):
    content = thought(scripted_api, client)
    first, second, tool_use = content
    if how.startswith("the second changed"):
        second["thinking"] += " Then read the notes."
    elif how == "the second unsigned":
        second["signature"] = ""
    elif how == "signatures swapped":
        first["signature"], second["signature"] = second["signature"], first["signature"]
    changed = {
        "the second left out": [first, tool_use],
        "the first left out": [second, tool_use],
        "in the other order": [second, first, tool_use],
        "the second changed, after the call": [first, tool_use, second],
    }.get(how, [first, second, tool_use])
    with pytest.raises(anthropic.BadRequestError) as raised:
        answer(client, changed)
    assert raised.value.body["error"]["message"] == message
    assert scripted_api.violations == message.split("; ") and scripted_api.remaining() == 1


@refused
def test_thinking_blocks_are_signed_for_their_model(scripted_api, client):
    with pytest.raises(anthropic.BadRequestError) as raised:
        answer(client, thought(scripted_api, client), model="claude-sonnet-5")
    assert raised.value.body["error"]["message"] == (
        "messages.1.content.0: Invalid `signature` in `thinking` block; "
        "messages.1.content.1: Invalid `signature` in `thinking` block"
    )


# -- prefill: a 5.5 conversation ends on a user message, unless a paused reply resumes --
PREFILL = (
    "messages.1: claude-sonnet-5-5 does not support assistant message prefill; the conversation "
    "must end with a user message"
)


@refused
@pytest.mark.parametrize("changed", [False, True], ids=["as it came", "its text changed"])
def test_only_a_paused_reply_sent_back_unchanged_resumes(scripted_api, client, changed):
    scripted_api.play({"turns": [{"text": "Working on it", "stop_reason": "pause_turn"},
                                 {"text": "Done."}]})
    paused = client.messages.create(model=SONNET_5_5, max_tokens=100, messages=[ASK])
    content = [block.model_dump() for block in paused.content]
    if changed:
        content[0]["text"] += ", almost there"
    messages = [ASK, {"role": "assistant", "content": content}]
    if not changed:
        reply = client.messages.create(model=SONNET_5_5, max_tokens=100, messages=messages)
        assert reply.content[0].text == "Done."
        return
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model=SONNET_5_5, max_tokens=100, messages=messages)
    assert raised.value.body["error"]["message"] == PREFILL


# -- a prompt longer than the context window, at the edge --


def prompt_size(scripted_api, client, request: dict) -> int:
    """The size the server gives the prompt, read from its refusal under a tiny window."""
    scripted_api.play({"context_window": 1, "turns": []})
    with pytest.raises(anthropic.BadRequestError) as raised:
        send(client, request)
    message = raised.value.body["error"]["message"]
    assert message.startswith("prompt is too long: ") and message.endswith(" tokens > 1 maximum")
    return int(message.split()[4])


@pytest.mark.allow_leftover_turns
def test_a_prompt_as_long_as_the_window_passes_and_one_token_more_does_not(scripted_api, client):
    request = body(ASK, calls("toolu_1", "toolu_2"),
                   results(result("toolu_1", "a" * 400), result("toolu_2", "b" * 4000)))
    size = prompt_size(scripted_api, client, request)
    assert 1_000 < size < 1_300  # the tools, the 4,400 characters of results, the rest
    scripted_api.play({"context_window": size, "turns": [{"text": "Fine."}]})
    assert send(client, request).content[0].text == "Fine."
    scripted_api.play({"context_window": size - 1, "turns": [{"text": "Never sent."}]})
    with pytest.raises(anthropic.BadRequestError) as raised:
        send(client, request)
    message = f"prompt is too long: {size} tokens > {size - 1} maximum"
    assert raised.value.body["error"]["message"] == message
    # not the agent's fault: it is to recover (make room), so it is no violation
    assert scripted_api.refused == [message] and scripted_api.violations == []


# -- an endpoint that refuses an optional field (scenario `rejects`) --


@pytest.mark.parametrize(
    ("rejects", "refused_fields", "passing_fields", "message"),
    [
        (["thinking"], {"thinking": {"type": "adaptive"}}, {},
         "thinking: Extra inputs are not permitted"),
        (["thinking.display"], {"thinking": {"type": "adaptive", "display": "omitted"}},
         {"thinking": {"type": "adaptive"}}, "thinking.display: Extra inputs are not permitted"),
        (["cache_control"], {"cache_control": {"type": "ephemeral"}},
         {"system": [{**text("Be brief."), **MARK}]},
         "cache_control: Extra inputs are not permitted"),
    ],
    ids=["thinking", "thinking.display", "top-level cache_control, not a block's"],
)
def test_an_endpoint_refuses_only_the_field_it_lacks(scripted_api, client, rejects,
                                                     refused_fields, passing_fields, message):
    scripted_api.play({"rejects": rejects, "turns": [{"text": "Fine."}]})
    with pytest.raises(anthropic.BadRequestError) as raised:
        send(client, body(ASK, **refused_fields))
    assert raised.value.body["error"]["message"] == message
    assert send(client, body(ASK, **passing_fields)).content[0].text == "Fine."
    assert scripted_api.refused == [message] and scripted_api.violations == []


# -- prompt caching's look-back: a breakpoint finds a cached prefix at most 20 blocks back --
LONG_SYSTEM = "You are a coding agent. " + "Follow the house style of the project. " * 120


@pytest.mark.parametrize(("blocks", "read"), [(19, True), (20, False), (21, False)])
def test_a_breakpoint_reads_a_prefix_cached_up_to_20_blocks_back(scripted_api, client, blocks,
                                                                 read):
    """The system prompt is cached on its own (one block); the next request's breakpoint sits
    `blocks` blocks after it. The breakpoint's block and the 19 before it are looked at: 20."""
    assert CACHE_LOOKBACK == 20  # the number docs_*/context-budget.md quotes
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    first = client.messages.create(
        model=MODEL, max_tokens=100, messages=[ASK],
        system=[{"type": "text", "text": LONG_SYSTEM, **MARK}],
    ).usage
    assert first.cache_creation_input_tokens > 1_024 and first.cache_read_input_tokens == 0
    question = [text(f"Question {number}.") for number in range(blocks)]
    second = client.messages.create(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": question}],
        system=LONG_SYSTEM, cache_control={"type": "ephemeral"},
    ).usage
    expected = first.cache_creation_input_tokens if read else 0
    assert second.cache_read_input_tokens == expected
    assert second.cache_creation_input_tokens + second.cache_read_input_tokens > 1_024


# -- the rules as a function, for what the server checks before it calls them --


def test_the_rules_refuse_a_body_that_is_not_an_object():
    """The server answers a JSON list itself (above); the function says the same to a caller."""
    assert validate_request(["not", "an", "object"]) == ["request body must be a JSON object"]
    assert validate_request(body(ASK)) == []


def test_a_string_content_counts_as_the_text_block_it_stands_for(scripted_api, client):
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    as_string = send(client, body({"role": "user", "content": "List the files."}))
    as_block = send(client, body({"role": "user", "content": [text("List the files.")]}))
    assert as_string.usage.input_tokens == as_block.usage.input_tokens


def test_expectations_read_text_in_every_shape_the_api_takes(scripted_api, client):
    """A tool_result's content as a list of text blocks, a system prompt as blocks: their texts
    are read one per line."""
    scripted_api.play({"turns": [{
        "expect": {"tool_result_contains": "a.py\nnotes.txt",
                   "system_contains": "English.\nBe brief.",
                   "last_user_contains": "Both ran.", "tools": ["bash", "read_file"]},
        "text": "Fine.",
    }]})
    listed = {**result("toolu_1"), "content": [text("a.py"), text("notes.txt")]}
    request = body(ASK, calls("toolu_1"), results(listed, text("Both ran.")),
                   system=[text("Answer in English."), text("Be brief.")])
    assert send(client, request).content[0].text == "Fine."


# -- prompt caching: where a breakpoint may sit, the per-model minimum at its edge, the counts --


def cached(client, request: dict) -> anthropic.types.Usage:
    return send(client, request).usage


@pytest.mark.parametrize("where", ["the last tool", "a message block"])
def test_a_breakpoint_on_a_tool_or_a_message_block_caches_what_comes_before_it(
    scripted_api, client, where
):
    """The long text sits in the marked block; the next request changes only what follows it."""
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    long_tool = {**READ, "description": LONG_SYSTEM}
    if where == "the last tool":
        tools = [BASH, {**long_tool, **MARK}]
        requests = [body(ASK, tools=tools), body(AGAIN, tools=tools)]
    else:
        marked = results({**text(LONG_SYSTEM), **MARK})
        requests = [body(marked), body(marked, REPLY, AGAIN)]
    first, second = cached(client, requests[0]), cached(client, requests[1])
    assert first.cache_creation_input_tokens > 1_024 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0 and second.input_tokens > 0
    for usage in (first, second):
        assert all(isinstance(count, int) for count in (
            usage.input_tokens, usage.output_tokens, usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens))


def test_a_prefix_of_exactly_the_model_minimum_is_cached_and_one_token_less_is_not(
    scripted_api, client
):
    minimum = MODELS[MODEL].cache_minimum
    scripted_api.play({"turns": [{"text": "Sized."}] * 4})

    def written(system_text: str) -> int:
        system = [{**text(system_text), **MARK}]
        return cached(client, body(ASK, tools=[], system=system)).cache_creation_input_tokens

    size = written(LONG_SYSTEM)  # the tokens of the prefix up to the breakpoint
    assert size > minimum
    at_minimum = LONG_SYSTEM[: len(LONG_SYSTEM) - 4 * (size - minimum)]  # 4 characters a token
    assert written(at_minimum) == minimum
    system = [{**text(at_minimum), **MARK}]
    assert cached(client, body(AGAIN, tools=[], system=system)).cache_read_input_tokens == minimum
    assert written(at_minimum[:-4]) == 0  # silently, as the API does


def test_a_longer_reply_counts_more_output_tokens_and_an_empty_one_one(scripted_api, client):
    """On Sonnet 4.6 thinking is off unless asked for: a turn of thinking alone is no content."""
    scripted_api.play({"turns": [{"text": "Hi."}, {"text": "A longer answer. " * 40},
                                 {"thinking": "Nothing to say."}]})
    short, long, empty = (send(client, body(ASK)) for _ in range(3))
    assert long.usage.output_tokens > 100 > short.usage.output_tokens >= 1
    assert (empty.content, empty.usage.output_tokens) == ([], 1)


@refused
def test_each_refused_request_is_a_violation_of_its_own(scripted_api, client):
    scripted_api.play({"turns": [{"text": "Never sent."}]})
    over = MODELS[MODEL].max_output + 1
    forced = {"type": "any"}
    requests = (body(AGAIN, max_tokens=0), body(ASK, tools=[BASH, BASH]),
                body(ASK, max_tokens=over), body(ASK, model=SONNET_5_5, tool_choice=forced))
    for request in requests:
        with pytest.raises(anthropic.BadRequestError):
            send(client, request)
    assert scripted_api.violations[:2] == [
        MAX_TOKENS, "tools: Tool names must be unique ('bash' appears twice)"]
    assert scripted_api.violations[2].startswith(f"max_tokens: {over} > ")
    assert scripted_api.violations[3].startswith("tool_choice: forced tool use ('any')")
    assert len(scripted_api.violations) == 4


@refused
def test_another_endpoint_of_the_api_is_not_found(scripted_api):
    request = urllib.request.Request(scripted_api.start() + "/v1/models", headers=HEADERS)
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=10)
    assert raised.value.code == 404
    assert json.load(raised.value)["error"] == {"type": "not_found_error",
                                                "message": "Not found: GET /v1/models"}

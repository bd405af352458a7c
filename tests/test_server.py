"""The scripted Messages API, driven through the real anthropic SDK over loopback HTTP."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anthropic
import pytest

from scripted import server
from scripted.server import load_scenario, validate_request

MODEL = "claude-sonnet-4-6"
SCENARIOS = Path(__file__).parent / "scenarios"
SYSTEM = "You are a coding agent."
BASH = {
    "name": "bash",
    "description": "Run a shell command.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}
WRITE_FILE = {
    "name": "write_file",
    "description": "Write a file.",
    "input_schema": {
        "type": "object",
        "required": ["path", "content"],
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    },
}
TOOLS = [WRITE_FILE, BASH]


@pytest.fixture
def client(scripted_api) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_api.start(), api_key="k")


def ask(client: anthropic.Anthropic, messages: list | str, **options) -> anthropic.types.Message:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return client.messages.create(model=MODEL, max_tokens=1000, messages=messages, **options)


def stream(
    client: anthropic.Anthropic, messages: list, **options
) -> tuple[anthropic.types.Message, int]:
    """The final message and how many text deltas arrived on the way."""
    with client.messages.stream(
        model=MODEL, max_tokens=1000, messages=messages, **options
    ) as events:
        deltas = sum(
            1
            for event in events
            if event.type == "content_block_delta" and event.delta.type == "text_delta"
        )
        return events.get_final_message(), deltas


def tool_results(message: anthropic.types.Message, *outputs: str) -> dict:
    calls = [block for block in message.content if block.type == "tool_use"]
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": output}
            for call, output in zip(calls, outputs, strict=True)
        ],
    }


# -- replies the SDK understands --


def test_a_scripted_run_streams_and_the_sdk_rebuilds_every_block(scripted_api, client):
    scenario = load_scenario(SCENARIOS / "write_and_run.yaml")
    scripted_api.play(scenario)
    messages = [{"role": "user", "content": scenario["task"]}]

    first, text_deltas = stream(client, messages, system=SYSTEM, tools=TOOLS)
    assert text_deltas > 1
    assert first.content[0].text == scenario["turns"][0]["text"]
    assert first.content[1].input == scenario["turns"][0]["tool_calls"][0]["input"]
    assert first.stop_reason == "tool_use"
    # passed back the way agent code does it: the SDK's own objects, dumped
    messages += [
        {"role": "assistant", "content": [block.model_dump() for block in first.content]},
        tool_results(first, "wrote 52 bytes to hello.py"),
    ]

    second, _ = stream(client, messages, system=SYSTEM, tools=TOOLS)
    assert second.content[0].input == {"command": "python hello.py"}
    messages += [
        {"role": "assistant", "content": [block.model_dump() for block in second.content]},
        tool_results(second, "hi\n"),
    ]

    last = ask(client, messages, system=SYSTEM, tools=TOOLS)
    assert (last.content[0].text, last.stop_reason) == ("Done: hello.py prints hi.", "end_turn")
    assert validate_request(scripted_api.requests[-1].body) == []
    assert len({first.content[1].id, second.content[0].id}) == 2


def test_a_huge_unicode_text_arrives_whole(scripted_api, client):
    text = "日本語のテキスト — ünïcödé ✓\n" * 20_000
    scripted_api.play({"turns": [{"text": text}]})
    message, text_deltas = stream(client, [{"role": "user", "content": "Print a lot."}])
    assert message.content[0].text == text
    assert text_deltas < 1000


def test_create_without_streaming_reports_usage_and_model(scripted_api, client):
    scripted_api.play({"turns": [{"text": "Hello.", "stop_reason": "max_tokens"}]})
    message = ask(client, "Say hello.")
    assert (message.content[0].text, message.stop_reason, message.model) == (
        "Hello.",
        "max_tokens",
        MODEL,
    )
    assert message.usage.input_tokens > 0 and message.usage.output_tokens >= 1
    assert (
        scripted_api.requests[0].headers["authorization"] == "Bearer k"
    )  # how SDK 2.x sends api_key


def test_second_request_with_the_same_cached_prefix_reads_the_cache(scripted_api, client):
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    cached = {"system": SYSTEM, "tools": TOOLS, "cache_control": {"type": "ephemeral"}}
    first = ask(client, "First question.", **cached).usage
    second = ask(client, "A second, longer question.", **cached).usage
    assert first.cache_creation_input_tokens > 0 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0


# -- errors and retries --


def test_rate_limit_is_retried_by_the_sdk(scripted_api, client):
    scripted_api.play(
        {"turns": [{"error": {"status": 429, "message": "slow down"}}, {"text": "Made it."}]}
    )
    assert ask(client, "Hi.").content[0].text == "Made it."
    assert len(scripted_api.requests) == 2


def test_overload_raises_after_the_sdk_gives_up(scripted_api, client):
    scripted_api.play({"turns": [{"error": {"status": 529}, "repeat": 3}]})
    with pytest.raises(anthropic.OverloadedError):
        ask(client, "Hi.")
    assert len(scripted_api.requests) == 3  # default max_retries=2


@pytest.mark.parametrize(
    "status, error", [(401, anthropic.AuthenticationError), (400, anthropic.BadRequestError)]
)
def test_scripted_error_raises_the_sdk_exception(scripted_api, client, status, error):
    scripted_api.play({"turns": [{"error": {"status": status, "message": "scripted failure"}}]})
    with pytest.raises(error, match="scripted failure"):
        stream(client, [{"role": "user", "content": "Hi."}])


@pytest.mark.allow_violations
def test_other_endpoints_answer_not_found(scripted_api, client):
    with pytest.raises(anthropic.NotFoundError):
        client.models.list()
    assert "no such endpoint GET /v1/models" in scripted_api.problems[0]


# -- concurrency and tracks --


def test_latency_lets_parallel_requests_overlap(scripted_api, client):
    """A slow reply does not hold up the next request: the server takes it while the first one still
    waits."""
    scripted_api.play({"turns": [{"text": "Slow.", "latency": 2}, {"text": "Quick."}]})
    slow = threading.Thread(target=ask, args=(client, "Hi."))
    slow.start()
    waited = 0
    while (
        not scripted_api.requests and waited < 1000
    ):  # until the slow request has arrived and holds turn one
        time.sleep(0.01)
        waited += 1
    assert ask(client, "Hi again.").content[0].text == "Quick."
    slow.join()
    first, second = scripted_api.requests
    # Order only, no durations: a server that handled one request at a time could not have
    # received the second before it answered the first.
    assert second.received < first.answered


def test_a_held_reply_goes_out_only_after_release(scripted_api, client):
    scripted_api.play({"turns": [{"text": "Held.", "hold": True}]})
    answers = []
    asking = threading.Thread(target=lambda: answers.append(ask(client, "Hi.")))
    asking.start()
    while not scripted_api.requests:
        time.sleep(0.01)
    asking.join(0.3)
    assert not answers and not scripted_api.requests[0].answered
    scripted_api.release()
    asking.join()
    assert answers[0].content[0].text == "Held."


def test_a_held_reply_waits_for_the_release_of_its_own_scenario(scripted_api, client, monkeypatch):
    """A handler thread can reach its wait after its test released the reply and the next test
    called play() (a busy machine runs it late; the latency stands in for that). The reply still
    goes out at once, and the next test is not blamed for a hold it never made."""
    monkeypatch.setattr(server, "HOLD_LIMIT", 2)  # the wrong wait would end after 2 s, not 30
    scripted_api.play({"turns": [{"text": "Held.", "hold": True, "latency": 0.5}]})
    answers = []
    asking = threading.Thread(target=lambda: answers.append(ask(client, "Hi.")))
    asking.start()
    while not scripted_api.requests:
        time.sleep(0.01)
    scripted_api.release()  # the first test ends here...
    scripted_api.play({"turns": []})  # ...and the next one begins while the handler still sleeps
    asking.join()
    assert answers[0].content[0].text == "Held."
    assert scripted_api.problems == []


def test_a_reply_held_midway_streams_its_first_half_then_waits_for_release(scripted_api, client):
    text = "A reply long enough to come in many pieces, of which only the first half arrives."
    scripted_api.play({"turns": [{"text": text, "hold": "midway"}]})
    pieces = []

    def read_the_stream():
        with client.messages.stream(
            model=MODEL, max_tokens=1000, messages=[{"role": "user", "content": "Hi."}]
        ) as events:
            for piece in events.text_stream:
                pieces.append(piece)

    reading = threading.Thread(target=read_the_stream)
    reading.start()
    while not pieces:
        time.sleep(0.01)
    reading.join(0.3)
    assert reading.is_alive() and text.startswith("".join(pieces)) and "".join(pieces) != text
    scripted_api.release()
    reading.join()
    assert "".join(pieces) == text


def test_tracks_route_requests_by_their_first_user_message(scripted_api, client):
    scripted_api.play(SCENARIOS / "subagents.yaml")
    subagent = ask(client, "Please find the auth code in src/.")
    lead = ask(client, "Refactor the login flow.")
    assert (subagent.content[0].text, lead.content[0].text) == (
        "It is in auth.py.",
        "The lead agent's answer.",
    )
    assert [request.track for request in scripted_api.requests] == ["find the auth code", "default"]


def test_repeat_plays_a_turn_several_times(scripted_api, client):
    scripted_api.play({"turns": [{"text": "Again.", "repeat": 3}]})
    assert [ask(client, "Hi.").content[0].text for _ in range(3)] == ["Again."] * 3


# -- a scenario that does not go as scripted --


@pytest.mark.allow_violations
def test_failed_expect_is_a_problem_and_a_400(scripted_api, client):
    scripted_api.play({"turns": [{"expect": {"last_user_contains": "please"}, "text": "Sure."}]})
    with pytest.raises(anthropic.BadRequestError, match="turn 1: expect failed"):
        ask(client, "Do it now.")
    assert scripted_api.problems == [
        "turn 1: expect failed: the last user message does not contain 'please'"
    ]


@pytest.mark.allow_violations
def test_exhausted_scenario_is_a_problem_and_a_400(scripted_api, client):
    with pytest.raises(anthropic.BadRequestError, match="no turn left"):
        ask(client, "Hi.")
    assert "no turn left" in scripted_api.problems[0]


@pytest.mark.allow_violations
def test_scripted_tool_call_must_fit_the_declared_schema(scripted_api, client):
    scripted_api.play(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "bash", "input": {"cmd": "ls"}},
                        {"name": "no_such_tool", "input": {}, "invalid": True},
                    ]
                }
            ]
        }
    )
    message = ask(client, "List files.", tools=[BASH])
    assert [block.name for block in message.content] == ["bash", "no_such_tool"]
    assert scripted_api.problems == [
        "turn 1: tool call 'bash' does not fit its input_schema: 'command' is a required property"
    ]


def test_a_bad_scenario_file_names_the_file_and_the_step(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("turns:\n  - text: Hi.\n  - txet: Oops.\n")
    with pytest.raises(ValueError, match=r"typo\.yaml: turn 2: unknown key\(s\) \['txet'\]"):
        load_scenario(path)


# -- the API's rules --

USER = {"role": "user", "content": "List the files."}
CALL = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
    ],
}
RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}],
}
REPLY = {"role": "assistant", "content": "There is a.py."}


def body(*messages: dict, **fields) -> dict:
    return {
        "model": MODEL,
        "max_tokens": 100,
        "tools": [BASH],
        "messages": list(messages),
        **fields,
    }


@pytest.mark.parametrize(
    "request_body, fragment",
    [
        pytest.param(
            body(USER, CALL, {"role": "user", "content": "Go on."}, REPLY, USER),
            "without `tool_result`",
            id="unanswered tool_use in the middle",
        ),
        pytest.param(
            body(USER, CALL), "without `tool_result`", id="unanswered tool_use at the end"
        ),
        pytest.param(
            body(USER, REPLY, RESULT), "unexpected `tool_use_id`", id="orphan tool_result"
        ),
        pytest.param(
            body(USER, CALL, {"role": "user", "content": RESULT["content"] * 2}),
            "duplicate `tool_result`",
            id="tool_result twice",
        ),
        pytest.param(
            body(
                USER,
                CALL,
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "Here:"}, *RESULT["content"]],
                },
            ),
            "must come before any other content",
            id="tool_result after text",
        ),
        pytest.param(
            body(USER, CALL, RESULT, CALL, RESULT), "ids must be unique", id="tool_use id reused"
        ),
        pytest.param(body(USER, USER), "roles must alternate", id="two user messages in a row"),
        pytest.param(
            body(REPLY, USER), 'first message must use the "user" role', id="assistant first"
        ),
        pytest.param(
            body({"role": "user", "content": [{"type": "text", "text": ""}]}),
            "text content blocks must be non-empty",
            id="empty text block",
        ),
        pytest.param(body(), "messages: Field required", id="no messages"),
        pytest.param(
            {k: v for k, v in body(USER).items() if k != "max_tokens"},
            "max_tokens",
            id="no max_tokens",
        ),
        pytest.param(
            body(USER, tools=[BASH, BASH]), "Tool names must be unique", id="duplicate tool names"
        ),
        pytest.param(
            body(USER, tools=[{**BASH, "name": "run shell"}]),
            "should match pattern",
            id="bad tool name",
        ),
        pytest.param(
            body(
                USER,
                tools=[
                    {**BASH, "input_schema": {"type": "object", "properties": {"x": {"type": 1}}}}
                ],
            ),
            "JSON schema is invalid",
            id="bad schema",
        ),
        pytest.param(
            body(USER, tools=[{**BASH, "input_schema": {"type": "string"}}]),
            "Input should be 'object'",
            id="schema not an object",
        ),
        pytest.param(
            body(USER, tool_choice={"type": "tool", "name": "write_file"}),
            "tool_choice.name",
            id="tool_choice names an undeclared tool",
        ),
        pytest.param(
            body(USER, cache_control={"type": "forever"}), "cache_control", id="bad cache_control"
        ),
        pytest.param(body(USER, system=[{"type": "image"}]), "system", id="system not text"),
        pytest.param(
            {k: v for k, v in body(USER, CALL, RESULT).items() if k != "tools"},
            "must define tools",
            id="tool blocks without tools",
        ),
    ],
)
def test_validator_rejects(request_body, fragment):
    errors = validate_request(request_body)
    assert any(fragment in error for error in errors), errors


@pytest.mark.parametrize(
    "request_body",
    [
        pytest.param(body(USER, CALL, RESULT, REPLY, USER), id="a tool round trip"),
        pytest.param(
            body(USER, {"role": "assistant", "content": "Partial answer"}),
            id="continuing an assistant turn",
        ),
        pytest.param(
            body(
                USER,
                system=SYSTEM,
                cache_control={"type": "ephemeral", "ttl": "1h"},
                tool_choice={"type": "tool", "name": "bash"},
            ),
            id="system, cache and tool_choice",
        ),
    ],
)
def test_validator_accepts(request_body):
    assert validate_request(request_body) == []


@pytest.mark.allow_violations
@pytest.mark.allow_leftover_turns
def test_a_broken_conversation_is_refused_like_the_real_api(scripted_api, client):
    scripted_api.play({"turns": [{"text": "Never sent."}]})
    with pytest.raises(anthropic.BadRequestError, match="without `tool_result`"):
        ask(client, [USER, CALL, {"role": "user", "content": "Go on."}], tools=[BASH])
    assert "without `tool_result`" in scripted_api.violations[0]
    assert scripted_api.remaining() == 1  # a refused request does not use up a turn

"""The scripted Messages API, driven through the real anthropic SDK over loopback HTTP."""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from pathlib import Path
from typing import get_args

import anthropic
import pytest
from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types import ModelParam

from plumbing.model import MAX_OUTPUT, UNKNOWN_MAX_OUTPUT
from scripted import server
from scripted.models import MODELS, Model
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


# -- prompt caching, as documented: the breakpoint, the longest prefix, the per-model minimum --
LONG_SYSTEM = "You are a coding agent. " + "Follow the house style of the project. " * 120


def cached_ask(client, messages: list, model: str = MODEL) -> anthropic.types.Usage:
    return client.messages.create(
        model=model,
        max_tokens=1000,
        system=LONG_SYSTEM,
        tools=TOOLS,
        messages=messages,
        cache_control={"type": "ephemeral"},
    ).usage


def test_a_follow_up_request_reads_the_whole_earlier_conversation_from_the_cache(
    scripted_api, client
):
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    messages = [{"role": "user", "content": "First question."}]
    first = cached_ask(client, messages)
    messages += [
        {"role": "assistant", "content": "One."},
        {"role": "user", "content": "A second question."},
    ]
    second = cached_ask(client, messages)
    # The breakpoint sat on the first request's last block, so all of it was written...
    assert first.cache_read_input_tokens == 0 and first.input_tokens == 0
    assert first.cache_creation_input_tokens > 1_024
    # ...and the second request reads all of it back, and writes only what came since.
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert 0 < second.cache_creation_input_tokens < 100 and second.input_tokens == 0


def test_below_the_model_minimum_nothing_is_cached_and_nothing_says_so(scripted_api, client):
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    cached = {"system": SYSTEM, "tools": TOOLS, "cache_control": {"type": "ephemeral"}}
    for _ in range(2):
        usage = ask(client, "A short prompt.", **cached).usage
        assert (usage.cache_creation_input_tokens, usage.cache_read_input_tokens) == (0, 0)
        assert usage.input_tokens > 100


@pytest.mark.parametrize(
    ("model", "cached"), [("claude-sonnet-5-5", True), ("claude-sonnet-5", False)]
)
def test_the_minimum_cacheable_prefix_depends_on_the_model(scripted_api, client, model, cached):
    """About 700 tokens: over Sonnet 5.5's minimum (512), under Sonnet 5's (1,024)."""
    scripted_api.play({"turns": [{"text": "One."}]})
    system = "Follow the house style. " * 110
    usage = client.messages.create(
        model=model,
        max_tokens=1000,
        system=system,
        messages=[{"role": "user", "content": "Hi."}],
        cache_control={"type": "ephemeral"},
    ).usage
    assert 512 < usage.cache_creation_input_tokens + usage.input_tokens < 1_024
    assert (usage.cache_creation_input_tokens > 0) is cached


def test_a_breakpoint_on_the_system_prompt_caches_only_what_comes_before_it(scripted_api, client):
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    system = [{"type": "text", "text": LONG_SYSTEM, "cache_control": {"type": "ephemeral"}}]
    first = ask(client, "First question.", system=system, tools=TOOLS).usage
    second = ask(client, "Another question, of another length.", system=system, tools=TOOLS).usage
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens > 1_024
    assert second.cache_creation_input_tokens == 0 and second.input_tokens > 0


@pytest.mark.allow_violations
def test_more_than_four_breakpoints_are_refused(scripted_api, client):
    marked = [{**tool, "cache_control": {"type": "ephemeral"}} for tool in TOOLS]
    system = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}] * 2
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks"):
        ask(client, "Hi.", system=system, tools=marked, cache_control={"type": "ephemeral"})


# -- thinking, per model: signed blocks that must come back as they came --
SONNET_5_5 = "claude-sonnet-5-5"
SHOWN = {"type": "adaptive", "display": "summarized"}
THINKING_TURN = {
    "thinking": "The user wants a file; write it, then run it.",
    "text": "Writing hello.py first.",
    "tool_calls": [{"name": "bash", "input": {"command": "python hello.py"}}],
}


def think(client, messages: list, model: str = SONNET_5_5, **options) -> anthropic.types.Message:
    return client.messages.create(
        model=model, max_tokens=1000, tools=[BASH], messages=messages, **options
    )


def answered(reply: anthropic.types.Message, content: list | None = None) -> list:
    """The conversation after `reply`, sent back as `content` (default: as it came)."""
    if content is None:
        content = [block.model_dump() for block in reply.content]
    call = [block for block in reply.content if block.type == "tool_use"][0]
    return [
        {"role": "user", "content": "Make hello.py and run it."},
        {"role": "assistant", "content": content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "hi"}],
        },
    ]


@pytest.mark.parametrize(
    ("model", "thinking", "shapes"),
    [
        # 5.5: the note between tool calls is a thinking block; shown only when display says so
        (
            SONNET_5_5,
            SHOWN,
            [
                ("thinking", THINKING_TURN["thinking"]),
                ("thinking", THINKING_TURN["text"]),
                ("tool_use", None),
            ],
        ),
        (SONNET_5_5, None, [("thinking", ""), ("thinking", ""), ("tool_use", None)]),
        # 5: the note stays text; the thinking is summarized by default
        (
            "claude-sonnet-5",
            None,
            [
                ("thinking", THINKING_TURN["thinking"]),
                ("text", THINKING_TURN["text"]),
                ("tool_use", None),
            ],
        ),
    ],
    ids=["5.5, summarized", "5.5, display omitted by default", "5"],
)
def test_a_reply_thinks_as_its_model_does(scripted_api, client, model, thinking, shapes):
    scripted_api.play({"turns": [THINKING_TURN]})
    options = {"thinking": thinking} if thinking else {}
    reply = think(
        client, [{"role": "user", "content": "Make hello.py and run it."}], model, **options
    )
    found = [
        (block.type, getattr(block, "thinking", getattr(block, "text", None)))
        for block in reply.content
    ]
    assert found == shapes
    assert all(block.signature for block in reply.content if block.type == "thinking")


def test_thinking_blocks_sent_back_as_they_came_are_accepted(scripted_api, client):
    scripted_api.play({"turns": [THINKING_TURN, {"text": "Done."}]})
    first = think(
        client, [{"role": "user", "content": "Make hello.py and run it."}], thinking=SHOWN
    )
    assert think(client, answered(first), thinking=SHOWN).content[0].text == "Done."


def tampered(reply: anthropic.types.Message, how: str) -> list:
    content = [block.model_dump() for block in reply.content]
    if how == "changed":
        content[0]["thinking"] += " And one more idea."
    elif how == "unsigned":
        content[0]["signature"] = ""
    elif how == "left out":
        content = [block for block in content if block["type"] != "thinking"]
    return content


@pytest.mark.allow_violations
@pytest.mark.allow_leftover_turns
@pytest.mark.parametrize(
    ("how", "error"),
    [
        ("changed", "Invalid `signature` in `thinking` block"),
        ("unsigned", "Invalid `signature` in `thinking` block"),
        ("left out", "must be passed back with them"),
    ],
)
def test_a_thinking_block_changed_unsigned_or_left_out_is_refused(scripted_api, client, how, error):
    scripted_api.play({"turns": [THINKING_TURN, {"text": "Never sent."}]})
    first = think(
        client, [{"role": "user", "content": "Make hello.py and run it."}], thinking=SHOWN
    )
    with pytest.raises(anthropic.BadRequestError, match=error):
        think(client, answered(first, tampered(first, how)), thinking=SHOWN)


@pytest.mark.allow_violations
@pytest.mark.allow_leftover_turns
def test_thinking_blocks_are_tied_to_the_model_that_wrote_them(scripted_api, client):
    scripted_api.play({"turns": [THINKING_TURN, {"text": "Never sent."}]})
    first = think(
        client, [{"role": "user", "content": "Make hello.py and run it."}], thinking=SHOWN
    )
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature`"):
        think(client, answered(first), model="claude-sonnet-5")


def test_a_thinking_block_cut_by_max_tokens_has_no_signature(scripted_api, client):
    scripted_api.play(
        {"turns": [{"thinking": "A long train of thought", "stop_reason": "max_tokens"}]}
    )
    with client.messages.stream(
        model=SONNET_5_5,
        max_tokens=1000,
        messages=[{"role": "user", "content": "Hi."}],
        thinking=SHOWN,
    ) as events:
        reply = events.get_final_message()
    [block] = reply.content
    assert (block.type, block.thinking, block.signature) == (
        "thinking",
        "A long train of thought",
        "",
    )


# -- what each model refuses --
@pytest.mark.allow_violations
@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"thinking": {"type": "disabled"}}, "thinking.type: 'disabled' is not supported"),
        ({"tool_choice": {"type": "any"}}, "forced tool use"),
        ({"tool_choice": {"type": "tool", "name": "bash"}}, "forced tool use"),
        ({"max_tokens": 200_000}, "maximum allowed number of output tokens"),
    ],
    ids=["thinking disabled", "tool_choice any", "tool_choice tool", "max_tokens over 128K"],
)
def test_sonnet_5_5_refuses(scripted_api, client, options, error):
    # a timeout of its own: the SDK refuses a long non-streaming request before it is sent
    request = {"model": SONNET_5_5, "max_tokens": 1000, "tools": [BASH], "timeout": 30, **options}
    with pytest.raises(anthropic.BadRequestError, match=error):
        client.messages.create(messages=[{"role": "user", "content": "Hi."}], **request)


def test_sonnet_4_6_takes_a_forced_tool_choice_and_thinking_disabled(scripted_api, client):
    scripted_api.play({"turns": [{"tool_calls": [{"name": "bash", "input": {"command": "ls"}}]}]})
    options = {"tool_choice": {"type": "any"}, "thinking": {"type": "disabled"}}
    assert ask(client, "List.", tools=[BASH], **options).stop_reason == "tool_use"


@pytest.mark.allow_violations
def test_an_unknown_model_is_not_found(scripted_api, client):
    with pytest.raises(anthropic.NotFoundError, match="claude-nope"):
        client.messages.create(model="claude-nope", max_tokens=10, messages=[USER])


@pytest.mark.allow_violations
@pytest.mark.allow_leftover_turns
def test_sonnet_5_5_takes_no_prefill_but_resumes_a_paused_turn(scripted_api, client):
    scripted_api.play(
        {"turns": [{"text": "Working on it", "stop_reason": "pause_turn"}, {"text": "Done."}]}
    )
    first = think(client, [USER])
    resumed = [
        USER,
        {"role": "assistant", "content": [block.model_dump() for block in first.content]},
    ]
    assert think(client, resumed).content[0].text == "Done."
    with pytest.raises(
        anthropic.BadRequestError, match="does not support assistant message prefill"
    ):
        think(client, [USER, {"role": "assistant", "content": "The answer is"}])


# -- failures the real API sends: mid-stream errors, refused fields, prompts too long --
def test_an_error_event_can_break_off_a_200_stream(scripted_api, client):
    scripted_api.play(
        {
            "turns": [
                {
                    "text": "Half of this arrives, then the stream breaks off.",
                    "error": {"status": 529, "midstream": True},
                }
            ]
        }
    )
    pieces = []
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error") as raised:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=[USER]) as events:
            for piece in events.text_stream:
                pieces.append(piece)
    assert raised.value.status_code == 200 and pieces
    assert len(scripted_api.requests) == 1  # the SDK does not retry a stream that began


def test_an_endpoint_can_refuse_an_optional_field(scripted_api, client):
    scripted_api.play({"rejects": ["cache_control"], "turns": [{"text": "Fine."}]})
    with pytest.raises(
        anthropic.BadRequestError, match="cache_control: Extra inputs are not permitted"
    ):
        ask(client, "Hi.", cache_control={"type": "ephemeral"})
    assert ask(client, "Hi.").content[0].text == "Fine."
    assert scripted_api.refused and not scripted_api.violations


def test_an_endpoint_can_refuse_a_field_inside_another_and_take_the_outer_one(
    scripted_api, client
):
    """`thinking.display` refused: a thinking setting without a display is still taken."""
    scripted_api.play({"rejects": ["thinking.display"], "turns": [{"text": "Fine."}]})
    with pytest.raises(
        anthropic.BadRequestError, match="thinking.display: Extra inputs are not permitted"
    ):
        ask(client, "Hi.", thinking={"type": "adaptive", "display": "summarized"})
    assert ask(client, "Hi.", thinking={"type": "adaptive"}).content[-1].text == "Fine."
    assert scripted_api.refused == ["thinking.display: Extra inputs are not permitted"]


def test_a_prompt_longer_than_the_context_window_is_too_long(scripted_api, client):
    scripted_api.play({"context_window": 500, "turns": [{"text": "Short is fine."}]})
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, "x" * 4_000)
    message = caught.value.response.json()["error"]["message"]
    assert re.fullmatch(r"prompt is too long: \d+ tokens > 500 maximum", message), message
    assert ask(client, "Hi.").content[0].text == "Short is fine."


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
            body(USER, tools=[{**BASH, "input_schema": {**BASH["input_schema"], "oneOf": []}}]),
            "does not support oneOf, allOf, or anyOf at the top level",
            id="a top-level oneOf",
        ),
        pytest.param(
            body(USER, thinking={"type": "sometimes"}), "thinking.type", id="no such thinking"
        ),
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


# -- the model table (scripted/models.py) --


def sdk_model_ids() -> list[str]:
    """The model ids the installed SDK names (anthropic/types/model_param.py)."""
    return list(get_args(get_args(ModelParam)[0]))


def test_the_model_table_has_every_current_model_of_the_sdk_and_no_other():
    current = [model for model in sdk_model_ids() if model not in DEPRECATED_MODELS]
    assert sorted(MODELS) == sorted(current)
    assert "claude-opus-5-5" in MODELS and "claude-sonnet-4-5" not in MODELS


def test_each_model_names_its_pages_and_only_real_fields_as_unknown():
    fields = {field.name for field in dataclasses.fields(Model)}
    for model_id, model in MODELS.items():
        assert model.sources, model_id
        assert set(model.unknown) <= fields - {"sources", "unknown"}, model_id
        assert model.status in ("current", "legacy"), model_id


def test_sonnet_4_6_writes_up_to_128k_as_its_page_says():
    assert MODELS["claude-sonnet-4-6"].max_output == 128_000
    assert MODELS["claude-haiku-4-5"].max_output == 64_000


def test_the_agents_max_output_table_matches_the_model_table():
    """plumbing/model.py keeps its own figures (the lesson does not import the test server);
    they must be the model table's."""
    for model_id, figure in MAX_OUTPUT.items():
        assert figure == MODELS[model_id].max_output, model_id
    assert UNKNOWN_MAX_OUTPUT == min(model.max_output for model in MODELS.values())


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_every_current_model_is_served_up_to_its_maximum_output(scripted_api, model_id):
    limit = MODELS[model_id].max_output
    scripted_api.play({"turns": [{"text": "ok"}]})
    client = anthropic.Anthropic(max_retries=0)
    events = client.messages.create(
        model=model_id,
        max_tokens=limit,
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
    )
    assert [event.type for event in events][-1] == "message_stop"
    with pytest.raises(anthropic.BadRequestError, match="maximum allowed number of output"):
        client.messages.create(
            model=model_id,
            max_tokens=limit + 1,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
    scripted_api.violations.clear()

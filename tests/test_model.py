"""plumbing/model.py: one model reply, streamed, through the real SDK against the scripted server.

What a retry fixes is fixed here once for every script: an endpoint that refuses an optional
field, an `event: error` inside a 200 stream, a reply cut inside a tool call. The lesson's
side of each (what the user sees, what the history keeps) is in test_loop.py.
"""

import anthropic
import pytest

from plumbing.model import MAX_OUTPUT, STREAM_RETRIES, RequestOptions, stream_reply
from plumbing.screen import Screen
from tests.agents import BASH_TOOL

MODEL = "claude-sonnet-5-5"
BASH = BASH_TOOL
REQUEST = {
    "model": MODEL,
    "max_tokens": 1_000,
    "tools": [BASH],
    "messages": [{"role": "user", "content": "List the files."}],
}


@pytest.fixture
def client(scripted_api) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_api.start(), api_key="k")


@pytest.fixture
def screen() -> Screen:
    return Screen()


def reply(client, screen, request: dict = REQUEST, options: RequestOptions | None = None):
    return stream_reply(client, request, options or RequestOptions(screen), screen)


def test_thinking_is_asked_for_summarized_and_shown_dimmed_apart_from_the_text(
    scripted_api, client, screen, capsys
):
    scripted_api.play({"turns": [{"thinking": "First a plan.\nThen the answer.", "text": "Done."}]})
    response = reply(client, screen)
    body = scripted_api.requests[0].body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["cache_control"] == {"type": "ephemeral"}
    assert capsys.readouterr().out == "  ┊ First a plan.\n  ┊ Then the answer.\nDone."
    assert [block.type for block in response.content] == ["thinking", "text"]


@pytest.mark.parametrize(
    ("field", "left"),
    [
        ("cache_control", {"thinking": {"type": "adaptive", "display": "summarized"}}),
        (
            "thinking.display",
            {"thinking": {"type": "adaptive"}, "cache_control": {"type": "ephemeral"}},
        ),
        ("thinking", {"cache_control": {"type": "ephemeral"}}),
    ],
)
def test_an_optional_field_the_endpoint_refuses_is_dropped_once_and_said(
    scripted_api, client, screen, capsys, field, left
):
    scripted_api.play({"rejects": [field], "turns": [{"text": "One."}, {"text": "Two."}]})
    options = RequestOptions(screen)
    reply(client, screen, options=options)
    reply(client, screen, options=options)
    sent = [request.body for request in scripted_api.requests]
    assert len(sent) == 3  # refused once, then never again
    for body in sent[1:]:
        assert {name: body[name] for name in ("thinking", "cache_control") if name in body} == left
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"the endpoint refused {field}" in line and "going on without it" in line


@pytest.mark.allow_violations
def test_a_model_without_adaptive_thinking_gets_requests_without_it(
    scripted_api, client, screen, capsys
):
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}]})
    options = RequestOptions(screen)
    haiku = {**REQUEST, "model": "claude-haiku-4-5"}
    reply(client, screen, haiku, options)
    reply(client, screen, haiku, options)
    assert ["thinking" in request.body for request in scripted_api.requests] == [True, False, False]
    assert [violation.split(":")[0] for violation in scripted_api.violations] == ["thinking.type"]
    assert "the endpoint refused thinking" in capsys.readouterr().err


@pytest.mark.allow_violations
def test_a_400_about_anything_else_is_not_taken_for_a_refused_option(scripted_api, client, screen):
    request = {**REQUEST, "max_tokens": MAX_OUTPUT[MODEL] + 1}
    with pytest.raises(anthropic.BadRequestError, match="max_tokens"):
        reply(client, screen, request)
    assert len(scripted_api.requests) == 1


MIDSTREAM = {"text": "Half of this shows, then", "error": {"status": 529, "midstream": True}}


def test_an_error_event_in_a_200_stream_is_retried_with_the_same_request(
    scripted_api, client, screen, capsys
):
    scripted_api.play({"turns": [MIDSTREAM, {"text": "The whole reply."}]})
    response = reply(client, screen)
    first, second = (request.body for request in scripted_api.requests)
    assert first == second and response.content[0].text == "The whole reply."
    shown = capsys.readouterr()
    assert "retrying: the stream broke off (overloaded_error" in shown.err
    assert shown.out.endswith("\nThe whole reply.")  # the broken half ends its line first


def test_an_error_event_that_keeps_coming_is_raised_after_the_retries(scripted_api, client, screen):
    scripted_api.play({"turns": [{**MIDSTREAM, "repeat": STREAM_RETRIES + 1}]})
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
        reply(client, screen)
    assert len(scripted_api.requests) == STREAM_RETRIES + 1


CUT_CALL = {
    "tool_calls": [{"name": "bash", "input": {"command": "echo cut"}}],
    "stop_reason": "max_tokens",
}


def test_a_reply_cut_inside_a_tool_call_is_asked_again_with_room_up_to_the_maximum(
    scripted_api, client, screen, capsys
):
    whole = {"tool_calls": [{"name": "bash", "input": {"command": "echo whole"}}]}
    scripted_api.play({"turns": [CUT_CALL, whole]})
    response = reply(client, screen)
    assert [request.body["max_tokens"] for request in scripted_api.requests] == [1_000, 128_000]
    assert (
        response.stop_reason == "tool_use" and response.content[0].input["command"] == "echo whole"
    )
    assert "cut inside a tool call at max_tokens=1,000" in capsys.readouterr().err


def test_a_reply_cut_again_is_returned_as_it_is_after_one_retry(scripted_api, client, screen):
    scripted_api.play({"turns": [{**CUT_CALL, "repeat": 2}]})
    assert reply(client, screen).stop_reason == "max_tokens"
    assert len(scripted_api.requests) == 2


# -- endpoints that word a refusal their own way (the rows of scripted/endpoints.py) --


@pytest.mark.parametrize(
    ("endpoint", "field", "left"),
    [
        # a gateway in front of Bedrock or Vertex: "cache_control: Extra inputs are not permitted"
        ("cloud-gateway", "cache_control", {"thinking"}),
        # LiteLLM's OpenAI-format route: an OpenAI-shaped 400 that names ['reasoning_effort']
        ("litellm-openai", "thinking", {"cache_control"}),
    ],
)
def test_a_refused_field_is_dropped_by_the_field_the_error_names_not_by_its_wording(
    scripted_api, screen, capsys, endpoint, field, left
):
    scripted_api.play({"endpoint": endpoint, "turns": [{"text": "One."}, {"text": "Two."}]})
    env = scripted_api.endpoint_env(endpoint)
    client = anthropic.Anthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key="k")
    options = RequestOptions(screen)
    request = {**REQUEST, "model": env.get("MODEL_ID", MODEL)}
    reply(client, screen, request, options)
    reply(client, screen, request, options)
    sent = [request.body for request in scripted_api.requests]
    assert len(sent) == 3 and field in sent[0]  # refused once, then never sent again
    for body in sent[1:]:
        assert {name for name in ("thinking", "cache_control") if name in body} == left
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"the endpoint refused {field}" in line and "going on without it" in line


@pytest.mark.parametrize("field", ["cache_control", "thinking"])
def test_an_openai_shaped_refusal_is_read_by_the_field_its_param_names(
    scripted_api, screen, capsys, field
):
    """llama.cpp's row answers in OpenAI's shape, whose `param` names the field: its message here
    names none, so only `param` tells which option to drop (the other one stays)."""
    refusal = {"status": 400, "message": "this server does not support that", "param": field}
    scripted_api.play({"endpoint": "llama.cpp", "turns": [{"error": refusal}, {"text": "One."}]})
    env = scripted_api.endpoint_env("llama.cpp")
    client = anthropic.Anthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key="k", max_retries=0)
    request = {**REQUEST, "model": env.get("MODEL_ID", MODEL)}
    assert reply(client, screen, request).content[0].text == "One."
    first, second = (recorded.body for recorded in scripted_api.requests)
    assert scripted_api.requests[0].reply["body"]["error"]["param"] == field
    assert field in first and field not in second
    assert {"thinking", "cache_control"} - {field} <= set(second)
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"the endpoint refused {field}" in line


@pytest.mark.parametrize(
    ("status", "message"),
    [
        # a thinking block of the history, named by its place: not the request's `thinking`
        (400, "messages.1.content.0: Invalid `signature` in `thinking` block"),
        # `thinking` named, but in an answer that is no refusal of the request
        (500, "thinking: the server failed while it thought"),
    ],
)
def test_an_error_that_only_mentions_thinking_does_not_drop_it(
    scripted_api, client, screen, capsys, status, message
):
    scripted_api.play({"turns": [{"error": {"status": status, "message": message}}]})
    options = RequestOptions(screen)
    with pytest.raises(anthropic.APIStatusError, match="thinking"):
        stream_reply(client.with_options(max_retries=0), REQUEST, options, screen)
    assert len(scripted_api.requests) == 1
    assert "thinking" in options.added_to(REQUEST)
    assert "refused" not in capsys.readouterr().err


def test_a_422_that_names_thinking_display_drops_only_the_display(
    scripted_api, client, screen, capsys
):
    refusal = {"status": 422, "message": "thinking.display: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": refusal}, {"text": "Shown plainly."}]})
    assert reply(client, screen).content[0].text == "Shown plainly."
    assert scripted_api.requests[1].body["thinking"] == {"type": "adaptive"}
    assert "refused thinking.display" in capsys.readouterr().err

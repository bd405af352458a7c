"""Replies that are not replies, and usage as the endpoint reported it (issue 37, items 1-3).

A gateway can answer HTTP 200 and then send nothing, stop before `message_stop`, leave out the
stop reason, or stream a tool call's input that is not JSON. The real SDK reads each of these
here over real HTTP from a small server that sends the bytes as they are written below (the
scripted server never sends such a stream: it follows the API's rules). What a real stack sent
is replayed from tests/recordings/real/ in test_real_stack.py.
"""

from __future__ import annotations

import json

import anthropic
import pytest

from plumbing.model import BadReply, RequestOptions, stream_reply
from plumbing.screen import ReportedUsage, Screen, usage_line
from scripted.endpoints import ENDPOINTS
from scripted.models import MODELS
from scripted.rules import model_errors, validate_request
from tests.agents import BASH_TOOL, once
from tests.canned import (
    START,
    STOP,
    canned_endpoint,  # noqa: F401 (the fixture `canned`)
    delta,
    text_block,
    tool_block,
)

GOOD = [START, *text_block("Hello."), delta("end_turn", input_tokens=900), STOP]
# What came back, one stream each; all after HTTP 200.
BROKEN = {
    "empty": ([START, delta("end_turn"), STOP], "sent an empty reply (stop reason end_turn"),
    "no message_stop": ([START, *text_block("Hel")], "a stream that ended before message_stop"),
    "no stop reason": ([START, *text_block("Hi."), delta(None), STOP],
                       "a reply without a stop reason"),
    "nothing": ([], "HTTP 200 and then no message at all"),
    "tool input not JSON": ([START, *tool_block('{"command": ls}'), delta("tool_use"), STOP],
                            "a stream the SDK cannot read (ValueError: Unable to parse tool "
                            "parameter JSON"),
}


REQUEST = {"model": "smollm2", "max_tokens": 100, "tools": [BASH_TOOL],
           "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}


@pytest.mark.parametrize("shape", BROKEN)
def test_a_reply_that_is_no_reply_names_the_endpoint_as_the_likely_cause(shape, canned):
    events, what = BROKEN[shape]
    canned.replies.append(events)
    client = anthropic.Anthropic(base_url=f"http://{canned.host}", api_key="k", max_retries=0)
    screen = Screen()
    with pytest.raises(BadReply) as stopped:
        stream_reply(client, REQUEST, RequestOptions(screen), screen)
    said = str(stopped.value)
    assert said.startswith(f"the endpoint at {canned.host} sent ")
    assert what in said
    assert said.endswith("is the likely cause, not the model; its log says why. Try again, or "
                         "change the server's chat format (llama-cpp-python: --chat_format; "
                         "llama-server: --jinja), MODEL_ID or ANTHROPIC_BASE_URL")
    assert "\n" not in said


def test_a_reply_after_a_bad_one_goes_on_and_the_history_stays_valid(
    canned, make_agent, capsys
):
    """One-shot: the turn ends with exit code 1 and one line. Interactive: the next message
    gets its answer; every request the agent sends is one the API accepts."""
    canned.replies += [BROKEN["tool input not JSON"][0], GOOD]
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}")
    history: list = []
    assert agent.run_turn(history, "list the files") == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"[error: the endpoint at {canned.host} sent a stream the SDK cannot")
    assert line.endswith("; your conversation is kept]")
    assert agent.run_turn(history, "say hello") == 0
    assert "Hello." in capsys.readouterr().out
    second = canned.requests[1]
    assert validate_request(second) == []  # no tool_use without its tool_result
    texts = [block["text"] for block in second["messages"][0]["content"]]
    assert (texts[0], texts[-1]) == ("list the files", "say hello")  # v2 adds its reminder
    assert history[-1] == {"role": "assistant", "content": history[-1]["content"]}


@once("v1")
def test_an_empty_reply_is_not_a_success_for_the_one_shot_run(canned, make_agent, capsys):
    canned.replies.append(BROKEN["empty"][0])
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}")
    assert agent.run_turn([], "hi") == 1
    assert "sent an empty reply" in capsys.readouterr().err


# -- usage as reported --


def usage(**fields) -> ReportedUsage:
    return ReportedUsage.construct(**fields)


def test_a_figure_the_endpoint_did_not_send_is_not_shown_as_zero():
    line = usage_line(usage(output_tokens=12, sent_estimate=40))
    assert line == ("tokens: in not reported, out 12; no cache figures: the endpoint sent none")
    claude = usage(input_tokens=521, output_tokens=80, cache_creation_input_tokens=0,
                   cache_read_input_tokens=0, sent_estimate=530)
    assert usage_line(claude) == "tokens: in 521, out 80, cache write 0, cache read 0"
    only_read = usage(input_tokens=5, output_tokens=1, cache_read_input_tokens=600)
    assert usage_line(only_read) == "tokens: in 5, out 1, cache write not reported, cache read 600"


def test_an_input_far_below_what_was_sent_is_said_and_the_edge_is_not():
    # LiteLLM's OpenAI-format route in front of llama-cpp-python said 15 for a 168-token prompt
    partial = usage(input_tokens=15, output_tokens=9, cache_creation_input_tokens=0,
                    cache_read_input_tokens=0, sent_estimate=700)
    assert usage_line(partial) == (
        "tokens: in 15, out 9, cache write 0, cache read 0; the endpoint counted 15 input tokens "
        "of about 700 sent: a partial count, or part of the request never reached the model")
    edge = usage(input_tokens=200, output_tokens=9, cache_creation_input_tokens=100,
                 cache_read_input_tokens=50, sent_estimate=700)  # 350 x 2 = 700: not below
    assert "; the endpoint counted" not in usage_line(edge)
    below = usage(input_tokens=200, output_tokens=9, cache_creation_input_tokens=100,
                  cache_read_input_tokens=49, sent_estimate=700)
    assert "the endpoint counted 349 input tokens of about 700 sent" in usage_line(below)


def test_an_endpoint_that_refused_caching_has_no_cache_on_the_line():
    refused = usage(input_tokens=800, output_tokens=9, cache_creation_input_tokens=0,
                    cache_read_input_tokens=0, sent_estimate=800, cache_asked=False)
    said = "tokens: in 800, out 9; no cache: the endpoint refused cache_control"
    assert usage_line(refused) == said


@once("v1")
def test_the_usage_line_reads_what_the_endpoint_sent_over_the_wire(canned, make_agent, capsys):
    canned.replies.append(GOOD)  # input only at the end, no cache figures
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}")
    assert agent.run_turn([], "hi") == 0
    sent = len(json.dumps({name: canned.requests[0].get(name)
                           for name in ("system", "tools", "messages")})) // 4
    assert "  [tokens: in 900, out 0; no cache figures: the endpoint sent none]" in (
        capsys.readouterr().out) and sent < 900 * 4


# -- tool_choice: sent with the tools, the same each time --


def test_tool_choice_auto_goes_with_the_tools_and_never_without(canned):
    canned.replies += [GOOD, GOOD]
    client = anthropic.Anthropic(base_url=f"http://{canned.host}", api_key="k", max_retries=0)
    screen = Screen()
    options = RequestOptions(screen)
    stream_reply(client, REQUEST, options, screen)
    no_tools = {key: value for key, value in REQUEST.items() if key != "tools"}
    stream_reply(client, no_tools, options, screen)
    assert canned.requests[0]["tool_choice"] == {"type": "auto"}
    assert "tool_choice" not in canned.requests[1]  # the API refuses it without tools


@once("v1")
def test_tool_choice_leaves_the_cached_prefix_as_it_was(scripted_api, agent):
    scripted_api.play({"turns": [
        {"text": "Looking.", "tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]},
        {"text": "Done."}]})
    assert agent.run_turn([], "say hi " * 700) == 0  # above the model's cache minimum
    first, second = (request.body for request in scripted_api.requests)
    assert first["tool_choice"] == second["tool_choice"] == {"type": "auto"}
    written = scripted_api.requests[0].reply["body"]["usage"]
    read = scripted_api.requests[1].reply["body"]["usage"]["cache_read_input_tokens"]
    assert read == written["cache_creation_input_tokens"] + written["input_tokens"] > 0


@pytest.mark.parametrize("name", MODELS)
def test_every_model_takes_tool_choice_auto_with_thinking_and_some_refuse_a_forced_one(name):
    model = MODELS[name]
    request = {**REQUEST, "model": name, "tool_choice": {"type": "auto"}}
    assert [error for error in model_errors(request, model) if "tool_choice" in error] == []
    forced = {**request, "tool_choice": {"type": "any"}}
    refused = [error for error in model_errors(forced, model) if "tool_choice" in error]
    assert bool(refused) is (model.forced_tool_choice is False)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: endpoint.name)
def test_every_endpoint_row_takes_tool_choice_auto_with_the_tools(scripted_api, endpoint):
    scripted_api.play({"endpoint": endpoint.name, "turns": [{"text": "Hi."}]})
    env = scripted_api.endpoint_env(endpoint.name)
    client = anthropic.Anthropic(base_url=env["ANTHROPIC_BASE_URL"], max_retries=0,
                                 api_key=env["ANTHROPIC_API_KEY"] or None,
                                 auth_token=env["ANTHROPIC_AUTH_TOKEN"] or None)
    model = env.get("MODEL_ID", "claude-sonnet-5-5")
    screen = Screen()
    reply = stream_reply(client, {**REQUEST, "model": model}, RequestOptions(screen), screen)
    assert [block.text for block in reply.content if block.type == "text"] == ["Hi."]
    assert scripted_api.requests[0].body["tool_choice"] == {"type": "auto"}
    assert scripted_api.violations == [] and scripted_api.problems == []
    assert endpoint.tool_choice in (None, "passed", "ignored")


@once("v1")
def test_an_empty_refusal_is_still_a_refusal_not_a_broken_endpoint(canned, make_agent, capsys):
    canned.replies.append([START, delta("refusal"), STOP])
    agent = make_agent(ANTHROPIC_BASE_URL=f"http://{canned.host}")
    assert agent.run_turn([], "hi") == 1
    said = capsys.readouterr().err
    assert "declined" in said and "endpoint" not in said

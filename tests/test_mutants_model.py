"""plumbing/model.py: the refusals the mutation run of 2026-11-28 found no test telling apart,
through stream_reply() and the real SDK against the scripted server (test_model.py's way).

A breakpoint of the system prompt refused by its path (as a gateway in front of another cloud
names it), an error that names two fields, and a refusal of a field the request no longer has.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import pytest

from plumbing.model import BadReply, RequestOptions, read_api_error, stream_reply
from plumbing.screen import Screen
from tests.agents import BASH_TOOL
from tests.canned import START, STOP, delta, text_block, tool_block

MODEL = "claude-sonnet-5-5"
SYSTEM = [{"type": "text", "text": "You are a careful agent."},
          {"type": "text", "text": "Work in this folder.", "cache_control": {"type": "ephemeral"}}]
REQUEST = {"model": MODEL, "max_tokens": 1_000, "tools": [BASH_TOOL], "system": SYSTEM,
           "messages": [{"role": "user", "content": "List the files."}]}


@pytest.fixture
def client(scripted_api) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=scripted_api.start(), api_key="k", max_retries=0)


@pytest.fixture
def screen() -> Screen:
    return Screen()


def test_a_refused_system_breakpoint_drops_caching_and_keeps_the_system_prompts_text(
    scripted_api, client, screen, capsys
):
    """The error names `system.1.cache_control`: caching as a whole goes, the system's own
    breakpoint with it, and the system prompt's blocks are sent as they were without it."""
    refusal = {"status": 400, "message": "system.1.cache_control: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": refusal}, {"text": "One."}, {"text": "Two."}]})
    options = RequestOptions(screen)
    assert stream_reply(client, REQUEST, options, screen).content[0].text == "One."
    assert stream_reply(client, REQUEST, options, screen).content[0].text == "Two."
    first, *later = (request.body for request in scripted_api.requests)
    assert first["system"] == SYSTEM and first["cache_control"] == {"type": "ephemeral"}
    assert len(later) == 2
    for body in later:
        assert body["system"] == [{"type": "text", "text": "You are a careful agent."},
                                  {"type": "text", "text": "Work in this folder."}]
        assert "cache_control" not in body
        assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert capsys.readouterr().err.strip() == (
        "[the endpoint refused cache_control (no prompt caching: every call pays for the whole "
        "prompt); going on without it]")


def test_an_error_naming_a_display_already_gone_and_then_caching_drops_caching(
    scripted_api, client, screen, capsys
):
    """LiteLLM's wording lists every field it will not take; the display, dropped before, is
    passed over and the next field it names is the one dropped."""
    display = {"status": 400, "message": "thinking.display: Extra inputs are not permitted"}
    both = {"status": 400, "message": "does not support parameters: "
                                      "['thinking.display', 'cache_control']"}
    scripted_api.play({"turns": [{"error": display}, {"error": both}, {"text": "Done."}]})
    request = {**REQUEST, "system": "You are a careful agent."}
    options = RequestOptions(screen)
    assert stream_reply(client, request, options, screen).content[0].text == "Done."
    last = scripted_api.requests[-1].body
    assert last["thinking"] == {"type": "adaptive"} and "cache_control" not in last
    assert len(scripted_api.requests) == 3


def test_a_refusal_of_the_display_after_thinking_was_dropped_is_the_endpoints_error(
    scripted_api, client, screen, capsys
):
    """Nothing of ours is left to drop: the error is raised as it came, not retried."""
    thinking = {"status": 400, "message": "thinking: Extra inputs are not permitted"}
    display = {"status": 400, "message": "thinking.display: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": thinking}, {"error": display}]})
    with pytest.raises(anthropic.BadRequestError, match="thinking.display: Extra inputs"):
        stream_reply(client, REQUEST, RequestOptions(screen), screen)
    assert ["thinking" in request.body for request in scripted_api.requests] == [True, False]


# -- what an error says, in each shape --


class Endpoint:
    """An endpoint that answers every POST with `status` and these bytes, as they are."""

    def __init__(self, status: int, data: bytes, content_type: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01},
                         daemon=True).start()
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        self.client = anthropic.Anthropic(base_url=f"http://{self.host}", api_key="k",
                                          max_retries=0)

    def __enter__(self) -> "Endpoint":
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def api_error(status: int, body: dict | str) -> anthropic.APIStatusError:
    """The error the SDK raises for an endpoint that answers `status` with `body`."""
    with Endpoint(status, json.dumps(body).encode(), "application/json") as endpoint:
        with pytest.raises(anthropic.APIStatusError) as raised:
            endpoint.client.messages.create(model=MODEL, max_tokens=10,
                                            messages=REQUEST["messages"])
    return raised.value


def streamed(events: list) -> Endpoint:
    """An endpoint that streams these events after HTTP 200: a dict as JSON, a str as it is."""
    data = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                   if isinstance(event, dict) else event for event in events)
    return Endpoint(200, data.encode(), "text/event-stream")


def bad_reply(events: list) -> tuple[str, str]:
    """What stream_reply() says of this stream, and the endpoint's host:port."""
    screen = Screen()
    with streamed(events) as endpoint:
        with pytest.raises(BadReply) as stopped:
            stream_reply(endpoint.client, REQUEST, RequestOptions(screen), screen)
    return str(stopped.value), endpoint.host


def test_an_error_is_said_as_its_type_and_message_or_whichever_of_them_it_has():
    both = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert str(read_api_error(api_error(529, both))) == "overloaded_error: Overloaded"
    assert str(read_api_error(api_error(500, {"detail": "upstream failed"}))) == "upstream failed"
    untold = {"error": {"type": "server_error", "message": None}}
    assert str(read_api_error(api_error(500, untold))).startswith("server_error: ")
    assert str(read_api_error(api_error(500, {"error": {"type": "server_error"}}))).startswith(
        "server_error: ")


def test_an_error_names_a_field_inside_another_by_its_top_level_field():
    """setup.py asks whether an error is about max_tokens by the fields it names."""
    error = read_api_error(api_error(400, {"error": {
        "message": "'max_tokens' is too large: 64000", "type": "BadRequestError", "param": None}}))
    assert error.names("max_tokens") and not error.names("thinking")
    error = read_api_error(api_error(400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "thinking.type: Input tag 'adaptive'"}}))
    assert error.names("thinking") and not error.names("thinking.type")


# -- a reply that is no reply: the whole line --


def test_no_reply_at_all_is_one_line_naming_the_endpoint_and_the_two_settings():
    said, host = bad_reply([])
    assert said == (
        f"the endpoint at {host} sent HTTP 200 and then no message at all: the endpoint, or the "
        "server behind it, is the likely cause, not the model; its log says why. Try again, or "
        "change the server's chat format (llama-cpp-python: --chat_format; llama-server: "
        "--jinja), MODEL_ID or ANTHROPIC_BASE_URL")


@pytest.mark.parametrize(("events", "after"), [
    ([START, *tool_block('{"command": ls}'), delta("tool_use"), STOP], "its events"),
    (["event: message_start\ndata: {not JSON\n\n"], "its first event"),
], ids=["after some events", "at the first"])
def test_a_stream_the_sdk_cannot_read_says_where_it_broke_and_what_to_change(events, after):
    said, host = bad_reply(events)
    assert said.startswith(f"the endpoint at {host} sent a stream the SDK cannot read (")
    assert said.endswith(
        f", in {after}): the endpoint, or the server behind it, is the likely cause, not the "
        "model; its log says why. Try again, or change the server's chat format "
        "(llama-cpp-python: --chat_format; llama-server: --jinja), MODEL_ID or "
        "ANTHROPIC_BASE_URL")


def test_an_error_body_in_any_other_shape_is_said_as_it_came():
    """A gateway's plain-text body, {"message": ...}, and LiteLLM's "None" for a missing
    value; an error without a message of its own is said in the SDK's words."""
    with Endpoint(502, b"Bad gateway: upstream timed out", "text/plain") as endpoint:
        with pytest.raises(anthropic.APIStatusError) as raised:
            endpoint.client.messages.create(model=MODEL, max_tokens=10,
                                            messages=REQUEST["messages"])
    assert str(read_api_error(raised.value)) == "Bad gateway: upstream timed out"
    assert str(read_api_error(api_error(503, "Service overloaded"))) == "Service overloaded"
    assert str(read_api_error(api_error(400, {"message": "bad max_tokens"}))) == "bad max_tokens"
    litellm = {"error": {"message": "no such model", "type": "None", "param": "null"}}
    error = read_api_error(api_error(400, litellm))
    assert (str(error), error.fields) == ("no such model", ())
    untold = api_error(500, {"error": {"type": "server_error"}})
    assert read_api_error(untold).message == str(untold) != "None"


def test_an_error_with_no_http_answer_has_no_status():
    with Endpoint(200, b"", "text/plain") as endpoint:
        client = endpoint.client
    with pytest.raises(anthropic.APIConnectionError) as raised:  # the server is gone now
        client.messages.create(model=MODEL, max_tokens=10, messages=REQUEST["messages"])
    assert read_api_error(raised.value).status is None


def test_a_display_refusal_after_another_thread_dropped_thinking_is_sent_again_unsaid(screen,
                                                                                      capsys):
    """Two subagents sent the same request; the first refusal dropped thinking, so the second
    (about its display) has nothing left to drop: send again, say nothing more."""
    options = RequestOptions(screen)
    sent = options.added_to(REQUEST)
    thinking = api_error(400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "thinking: Extra inputs are not permitted"}})
    display = api_error(400, {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "thinking.display: Extra inputs are not permitted"}})
    assert options.drop_refused(thinking, sent) and options.drop_refused(display, sent)
    assert "thinking" not in options.added_to(REQUEST)
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "refused thinking (" in line


def test_a_refused_display_is_said_in_one_whole_line(scripted_api, client, screen, capsys):
    refusal = {"status": 400, "message": "thinking.display: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": refusal}, {"text": "Plain."}]})
    stream_reply(client, REQUEST, RequestOptions(screen), screen)
    assert capsys.readouterr().err.strip() == (
        "[the endpoint refused thinking.display, so the model's thinking is not shown; going on "
        "without it]")


def test_a_stream_without_message_stop_is_said_in_one_whole_line():
    said, host = bad_reply([START, *text_block("Hel")])
    assert said == (
        f"the endpoint at {host} sent a stream that ended before message_stop: the endpoint, or "
        "the server behind it, is the likely cause, not the model; its log says why. Try again, "
        "or change the server's chat format (llama-cpp-python: --chat_format; llama-server: "
        "--jinja), MODEL_ID or ANTHROPIC_BASE_URL")


def test_the_usage_knows_about_how_much_was_sent_and_whether_caching_was_asked(
    scripted_api, client, screen
):
    """The estimate grows with the system prompt, the tools and the messages alike (four
    characters a token); after a refused cache_control the usage says none was asked."""
    scripted_api.play({"turns": [{"text": "One."}, {"text": "Two."}, {"text": "Three."},
                                 {"error": {"status": 400, "message":
                                            "cache_control: Extra inputs are not permitted"}},
                                 {"text": "Four."}]})
    options = RequestOptions(screen)
    base = stream_reply(client, REQUEST, options, screen).usage
    longer_system = {**REQUEST, "system": [{"type": "text", "text": "s" * 4_000}]}
    system = stream_reply(client, longer_system, options, screen).usage
    longer_message = {**REQUEST, "messages": [{"role": "user", "content": "m" * 4_000}]}
    message = stream_reply(client, longer_message, options, screen).usage
    uncached = stream_reply(client, REQUEST, options, screen).usage
    assert 900 <= system.sent_estimate - base.sent_estimate <= 1_000
    assert 900 <= message.sent_estimate - base.sent_estimate <= 1_000
    assert (base.cache_asked, uncached.cache_asked) == (True, False)


def test_a_tool_call_that_ended_normally_is_not_asked_again(scripted_api, client, screen):
    scripted_api.play({"turns": [{"tool_calls": [{"name": "bash", "input": {"command": "ls"}}]}]})
    response = stream_reply(client, REQUEST, RequestOptions(screen), screen)
    assert (response.stop_reason, len(scripted_api.requests)) == ("tool_use", 1)


def test_thinking_before_a_tool_call_shows_its_last_line_before_the_call(
    scripted_api, client, screen, capsys
):
    """No text follows to end the thinking: the end of its block shows the line still open."""
    scripted_api.play({"turns": [{"thinking": "First a plan.\nThen the call.",
                                  "tool_calls": [{"name": "bash", "input": {"command": "ls"}}]}]})
    stream_reply(client, REQUEST, RequestOptions(screen), screen)
    assert capsys.readouterr().out == "  ┊ First a plan.\n  ┊ Then the call.\n"


def test_a_reply_without_a_stop_reason_is_said_in_one_whole_line():
    said, host = bad_reply([START, *text_block("Hi."), delta(None), STOP])
    assert said == (
        f"the endpoint at {host} sent a reply without a stop reason: the endpoint, or the server "
        "behind it, is the likely cause, not the model; its log says why. Try again, or change "
        "the server's chat format (llama-cpp-python: --chat_format; llama-server: --jinja), "
        "MODEL_ID or ANTHROPIC_BASE_URL")


def test_a_request_without_tools_after_tool_choice_was_refused_goes_without_either(
    scripted_api, client, screen
):
    refusal = {"status": 400, "message": "tool_choice: Extra inputs are not permitted"}
    scripted_api.play({"turns": [{"error": refusal}, {"text": "One."}, {"text": "Two."}]})
    options = RequestOptions(screen)
    stream_reply(client, REQUEST, options, screen)
    no_tools = {key: value for key, value in REQUEST.items() if key != "tools"}
    assert stream_reply(client, no_tools, options, screen).content[0].text == "Two."
    assert "tool_choice" not in scripted_api.requests[-1].body


def test_each_retry_of_a_broken_stream_says_which_attempt_of_how_many(
    scripted_api, client, screen, capsys
):
    broken = {"text": "Half", "error": {"status": 529, "midstream": True}}
    scripted_api.play({"turns": [broken, {"text": "Whole."}]})  # one retry: 0.5 s of waiting
    response = stream_reply(client, REQUEST, RequestOptions(screen), screen)
    assert response.content[0].text == "Whole."
    alerts = [line for line in capsys.readouterr().err.splitlines() if "retrying" in line]
    assert [line.split("; ")[-1] for line in alerts] == ["attempt 2 of 3]"]


def test_a_model_of_unknown_output_is_asked_again_with_the_smallest_current_maximum(
    scripted_api, screen, capsys
):
    cut = {"tool_calls": [{"name": "bash", "input": {"command": "echo cut"}}],
           "stop_reason": "max_tokens"}
    scripted_api.play({"endpoint": "ollama", "turns": [cut, {"text": "Whole."}]})
    env = scripted_api.endpoint_env("ollama")
    client = anthropic.Anthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key="k", max_retries=0)
    request = {**REQUEST, "model": env["MODEL_ID"]}
    assert stream_reply(client, request, RequestOptions(screen), screen).content[0].text == "Whole."
    assert [sent.body["max_tokens"] for sent in scripted_api.requests] == [1_000, 64_000]

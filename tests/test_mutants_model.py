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
from tests.test_bad_replies import START, STOP, delta, tool_block

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
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        self.client = anthropic.Anthropic(base_url=f"http://{self.host}", api_key="k",
                                          max_retries=0)

    def __enter__(self) -> "Endpoint":
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def api_error(status: int, body: dict) -> anthropic.APIStatusError:
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

"""The scripted server's scenarios, replies and errors (scripted/server.py), as a scenario's
author and the SDK see them: the one-line message for each mistake in a scenario, the headers
that tell the SDK to retry, an OpenAI-shaped error that names its field, the stream's deltas.
tests/test_server.py drives whole conversations; these cases pin what it leaves to one shape."""

from __future__ import annotations

import http.client
import json
import re
from urllib.parse import urlsplit

import anthropic
import pytest

from scripted.server import (
    broken_stream_events,
    check_scenario,
    chunks,
    load_scenario,
    sign,
    sse_events,
)

MODEL = "claude-sonnet-4-6"
USER = {"role": "user", "content": "Hi."}


def raw_post(url: str, body: dict, path: str = "/v1/messages", **headers: str):
    """(status, headers, bytes) of a POST with the key and version an SDK sends."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    sent = {"x-api-key": "k", "anthropic-version": "2023-06-01",
            "content-type": "application/json", **headers}
    connection.request("POST", path, json.dumps(body).encode(), sent)
    reply = connection.getresponse()
    answer = reply.status, {name.lower(): value for name, value in reply.getheaders()}, reply.read()
    connection.close()
    return answer


def request(**fields) -> dict:
    return {"model": MODEL, "max_tokens": 100, "messages": [USER], **fields}


# -- a scenario's mistakes, one line each --


@pytest.mark.parametrize(("scenario", "said"), [
    ([], "a scenario must be a mapping with a `turns` list"),
    ({"turns": {}}, "a scenario must be a mapping with a `turns` list"),
    ({"turns": [], "tracks": {}}, "`tracks` must be a list of mappings, each with a `match` and "
                                  "`turns` (and `in`: first or last)"),
    ({"turns": [], "tracks": ["x"]}, "`tracks` must be"),
    ({"turns": [], "tracks": [{"match": 1, "turns": []}]}, "`tracks` must be"),
    ({"turns": [], "tracks": [{"match": "", "turns": []}]}, "`tracks` must be"),
    ({"turns": [], "tracks": [{"match": "a", "turns": {}}]}, "`tracks` must be"),
    ({"turns": [], "tracks": [{"match": "a", "turns": [], "in": "middle"}]}, "`tracks` must be"),
    ({"turns": [], "rejects": "thinking"}, "`rejects` is a list of fields among "
                                           "['cache_control', 'thinking', 'thinking.display']"),
    ({"turns": [], "rejects": ["tools"]}, "`rejects` is a list of fields among"),
    ({"turns": [], "endpoint": "nowhere"}, "`endpoint` is one of ["),
    ({"turns": [], "context_window": 0}, "`context_window` is a positive number of tokens"),
    ({"turns": [], "context_window": True}, "`context_window` is a positive number of tokens"),
    ({"turns": [], "context_window": "100"}, "`context_window` is a positive number of tokens"),
    ({"turns": ["hi"]}, "turn 1: a turn must be a mapping"),
    ({"turns": [{"text": "a"}, {"latency": 1}]},
     "turn 2: a turn needs `thinking`, `text`, `tool_calls` or `error`"),
    ({"turns": [{"text": "a", "error": {"status": 500}}]},
     "turn 1: an `error` turn cannot also have stop_reason, text, thinking, tool_calls"),
    ({"turns": [{"thinking": "a", "error": {"status": 500, "midstream": True}}]},
     "turn 1: an `error` turn cannot also have stop_reason, thinking, tool_calls"),
    ({"turns": [{"error": {"status": 418}}]},
     "turn 1: `error` needs a `status` in [400, 401, 403, 404, 413, 422, 429, 500, 529] and may "
     "have ['message', 'midstream', 'param', 'retry_after_ms', 'status']"),
    ({"turns": [{"error": {"status": 500, "code": 1}}]}, "turn 1: `error` needs a `status`"),
    ({"turns": [{"error": "boom"}]}, "turn 1: `error` needs a `status`"),
    ({"turns": [{"thinking": ""}]}, "turn 1: `thinking` must be a non-empty string"),
    ({"turns": [{"text": 5}]}, "turn 1: `text` must be a non-empty string"),
    ({"turns": [{"tool_calls": [{"name": "bash", "input": {}, "id": "x"}]}]},
     "turn 1: each tool call needs a `name` and an `input` mapping, and may have "
     "['input', 'invalid', 'name']"),
    ({"turns": [{"tool_calls": [{"name": "bash", "input": "ls"}]}]},
     "turn 1: each tool call needs"),
    ({"turns": [{"tool_calls": [{"input": {}}]}]}, "turn 1: each tool call needs"),
    ({"turns": [{"tool_calls": {"name": "bash", "input": {}}}]}, "turn 1: each tool call needs"),
    ({"turns": [{"text": "a", "stop_reason": "done"}]}, "turn 1: `stop_reason` must be one of "),
    ({"turns": [{"text": "a", "expect": ["tools"]}]},
     "turn 1: `expect` may have ['last_user_contains', 'system_contains', "
     "'tool_result_contains', 'tool_result_is_error', 'tools'], with `tools` a list of names"),
    ({"turns": [{"text": "a", "expect": {"tool": []}}]}, "turn 1: `expect` may have"),
    ({"turns": [{"text": "a", "expect": {"tools": "bash"}}]}, "turn 1: `expect` may have"),
    ({"turns": [{"text": "a", "latency": -1}]}, "turn 1: `latency` must be a number of seconds"),
    ({"turns": [{"text": "a", "latency": "1"}]}, "turn 1: `latency` must be a number of seconds"),
    ({"turns": [{"text": "a", "hold": "later"}]}, "turn 1: `hold` must be true, false or midway"),
    ({"turns": [{"text": "a", "repeat": 0}]}, "turn 1: `repeat` must be a positive integer"),
    ({"turns": [{"text": "a", "repeat": 1.5}]}, "turn 1: `repeat` must be a positive integer"),
    ({"turns": [], "tracks": [{"match": "find", "turns": [{"text": "a"}, {"txet": "b"}]}]},
     "track 'find', turn 2: unknown key(s) ['txet']"),
])
def test_each_mistake_in_a_scenario_is_one_line_that_names_the_step(scenario, said):
    with pytest.raises(ValueError) as refused:
        check_scenario(scenario, "mine.yaml")
    assert str(refused.value).startswith(f"mine.yaml: {said}")


@pytest.mark.parametrize("scenario", [
    {"turns": [{"text": "a", "latency": 0.5, "hold": "midway", "repeat": 2,
                "stop_reason": "max_tokens", "expect": {"tools": ["bash"]}}]},
    {"turns": [{"tool_calls": [{"name": "bash", "input": {}, "invalid": True}]}]},
    {"turns": [{"error": {"status": 429, "message": "m", "retry_after_ms": 5, "param": "x"}}]},
    {"turns": [{"text": "half", "error": {"status": 529, "midstream": True}}]},
    {"turns": [], "tracks": [{"match": "a", "turns": [], "in": "last"}], "endpoint": "ollama",
     "rejects": ["thinking.display"], "context_window": 1, "name": "free text"},
    {"turns": [{"text": "a", "hold": True}, {"text": "b", "hold": False}]},
])
def test_every_documented_turn_and_scenario_key_is_taken(scenario):
    assert check_scenario(scenario) is scenario


def test_a_file_that_is_not_yaml_is_named_and_a_scenario_can_be_played_from_its_path(
    tmp_path, scripted_api
):
    broken = tmp_path / "broken.yaml"
    broken.write_text("turns: [\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*broken\.yaml: not valid YAML: "):
        load_scenario(broken)
    good = tmp_path / "good.yaml"
    good.write_text("turns:\n  - text: From the file.\n    repeat: 2\n", encoding="utf-8")
    scripted_api.play(str(good))
    assert scripted_api.remaining() == 2
    scripted_api.play(good)
    client = anthropic.Anthropic(base_url=scripted_api.start(), api_key="k")
    assert client.messages.create(**request()).content[0].text == "From the file."
    assert scripted_api.remaining() == 1
    scripted_api.play({"turns": []})


# -- errors as the SDK reads them --


@pytest.mark.parametrize(("error", "status", "retry"), [
    ({"status": 429, "retry_after_ms": 5}, 429, "5"),
    ({"status": 500}, 500, "1"),
    ({"status": 529, "message": "busy"}, 529, "1"),
    ({"status": 413}, 413, None),
    ({"status": 422, "message": "bad"}, 422, None),
])
def test_an_error_the_sdk_retries_says_retry_at_once_and_others_say_nothing(
    scripted_api, error, status, retry
):
    scripted_api.play({"turns": [{"error": error}]})
    got, headers, raw = raw_post(scripted_api.start(), request())
    assert got == status
    assert headers.get("retry-after-ms") == retry
    assert headers.get("x-should-retry") == ("true" if retry else None)
    kind = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
            413: "request_too_large", 422: "invalid_request_error"}[status]
    assert json.loads(raw) == {"type": "error", "error": {
        "type": kind, "message": error.get("message", f"scripted {kind}")}}
    assert headers["request-id"].startswith("req_scripted")


def test_an_openai_shaped_error_names_the_field_the_scenario_gives_and_its_code(scripted_api):
    """llama.cpp answers in OpenAI's shape; `param` names the request field the error is about
    (the agent drops that field by it: tests/test_model.py)."""
    scripted_api.play({"endpoint": "llama.cpp", "turns": [
        {"error": {"status": 400, "message": "not supported", "param": "thinking"}},
        {"error": {"status": 500}},
    ]})
    status, _, raw = raw_post(scripted_api.start(), request())
    assert status == 400
    assert json.loads(raw) == {"error": {"message": "not supported",
                                         "type": "invalid_request_error",
                                         "param": "thinking", "code": 400}}
    assert scripted_api.requests[0].reply == {"status": 400, "body": json.loads(raw)}
    status, _, raw = raw_post(scripted_api.start(), request())
    assert json.loads(raw) == {"error": {"message": "scripted api_error", "type": "api_error",
                                         "param": None, "code": 500}}


def test_a_claude_shaped_error_names_no_field_even_when_the_scenario_gives_one(scripted_api):
    scripted_api.play({"turns": [{"error": {"status": 400, "message": "no", "param": "thinking"}}]})
    _, _, raw = raw_post(scripted_api.start(), request())
    assert json.loads(raw) == {"type": "error",
                               "error": {"type": "invalid_request_error", "message": "no"}}


# -- the reply's shape on the wire --


def test_a_path_with_a_query_is_the_messages_endpoint_and_text_goes_as_utf8(scripted_api):
    scripted_api.play({"turns": [{"text": "日本語のテキスト"}]})
    status, headers, raw = raw_post(scripted_api.start(), request(), "/v1/messages?beta=true")
    assert status == 200 and headers["content-type"] == "application/json"
    assert "日本語のテキスト".encode() in raw and int(headers["content-length"]) == len(raw)
    assert b", " not in raw and b'": ' not in raw  # compact JSON, as the API writes it


def streamed_text(raw: bytes) -> list[str]:
    events = [block.split("\n", 1) for block in raw.decode().split("\n\n") if block]
    datas = [json.loads(data.removeprefix("data: ")) for _, data in events]
    return [data["delta"]["text"] for data in datas
            if data["type"] == "content_block_delta" and data["delta"]["type"] == "text_delta"]


@pytest.mark.parametrize(("length", "pieces"), [(16, [16]), (17, [16, 1]), (33, [16, 16, 1])])
def test_a_streamed_text_comes_sixteen_characters_a_delta(scripted_api, length, pieces):
    text = "abcdefghij" * 4
    scripted_api.play({"turns": [{"text": text[:length]}]})
    status, headers, raw = raw_post(scripted_api.start(), request(stream=True))
    assert status == 200 and headers["content-type"] == "text/event-stream"
    deltas = streamed_text(raw)
    assert [len(piece) for piece in deltas] == pieces and "".join(deltas) == text[:length]


def test_a_huge_text_comes_in_at_most_about_four_hundred_deltas():
    assert [len(piece) for piece in chunks("x" * 6399)] == [16] * 399 + [15]  # 400 deltas
    # one more character: the pieces grow by one rather than a 401st delta coming
    assert [len(piece) for piece in chunks("x" * 6400)] == [17] * 376 + [8]
    assert chunks("") == []


# -- a stream that breaks off, and how long an error waits --


def events_of(raw: bytes) -> list[tuple[str, dict]]:
    blocks = [block.split("\n", 1) for block in raw.decode().split("\n\n") if block]
    return [(name.removeprefix("event: "), json.loads(data.removeprefix("data: ")))
            for name, data in blocks]


def test_a_stream_breaks_off_after_half_its_events_or_after_its_start_when_it_has_no_text(
    scripted_api,
):
    broken = {"status": 529, "midstream": True, "message": "Overloaded"}
    scripted_api.play({"turns": [{"text": "x" * 40, "error": broken}, {"error": broken}]})
    _, _, raw = raw_post(scripted_api.start(), request(stream=True))
    # start, block start, three deltas (16, 16, 8), block stop, message delta, stop: 8, half 4
    assert [name for name, _ in events_of(raw)] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_delta",
        "error"]
    assert events_of(raw)[-1][1] == {"type": "error", "error": {"type": "overloaded_error",
                                                                "message": "Overloaded"}}
    _, _, raw = raw_post(scripted_api.start(), request(stream=True))
    assert [name for name, _ in events_of(raw)] == ["message_start", "error"]


def test_a_broken_stream_from_a_row_that_counts_at_the_end_starts_with_no_counts(scripted_api):
    """vLLM streams its counts in message_delta only (its row's usage_at_start)."""
    vllm = "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    scripted_api.play({"endpoint": "vllm", "turns": [
        {"text": "x" * 40, "error": {"status": 529, "midstream": True}}]})
    _, _, raw = raw_post(scripted_api.start(), request(model=vllm, stream=True))
    start = events_of(raw)[0][1]["message"]
    assert start["usage"] == {"input_tokens": 0, "output_tokens": 0}


@pytest.mark.allow_violations  # a request the rules refuse, an endpoint there is not
def test_only_a_scripted_error_waits_its_latency_and_a_refusal_goes_out_at_once(scripted_api):
    scripted_api.play({"turns": [{"error": {"status": 500}, "latency": 0.25}]})
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    scripted, _ = scripted_api.answer("POST", "/v1/messages", json.dumps(request()).encode(),
                                      headers)
    assert (scripted.status, scripted.latency) == (500, 0.25)
    refused, _ = scripted_api.answer("POST", "/v1/messages", b'{"model": 5}', headers)
    assert (refused.status, refused.latency) == (400, 0.0)
    missing, _ = scripted_api.answer("GET", "/v1/models", b"", headers)
    assert (missing.status, missing.latency) == (404, 0.0)


# -- the stream as the API documents it, event by event --
# https://platform.claude.com/docs/en/build-with-claude/streaming: each event's name is its
# data's `type`; message_start holds the message with no content and no stop_reason yet, and its
# usage with output_tokens 1; a content block is a start (a tool_use's with `input: {}`), its
# deltas and a stop, each with the block's index; message_delta holds the stop_reason with
# `stop_sequence: null` and the output count; message_stop ends it. SDK 2.x reads the data only
# (it drops no event by its name), but other clients dispatch on the name.
TOOLS = [{"name": "bash", "description": "Run a command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
THINKING = {"type": "enabled", "budget_tokens": 1024}


def test_a_stream_of_thinking_text_and_a_tool_call_has_every_event_the_api_documents(
    scripted_api,
):
    scripted_api.play({"turns": [{"thinking": "Plan it.", "text": "Listing.", "repeat": 2,
                                  "tool_calls": [{"name": "bash", "input": {"command": "ls"}}]}]})
    fields = {"max_tokens": 2000, "thinking": THINKING, "tools": TOOLS}
    _, _, whole = raw_post(scripted_api.start(), request(**fields))
    message = json.loads(whole)
    _, _, raw = raw_post(scripted_api.start(), request(stream=True, **fields))
    events = events_of(raw)
    assert [(name, data.get("index")) for name, data in events] == [
        ("message_start", None),
        ("content_block_start", 0), ("content_block_delta", 0), ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1), ("content_block_delta", 1), ("content_block_stop", 1),
        ("content_block_start", 2), ("content_block_delta", 2), ("content_block_stop", 2),
        ("message_delta", None), ("message_stop", None)]
    assert all(data["type"] == name for name, data in events)
    start = events[0][1]["message"]
    usage = message["usage"]
    assert start == {**message, "id": start["id"], "content": [], "stop_reason": None,
                     "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
    thinking, text, call = (data for name, data in events if name == "content_block_start")
    assert thinking["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert text["content_block"] == {"type": "text", "text": ""}
    streamed = {**message, "id": start["id"], "content": [
        *message["content"][:2], {**message["content"][2], "id": call["content_block"]["id"]}]}
    assert call["content_block"] == {**streamed["content"][2], "input": {}}
    assert [data["delta"] for name, data in events if name == "content_block_delta"] == [
        {"type": "thinking_delta", "thinking": "Plan it."},
        {"type": "signature_delta", "signature": message["content"][0]["signature"]},
        {"type": "text_delta", "text": "Listing."},
        {"type": "input_json_delta", "partial_json": '{"command":"ls"}'}]
    assert events[-2][1] == {"type": "message_delta", "usage": {"output_tokens": usage[
        "output_tokens"]}, "delta": {"stop_reason": "tool_use", "stop_sequence": None}}
    assert events[-1][1] == {"type": "message_stop"}
    # what the server streams for a Claude row is what the functions give by default
    assert sse_events(streamed) == events
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    assert broken_stream_events(streamed, error) == events[:6] + [("error", error)]


def test_another_tool_choice_reads_the_cached_tools_and_system_but_not_the_messages(
    scripted_api,
):
    """The docs' table of what invalidates the cache: changing tool_choice invalidates the
    messages' cache, not the tools' nor the system's."""
    scripted_api.play({"turns": [{"text": "One.", "repeat": 3}]})
    system = [{"type": "text", "text": "Follow the house style of the project. " * 120,
               "cache_control": {"type": "ephemeral"}}]

    def usage(choice: str) -> dict:
        body = request(system=system, tools=TOOLS, tool_choice={"type": choice},
                       cache_control={"type": "ephemeral"})
        return json.loads(raw_post(scripted_api.start(), body)[2])["usage"]

    first, other, again = usage("auto"), usage("none"), usage("none")
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 1_024
    assert 1_024 < other["cache_read_input_tokens"] < first["cache_creation_input_tokens"]
    assert (other["cache_read_input_tokens"] + other["cache_creation_input_tokens"]
            == first["cache_creation_input_tokens"])
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


# -- a scenario's expectations and calls, checked against the request --


def test_a_scenario_given_as_a_mapping_is_called_the_scenario_in_its_errors(scripted_api):
    with pytest.raises(ValueError, match=r"^scenario: a scenario must be a mapping"):
        scripted_api.play({"turns": {}})


@pytest.mark.allow_violations  # every expectation fails, on purpose
def test_each_failed_expectation_says_what_the_request_lacked(scripted_api):
    scripted_api.play({"turns": [{"text": "Done.", "expect": {
        "tool_result_contains": "b.txt", "tool_result_is_error": False,
        "last_user_contains": "please", "system_contains": "house",
        "tools": ["read_file", "bash"]}}]})
    call = {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "ls"}}
    messages = [USER, {"role": "assistant", "content": [call]}, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]}]
    status, _, raw = raw_post(scripted_api.start(), request(
        messages=messages, system="Be brief.", tools=TOOLS))
    said = ("turn 1: expect failed: no tool_result in the last user message contains 'b.txt'; "
            "no matching tool_result has is_error=False; "
            "the last user message does not contain 'please'; "
            "the system prompt does not contain 'house'; "
            "the declared tools are ['bash'], not ['bash', 'read_file']")
    assert (status, scripted_api.problems) == (400, [said])
    assert json.loads(raw)["error"]["message"] == said


@pytest.mark.allow_violations  # a call to a tool the request did not declare
def test_a_call_to_an_undeclared_tool_is_named_and_a_call_without_input_fits_any_object(
    scripted_api,
):
    scripted_api.play({"turns": [{"tool_calls": [{"name": "read_file", "input": {"path": "a"}},
                                                 {"name": "bash"}]}, {"text": "Done."}]})
    status, _, raw = raw_post(scripted_api.start(), request(tools=TOOLS))
    assert status == 200
    assert [block["input"] for block in json.loads(raw)["content"]] == [{"path": "a"}, {}]
    raw_post(scripted_api.start(), request(tools=TOOLS))  # a turn with no problem keeps it
    assert scripted_api.problems == [
        "turn 1: tool call 'read_file' is not among the declared tools ['bash']"]


# -- the stand-in tokenizer and the prompt cache: what a block says, not how it is written --


def test_a_block_written_with_its_keys_in_another_order_is_read_from_the_cache(scripted_api):
    """The API parses the request: a block that came back from the SDK (`model_dump()` puts
    `text` before `type`) is the same block as one written by hand."""
    scripted_api.play({"turns": [{"text": "One.", "repeat": 2}]})
    system = "Follow the house style of the project. " * 120
    tool = {"input_schema": TOOLS[0]["input_schema"], "description": TOOLS[0]["description"],
            "name": "bash"}
    first = [{"role": "user", "content": [{"type": "text", "text": "First question."}]}]
    again = [{"content": [{"text": "First question.", "type": "text"}], "role": "user"},
             {"role": "assistant", "content": "One."}, {"role": "user", "content": "More."}]

    def usage(messages: list, tools: list) -> dict:
        body = request(messages=messages, system=system, tools=tools,
                       cache_control={"type": "ephemeral"})
        return json.loads(raw_post(scripted_api.start(), body)[2])["usage"]

    written = usage(first, TOOLS)["cache_creation_input_tokens"]
    assert written > 1_024
    assert usage(again, [tool])["cache_read_input_tokens"] == written


def test_a_japanese_character_counts_as_one_character_as_an_english_one(scripted_api):
    scripted_api.play({"turns": [{"text": "One.", "repeat": 2}]})
    counts = [
        json.loads(raw_post(scripted_api.start(), request(messages=[
            {"role": "user", "content": text * 400}]))[2])["usage"]["input_tokens"]
        for text in ("a", "あ")]
    assert counts[0] == counts[1] > 100


# -- what the handler answers --


def test_a_tracks_ids_carry_its_tag_and_the_main_tracks_carry_none(scripted_api):
    """Each track counts its own ids, so parallel subagents get the same ones in any order (the
    server is the session's: the counts go on from the tests before)."""
    call = {"name": "bash", "input": {"command": "ls"}}
    scripted_api.play({"turns": [{"tool_calls": [call]}],
                       "tracks": [{"match": "alpha", "turns": [{"tool_calls": [call, call]}]}]})
    alpha, main = [json.loads(raw_post(scripted_api.start(), request(
        tools=TOOLS, messages=[{"role": "user", "content": task}]))[2])
        for task in ("The alpha task.", "The main task.")]
    assert re.fullmatch(r"msg_01scriptedt2\d{4}", alpha["id"])
    first, second = (block["id"] for block in alpha["content"])
    assert re.fullmatch(r"toolu_01scriptedt2\d{4}", first)
    assert int(second.removeprefix("toolu_01scriptedt2")) == int(first[-4:]) + 1
    assert re.fullmatch(r"msg_01scripted\d{4}", main["id"])
    assert re.fullmatch(r"toolu_01scripted\d{4}", main["content"][0]["id"])


def test_a_reply_has_every_field_of_the_apis_message_and_no_other(scripted_api):
    scripted_api.play({"turns": [{"text": "Hello.", "stop_reason": "max_tokens"}]})
    reply = json.loads(raw_post(scripted_api.start(), request())[2])
    assert re.fullmatch(r"msg_01scripted\d{4}", reply["id"])
    assert reply == {"id": reply["id"], "type": "message", "role": "assistant", "model": MODEL,
                     "content": [{"type": "text", "text": "Hello."}],
                     "stop_reason": "max_tokens", "stop_sequence": None,
                     "usage": reply["usage"]}
    assert set(reply["usage"]) == {"input_tokens", "output_tokens",
                                   "cache_creation_input_tokens", "cache_read_input_tokens"}


def test_thinking_cut_at_max_tokens_has_an_empty_signature_and_one_that_ended_keeps_it(
    scripted_api,
):
    """Cut off before its signature_delta came, the block a stream builds has signature "";
    the reply without streaming is the same block."""
    scripted_api.play({"turns": [{"thinking": "Half a thought", "stop_reason": "max_tokens"},
                                 {"thinking": "A whole thought."}]})
    fields = {"model": MODEL, "max_tokens": 2000, "thinking": THINKING, "messages": [USER]}
    cut = json.loads(raw_post(scripted_api.start(), fields)[2])["content"]
    assert cut == [{"type": "thinking", "thinking": "Half a thought", "signature": ""}]
    events = events_of(raw_post(scripted_api.start(), {**fields, "stream": True})[2])
    assert [data["delta"] for name, data in events if name == "content_block_delta"] == [
        {"type": "thinking_delta", "thinking": "A whole thought."},
        {"type": "signature_delta", "signature": sign(MODEL, "A whole thought.")}]


@pytest.mark.allow_violations  # an error event from a server that sends none
def test_a_midstream_error_from_a_server_that_sends_no_error_events_is_a_problem(scripted_api):
    scripted_api.play({"endpoint": "ollama", "turns": [
        {"text": "half", "error": {"status": 500, "midstream": True}, "latency": 0.25}]})
    body = request(model="qwen3-coder", stream=True)
    reply, _ = scripted_api.answer("POST", "/v1/messages", json.dumps(body).encode(),
                                   {"x-api-key": "k", "anthropic-version": "2023-06-01"})
    assert (reply.status, reply.latency, reply.stream) == (200, 0.25, True)
    assert reply.error_event == {"type": "error", "error": {"type": "api_error",
                                                            "message": ""}}
    assert scripted_api.problems == ["turn 1: ollama sends no error events"]


HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def test_an_error_without_latency_goes_out_at_once_and_a_broken_streams_id_is_its_tracks(
    scripted_api,
):
    broken = {"text": "half", "error": {"status": 529, "midstream": True}}
    scripted_api.play({"turns": [{"error": {"status": 500}}, broken],
                       "tracks": [{"match": "alpha", "turns": [broken]}]})
    replies = [scripted_api.answer("POST", "/v1/messages", json.dumps(request(
        stream=True, messages=[{"role": "user", "content": task}])).encode(), HEADERS)[0]
        for task in ("Main.", "Main.", "The alpha task.")]
    assert [(reply.status, reply.latency) for reply in replies] == [(500, 0), (200, 0), (200, 0)]
    assert re.fullmatch(r"msg_01scripted\d{4}", replies[1].body["id"])
    assert re.fullmatch(r"msg_01scriptedt2\d{4}", replies[2].body["id"])


def test_a_track_in_last_is_matched_by_the_last_user_message_the_others_by_the_first(
    scripted_api,
):
    scripted_api.play({"turns": [{"text": "Main."}], "tracks": [
        {"match": "summary", "in": "last", "turns": [{"text": "Summary."}]},
        {"match": "alpha", "turns": [{"text": "Alpha."}]}]})

    def answer(*said: str) -> str:
        messages = [{"role": ("user", "assistant")[number % 2], "content": text}
                    for number, text in enumerate(said)]
        return json.loads(raw_post(scripted_api.start(), request(messages=messages))[2])[
            "content"][0]["text"]

    assert answer("Something else.") == "Main."  # no track matches, though each has turns
    assert answer("The alpha task.", "On it.", "Write a summary.") == "Summary."
    assert answer("The alpha task.", "On it.", "Go on.") == "Alpha."


def test_a_reply_held_midway_has_sent_the_first_half_of_its_events_and_no_more(scripted_api):
    scripted_api.play({"turns": [{"text": "x" * 40, "hold": "midway"}]})
    where = urlsplit(scripted_api.start())
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    connection.request("POST", "/v1/messages", json.dumps(request(stream=True)).encode(),
                       {**HEADERS, "content-type": "application/json"})
    reply = connection.getresponse()
    # eight events (start, block start, three deltas, block stop, message delta, stop): four
    # come, then the server waits; a fifth read here would wait for release() (10 s timeout)
    first = b"".join(reply.readline() for _ in range(4 * 3))
    scripted_api.release()
    rest = reply.read()
    connection.close()
    assert [name for name, _ in events_of(first)] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_delta"]
    assert [name for name, _ in events_of(rest)] == [
        "content_block_delta", "content_block_stop", "message_delta", "message_stop"]


@pytest.mark.allow_violations  # an expectation that fails, on purpose
def test_a_problem_in_a_track_names_the_track_and_its_turn(scripted_api):
    scripted_api.play({"turns": [], "tracks": [{"match": "alpha", "turns": [
        {"text": "One."}, {"text": "Two.", "expect": {"last_user_contains": "please"}}]}]})
    for _ in range(2):
        raw_post(scripted_api.start(), request(messages=[{"role": "user", "content": "alpha"}]))
    assert scripted_api.problems == ["track 'alpha', turn 2: expect failed: "
                                     "the last user message does not contain 'please'"]

"""The scripted chat-completions backend (scripted/chat_completions.py), read as a gateway reads
it: over HTTP, in this process. tests/test_litellm.py drives it through LiteLLM's proxy, a child
process that is not installed everywhere (and never in a mutation run's copy), so what the
backend answers is pinned here too: the completion, the stream of chunks that rebuilds it, the
errors in OpenAI's shape, and the scenario's `expect`."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from scripted.chat_completions import CREATED, ScriptedChatCompletions

WRITE = {"name": "write_file", "input": {"path": "hello.py", "content": "print('hi')\n"}}
LIST = {"name": "list_files"}  # a call may leave out its `input`
MESSAGES = [{"role": "user", "content": "Write hello.py."}]


@pytest.fixture
def backend() -> Iterator[ScriptedChatCompletions]:
    server = ScriptedChatCompletions()
    server.start()
    yield server
    server.stop()


def post(url: str, path: str, body: dict | bytes | None) -> tuple[int, str, bytes]:
    """(status, content-type, body) of one POST, as any HTTP client sends it."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    if payload is None:  # no content-length at all
        connection.putrequest("POST", path)
        connection.endheaders()
    else:
        connection.request("POST", path, body=payload, headers=headers)
    reply = connection.getresponse()
    answer = reply.status, reply.getheader("content-type"), reply.read()
    connection.close()
    return answer


def complete(backend, **body) -> tuple[int, dict]:
    status, kind, raw = post(backend.url, "/v1/chat/completions",
                             {"model": "gpt-4o-mini", "messages": MESSAGES, **body})
    assert kind == "application/json"
    return status, json.loads(raw)


def test_a_json_reply_says_its_length():
    """A client that keeps the connection open reads exactly content-length bytes."""
    server = ScriptedChatCompletions()
    server.play({"turns": [{"text": "Hi."}]})
    where = urlsplit(server.start())
    try:
        for path in ("/v1/chat/completions", "/v1/other"):
            connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
            connection.request("POST", path, b"{}", {"content-type": "application/json"})
            reply = connection.getresponse()
            raw = reply.read()
            connection.close()
            assert reply.getheader("content-length") == str(len(raw)) and json.loads(raw)
    finally:
        server.stop()


def stream(backend, **body) -> list[dict | str]:
    status, kind, raw = post(backend.url, "/v1/chat/completions",
                             {"model": "gpt-4o-mini", "messages": MESSAGES, "stream": True, **body})
    assert (status, kind) == (200, "text/event-stream")
    events = raw.decode().split("\n\n")
    assert events[-1] == "" and all(event.startswith("data: ") for event in events[:-1])
    return [event[6:] if event == "data: [DONE]" else json.loads(event[6:])
            for event in events[:-1]]


def rebuilt(chunks: list[dict]) -> dict:
    """The message a client accumulates from the chunks' deltas, as OpenAI's SDK does: the text
    appended, each tool call found by its index, its arguments appended."""
    message: dict = {"content": None, "tool_calls": []}
    finish = None
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            if "role" in delta:
                message["role"] = delta["role"]
            if delta.get("content") is not None:
                message["content"] = (message["content"] or "") + delta["content"]
            for call in delta.get("tool_calls", []):
                calls = message["tool_calls"]
                if call["index"] == len(calls):
                    calls.append({"id": call["id"], "type": call["type"],
                                  "function": {"name": call["function"]["name"], "arguments": ""}})
                calls[call["index"]]["function"]["arguments"] += call["function"]["arguments"]
            finish = choice["finish_reason"] or finish
    if not message["tool_calls"]:
        del message["tool_calls"]
    return {"message": message, "finish_reason": finish}


def test_a_text_turn_is_a_chat_completion_with_its_usage(backend):
    backend.play({"turns": [{"text": "Hi."}]})
    status, reply = complete(backend)
    assert status == 200
    message = {"role": "assistant", "content": "Hi."}
    prompt = len(json.dumps(MESSAGES)) // 4
    completion = len(json.dumps(message)) // 4
    assert (prompt, completion) == (12, 9)  # two figures the sum below tells apart
    assert reply == {
        "id": "chatcmpl-scripted0001",
        "object": "chat.completion",
        "created": CREATED,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }
    assert backend.requests == [{"model": "gpt-4o-mini", "messages": MESSAGES}]
    assert backend.problems == [] and backend.remaining() == 0


def test_tool_calls_have_numbered_ids_and_their_input_as_a_json_string(backend):
    backend.play({"turns": [{"tool_calls": [WRITE, LIST]}]})
    status, reply = complete(backend)
    [choice] = reply["choices"]
    assert status == 200 and choice["finish_reason"] == "tool_calls"
    assert choice["message"] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_scripted0001", "type": "function",
             "function": {"name": "write_file", "arguments": json.dumps(WRITE["input"])}},
            {"id": "call_scripted0002", "type": "function",
             "function": {"name": "list_files", "arguments": "{}"}},
        ],
    }
    assert reply["id"] == "chatcmpl-scripted0003"


def test_a_request_without_model_or_messages_gets_an_empty_model_and_no_prompt_tokens(backend):
    backend.play({"turns": [{"thinking": "No words to say."}]})  # no text, no calls
    status, kind, raw = post(backend.url, "/v1/chat/completions", {})
    reply = json.loads(raw)
    assert (status, kind) == (200, "application/json")
    assert reply["model"] == "" and reply["choices"][0]["message"] == {
        "role": "assistant", "content": None}
    completion = len(json.dumps({"role": "assistant", "content": None})) // 4
    assert reply["usage"] == {"prompt_tokens": 0, "completion_tokens": completion,
                              "total_tokens": completion}


def test_the_stream_rebuilds_the_same_completion_and_ends_with_done(backend):
    turn = {"text": "Writing it.", "tool_calls": [WRITE, LIST]}
    backend.play({"turns": [turn]})
    _, whole = complete(backend)
    backend.play({"turns": [turn]})
    events = stream(backend)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert [chunk["object"] for chunk in chunks] == ["chat.completion.chunk"] * len(chunks)
    assert all("usage" not in chunk for chunk in chunks)  # not asked for
    assert {(c["id"], c["created"], c["model"]) for c in chunks} == {
        ("chatcmpl-scripted0006", CREATED, "gpt-4o-mini")}
    # the first chunk says the role; the calls' ids and names come before their arguments
    assert chunks[0]["choices"] == [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
    first_call = chunks[2]["choices"][0]["delta"]["tool_calls"]
    assert first_call == [{"id": "call_scripted0004", "type": "function", "index": 0,
                           "function": {"name": "write_file", "arguments": ""}}]
    assert chunks[3]["choices"][0]["delta"] == {"tool_calls": [
        {"index": 0, "function": {"arguments": json.dumps(WRITE["input"])}}]}
    assert chunks[5]["choices"][0]["delta"]["tool_calls"][0]["index"] == 1
    assert chunks[-1]["choices"] == [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]
    assert len(chunks) == 7
    expected = whole["choices"][0]
    for call, number in zip(expected["message"]["tool_calls"], ("0004", "0005"), strict=True):
        call["id"] = f"call_scripted{number}"
    assert rebuilt(chunks) == {"message": expected["message"],
                               "finish_reason": expected["finish_reason"]}


def test_a_streamed_text_reply_has_one_text_chunk_and_the_usage_last_when_asked(backend):
    backend.play({"turns": [{"text": "Done."}, {"thinking": "Nothing to add."}]})
    events = stream(backend, stream_options={"include_usage": True})
    chunks, done = events[:-1], events[-1]
    assert done == "[DONE]"
    assert [chunk["choices"][0]["delta"] if chunk["choices"] else None for chunk in chunks] == [
        {"role": "assistant", "content": ""}, {"content": "Done."}, {}, None]
    assert chunks[2]["choices"][0]["finish_reason"] == "stop"
    usage = chunks[-1]
    assert usage["choices"] == [] and usage["object"] == "chat.completion.chunk"
    message = {"role": "assistant", "content": "Done."}
    prompt = len(json.dumps(MESSAGES)) // 4
    assert usage["usage"] == {"prompt_tokens": prompt,
                              "completion_tokens": len(json.dumps(message)) // 4,
                              "total_tokens": prompt + len(json.dumps(message)) // 4}
    # an empty reply: the role, then the finish, no text chunk; no usage unless asked for
    events = stream(backend, stream_options={"include_usage": False})
    assert [chunk["choices"][0]["delta"] for chunk in events[:-1]] == [
        {"role": "assistant", "content": ""}, {}]
    assert rebuilt(events[:-1])["message"] == {"role": "assistant", "content": ""}


def test_a_scripted_error_is_sent_whole_in_openais_shape_even_when_streaming(backend):
    backend.play({"turns": [
        {"error": {"status": 429, "message": "Rate limit reached."}},
        {"error": {"status": 500}},
    ]})
    status, kind, raw = post(backend.url, "/v1/chat/completions",
                             {"messages": MESSAGES, "stream": True})
    assert (status, kind) == (429, "application/json")
    assert json.loads(raw) == {"error": {"message": "Rate limit reached.",
                                         "type": "invalid_request_error",
                                         "param": None, "code": None}}
    status, reply = complete(backend)
    assert status == 500 and reply["error"]["message"] == ""
    assert backend.problems == []


def test_a_request_with_no_turn_left_is_a_400_and_a_problem(backend):
    backend.play({"turns": []})
    status, kind, raw = post(backend.url, "/v1/chat/completions", {"stream": True})
    assert (status, kind) == (400, "application/json")
    assert json.loads(raw)["error"]["message"] == "no turn left"
    assert backend.problems == ["scripted scenario has no turn left for this request"]
    assert backend.requests == [{"stream": True}]


def test_another_path_is_not_found_and_a_query_string_is_no_other_path(backend):
    backend.play({"turns": [{"text": "ok"}]})
    status, kind, raw = post(backend.url, "/v1/messages", {"messages": MESSAGES})
    assert (status, kind) == (404, "application/json")
    assert json.loads(raw)["error"] == {"message": "Not found: POST /v1/messages",
                                        "type": "invalid_request_error",
                                        "param": None, "code": None}
    assert backend.requests == [] and backend.remaining() == 1
    status, _, raw = post(backend.url, "/v1/chat/completions?api-version=1", {"messages": []})
    assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "ok"


def test_a_post_without_a_body_is_an_empty_request(backend):
    backend.play({"turns": [{"text": "ok"}]})
    status, _, raw = post(backend.url, "/v1/chat/completions", None)
    assert status == 200 and backend.requests == [{}]
    assert json.loads(raw)["choices"][0]["message"]["content"] == "ok"


@pytest.mark.parametrize(
    "content",
    ["I wrote hello.py", [{"type": "text", "text": "I "}, "stray", {"type": "text"},
                          {"type": "text", "text": "wrote hello.py"}]],
    ids=["a-string", "text-parts"],
)
def test_expect_is_met_by_a_tool_message_whose_text_has_the_words(backend, content):
    backend.play({"turns": [{"expect": {"tool_result_contains": "I wrote"}, "text": "Done."}]})
    messages = [*MESSAGES, {"role": "tool", "tool_call_id": "call_1", "content": content}]
    status, reply = complete(backend, messages=messages)
    assert status == 200 and reply["choices"][0]["message"]["content"] == "Done."
    assert backend.problems == []


def test_expect_is_not_met_by_the_words_in_another_role_or_a_tool_message_without_them(backend):
    turn = {"expect": {"tool_result_contains": "wrote"}, "text": "Done."}
    backend.play({"turns": [turn, turn]})
    messages = [{"role": "user", "content": "I wrote it"},
                {"role": "tool", "tool_call_id": "call_1", "content": None}]
    status, reply = complete(backend, messages=messages)
    assert status == 400
    said = "expect failed: no tool message contains 'wrote'"
    assert reply["error"]["message"] == said and backend.problems == [said]
    status, _ = complete(backend, messages=[{"role": "tool", "content": [{"text": "wrote"}]}])
    assert status == 200 and backend.problems == [said]


def test_expect_is_not_met_by_a_request_without_messages(backend):
    backend.play({"turns": [{"expect": {"tool_result_contains": "wrote"}, "text": "Done."}]})
    status, kind, raw = post(backend.url, "/v1/chat/completions", {"model": "m"})
    assert (status, kind) == (400, "application/json")
    assert json.loads(raw)["error"]["message"] == (
        "expect failed: no tool message contains 'wrote'")


def test_play_starts_afresh_and_an_unknown_turn_key_is_refused(backend):
    backend.play({"turns": [{"text": "one"}, {"text": "two"}]})
    complete(backend)
    assert backend.remaining() == 1 and len(backend.requests) == 1
    backend.play({"turns": [{"text": "three"}]})
    assert backend.remaining() == 1 and backend.requests == [] and backend.problems == []
    with pytest.raises(ValueError, match="unknown key"):
        backend.play({"turns": [{"txet": "typo"}]})

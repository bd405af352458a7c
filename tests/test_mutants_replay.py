"""The replay (scripted/replay.py), as the script that is replayed and the reader of a recording
see it: what a recording file must hold, the message a stream adds up to, what is masked before
two requests are compared, the replies and errors the replay server sends over HTTP, what the
replay prints, and what `--check` says. tests/test_recordings.py replays whole sessions of the
version scripts; these cases are small recordings made here, so each runs in milliseconds."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from scripted import ROOT, replay
from scripted.record import Exchange, write_recording
from scripted.replay import (
    Playback,
    Recording,
    ReplayServer,
    Turnstile,
    check_rules,
    comparable,
    final_message,
    first_message,
    load_recording,
    source_of,
)

MODEL = "claude-sonnet-5-5"
VERSION_HEADER = {"anthropic-version": "2023-06-01"}
JSON = {"content-type": "application/json"}


def ask(text: str, *earlier: dict) -> dict:
    """A request body that our rules accept."""
    return {"model": MODEL, "max_tokens": 10,
            "messages": [{"role": "user", "content": text}, *earlier]}


def message(text: str) -> dict:
    return {"id": "msg_01A", "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 2}}


def exchange(number: int, body, reply=None, status: int = 200, *, at: float = 0.0,
             path: str = "/v1/messages", method: str = "POST", headers: dict | None = None,
             reply_headers: dict | None = None, events: list[dict] | None = None) -> Exchange:
    recorded = Exchange(number, at, method, path, 0, VERSION_HEADER if headers is None else headers,
                        body, status, at + 0.1, JSON if reply_headers is None else reply_headers)
    recorded.reply_body = reply
    recorded.events = events or []
    return recorded


def header(**changes) -> dict:
    return {"kind": "header", "format": 1, "version": "v1", "script": "v1_basic.py",
            "model": MODEL, "date": "2026-11-28", "upstream": "scripted model (v1_demo.yaml)",
            "task": "say hi", "typed": "", "settings": {}, "workdir": "/tmp/recorded-work",
            "files": {}, **changes}


def post(url: str, body, method: str = "POST", path: str = "/v1/messages"):
    """(status, headers, bytes) of one request, as the SDK sends it: JSON, with its length."""
    where = urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    payload = None if body is None else json.dumps(body).encode()
    connection.request(method, path, body=payload, headers=JSON if payload else {})
    reply = connection.getresponse()
    answer = reply.status, {name.lower(): value for name, value in reply.getheaders()}, reply.read()
    connection.close()
    return answer


@pytest.fixture
def serve(tmp_path):
    """A replay server for the exchanges given, in tmp_path as the work directory."""
    servers = []

    def start(*exchanges: Exchange, workdir: Path = tmp_path) -> ReplayServer:
        server = ReplayServer(Recording(header(), list(exchanges)), workdir, max_pause=0)
        server.url = server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


# -- reading a recording --


@pytest.mark.parametrize("first", ["", '{"kind": "request"}\n', '{"kind": "header", "format": 2}\n',
                                   '{"kind": "header"}\n'],
                         ids=["empty", "no-header", "another-format", "no-format"])
def test_a_file_that_is_no_recording_of_this_format_is_refused_by_name(tmp_path, first):
    path = tmp_path / "notes.jsonl"
    path.write_text(first, encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        load_recording(path)
    assert str(refused.value) == f"{path}: not a recording of python -m scripted.record (format 1)"


def test_a_recording_is_read_back_whole_in_the_order_of_its_requests(tmp_path):
    second = exchange(2, ask("b"), reply_headers={"content-type": "text/event-stream"}, at=2.0,
                      events=[{"at": 2.5, "event": "ping", "data": {"type": "ping"}},
                              {"at": 2.75, "event": "message_stop", "data": "raw text"}])
    first = exchange(1, ask("a"), message("A"), 529, at=1.0, reply_headers={"x": "1"})
    path = tmp_path / "session.jsonl"
    write_recording(path, header(), [second, first], set())
    lines = path.read_text(encoding="utf-8").splitlines()
    # the second exchange's lines first, with blank lines between: the reader sorts and skips
    reordered = [lines[0], "", *lines[4:], "  ", *lines[1:4]]
    path.write_text("\n".join(reordered) + "\n", encoding="utf-8")
    recording = load_recording(path)
    assert recording.header == header()
    one, two = recording.exchanges
    assert (one.number, one.at, one.method, one.path, one.headers, one.body) == (
        1, 1.0, "POST", "/v1/messages", VERSION_HEADER, ask("a"))
    assert (one.status, one.reply_at, one.reply_headers, one.reply_body, one.events) == (
        529, 1.1, {"x": "1"}, message("A"), [])
    assert (two.status, two.reply_at, two.reply_body) == (200, 2.1, None)
    assert two.events == [{"at": 2.5, "event": "ping", "data": {"type": "ping"}},
                          {"at": 2.75, "event": "message_stop", "data": "raw text"}]


def stream_of(*events: tuple[str, dict]) -> Exchange:
    return exchange(1, ask("go"), events=[{"at": 0.0, "event": name, "data": data}
                                          for name, data in events])


def delta(index: int, **fields) -> tuple[str, dict]:
    return "content_block_delta", {"index": index, "delta": fields}


def test_a_streamed_reply_adds_up_to_the_message_the_sdk_would_build():
    start = {"id": "msg_01", "role": "assistant", "content": [], "usage": {"input_tokens": 5}}
    recorded = stream_of(
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": {"type": "thinking"}}),
        delta(0, type="thinking_delta", thinking="Let me "),
        delta(0, type="thinking_delta", thinking="see."),
        delta(0, type="signature_delta", signature="first"),
        delta(0, type="signature_delta", signature="sig-2"),
        ("content_block_stop", {"index": 0}),
        ("content_block_start", {"index": 1, "content_block": {"type": "text"}}),
        delta(1, type="text_delta", text="Two "),
        delta(1, type="citations_delta", citation={"cited_text": "a"}),
        delta(1, type="text_delta", text="parts."),
        delta(1, type="citations_delta", citation={"cited_text": "b"}),
        ("content_block_stop", {"index": 1}),
        ("content_block_start", {"index": 2, "content_block": {"type": "tool_use", "id": "t",
                                                               "input": {}}}),
        delta(2, type="input_json_delta", partial_json='{"path": '),
        delta(2, type="input_json_delta", partial_json='"a.py"}'),
        ("content_block_stop", {"index": 2}),
        ("content_block_start", {"index": 3, "content_block": {"type": "tool_use", "id": "u",
                                                               "input": {}}}),
        delta(3, type="input_json_delta", partial_json=""),
        ("content_block_stop", {"index": 3}),
        ("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        ("message_delta", {"delta": {"stop_sequence": None}, "usage": None}),
        ("message_stop", {}),
    )
    assert final_message(recorded) == {
        "id": "msg_01", "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me see.", "signature": "sig-2"},
            {"type": "text", "text": "Two parts.",
             "citations": [{"cited_text": "a"}, {"cited_text": "b"}]},
            {"type": "tool_use", "id": "t", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "u", "input": {}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 9},
    }
    assert start == {"id": "msg_01", "role": "assistant", "content": [],
                     "usage": {"input_tokens": 5}}  # the recording itself is left as it was


def test_a_stream_that_fails_after_200_carries_its_error_and_a_plain_reply_is_its_body():
    busy = {"type": "overloaded_error", "message": "busy"}
    failed = stream_of(("message_start", {"message": {"content": [], "usage": {}}}),
                       ("error", {"error": busy}))
    assert final_message(failed)["error"] == busy
    # an error before the message began: what the request inspector shows of it
    assert final_message(stream_of(("error", {"error": busy}))) == {
        "content": [], "usage": {}, "error": busy}
    plain = exchange(1, ask("go"), message("Hi."))
    assert final_message(plain) == message("Hi.")


def test_adding_up_a_stream_leaves_the_recorded_events_as_they_were():
    """The request inspector adds up each stream of a recording; the recording is read again
    after it, so a block's citations list must not grow with every reading."""
    opening = {"type": "text", "text": "", "citations": []}
    recorded = stream_of(
        ("message_start", {"message": {"content": [], "usage": {}}}),
        ("content_block_start", {"index": 0, "content_block": opening}),
        delta(0, type="citations_delta", citation={"cited_text": "a"}),
        ("message_delta", {"usage": {"output_tokens": 3}}),  # a delta with counts only
    )
    for _ in range(2):
        assert final_message(recorded)["content"] == [
            {"type": "text", "text": "", "citations": [{"cited_text": "a"}]}]
    assert opening == {"type": "text", "text": "", "citations": []}
    assert final_message(recorded)["usage"] == {"output_tokens": 3}


@pytest.mark.parametrize(("upstream", "said"), [
    ("scripted model (v1_demo.yaml)",
     "recorded from the scripted model (v1_demo.yaml) on 2026-11-28"),
    ("https://api.anthropic.com", f"recorded from {MODEL} on 2026-11-28"),
    ("http://gateway.local:4000", f"recorded from {MODEL} at http://gateway.local:4000 on "
                                  "2026-11-28"),
])
def test_where_a_recording_came_from_is_said_in_a_few_words(upstream, said):
    assert source_of(header(upstream=upstream)) == said


# -- what is masked before comparing --


def test_the_work_folder_is_masked_longest_spelling_first():
    """The live folder has two spellings, as written and resolved (/tmp and /private/tmp on
    macOS): the longer holds the shorter, and must be masked whole."""
    recorded = {"text": "wrote /srv/recorded/a.py"}
    live = {"text": "wrote /private/tmp/w/a.py"}
    assert comparable(live, ["/tmp/w", "/private/tmp/w"]) == comparable(recorded,
                                                                        ["/srv/recorded"])
    # a diff shows it so
    assert json.loads(comparable(live, ["/tmp/w", "/private/tmp/w"])) == {
        "text": "wrote <workdir>/a.py"}
    assert comparable(live, ["/tmp/w"]) != comparable(recorded, ["/srv/recorded"])


@pytest.mark.parametrize(("recorded", "live", "shown"), [
    ("built 2026-11-24T10:31:02.123+09:00", "built 2027-01-02 08:00", "built <time>"),
    ("took until 10:31:02.5 today", "took until 9:00:59 today", "took until <time> today"),
    ("dated 2026-11-24", "dated 1999-12-31", "dated <time>"),
    ("commands run with bash on Linux.", "commands run with PowerShell on Windows.",
     "commands run with <shell> on <OS>."),
    ("commands run with sh on macOS.", "commands run with bash on Linux.",
     "commands run with <shell> on <OS>."),
])
def test_clock_times_dates_and_the_shell_the_model_is_told_of_are_masked(recorded, live, shown):
    """Masked alike, and shown in a diff by what they stand for."""
    assert comparable({"t": live}, []) == comparable({"t": recorded}, [])
    assert json.loads(comparable({"t": live}, [])) == {"t": shown}


def test_a_time_without_seconds_and_a_number_are_left_as_they_are():
    assert comparable({"t": "lines 12:30"}, []) != comparable({"t": "lines 12:31"}, [])
    assert comparable({"max_tokens": 10}, []) != comparable({"max_tokens": 11}, [])
    assert json.loads(comparable({"n": 10, "ok": True, "none": None}, [])) == {
        "n": 10, "ok": True, "none": None}


def test_ids_are_numbered_where_they_first_appear_and_a_text_of_lines_is_a_list_of_them():
    body = {"a": "toolu_01X", "b": ["msg_9", "toolu_01X", "req_1", "srvtoolu_5"],
            "text": "line one\nline two", "not_an_id": "toolu_01X and more"}
    assert json.loads(comparable(body, [])) == {
        "a": "<id 1>", "b": ["<id 2>", "<id 1>", "<id 3>", "<id 4>"],
        "text": ["line one", "line two"], "not_an_id": "toolu_01X and more"}


def test_a_request_without_messages_belongs_to_no_conversation():
    assert first_message("a text body", []) == ""
    assert first_message({"model": MODEL}, []) == ""
    assert first_message({"messages": "hi"}, []) == ""
    assert first_message(ask("hi", {"role": "assistant", "content": "x"}), []) == comparable(
        [{"role": "user", "content": "hi"}], [])


# -- which recorded exchange a request is --


def test_a_request_of_a_known_conversation_to_another_path_differs_from_that_conversation():
    main = exchange(1, ask("task"))
    other = exchange(2, ask("subagent prompt"))
    playback = Playback(Recording(header(), [main, other]), Path("/live"))
    found, difference = playback.claim("POST", "/v1/messages/count_tokens", ask("subagent prompt"))
    assert found is None
    # the same body to another path: the request the conversation has next is named, and the
    # diff's first line is what differs
    assert difference.splitlines()[:6] == [
        "[replay stopped: request 2 of the recording differs from what the script sent]",
        "--- recorded request 2", "+++ this script's request", "@@ -1,4 +1,4 @@",
        "-POST /v1/messages", "+POST /v1/messages/count_tokens"]
    found, difference = playback.claim("GET", "/v1/messages", ask("subagent prompt"))
    assert found is None and "request 2 of the recording differs" in difference
    assert ["-POST /v1/messages", "+GET /v1/messages"] == difference.splitlines()[4:6]
    assert [waiting.number for waiting in playback.waiting] == [1, 2]
    found, difference = playback.claim("POST", "/v1/messages", ask("subagent prompt"))
    assert (found, difference) == (other, "")
    assert [waiting.number for waiting in playback.waiting] == [1]


def test_a_request_of_an_unknown_conversation_is_shown_against_the_next_recorded_one():
    playback = Playback(Recording(header(), [exchange(1, ask("task")), exchange(2, ask("b"))]),
                        Path("/live"))
    found, difference = playback.claim("POST", "/v1/messages", ask("another task"))
    assert found is None
    lines = difference.splitlines()
    assert lines[:4] == ["[replay stopped: request 1 of the recording differs from what the "
                         "script sent]", "--- recorded request 1", "+++ this script's request",
                         "@@ -3,7 +3,7 @@"]
    assert '-      "content": "task",' in lines and '+      "content": "another task",' in lines
    # three lines of context on each side of the change, no more
    changed = lines.index('-      "content": "task",')
    assert lines[changed - 4].startswith("@@ -3,7 +3,7 @@") and lines[changed + 4] == "   ],"
    assert len(lines) == changed + 5


def test_a_request_after_the_last_recorded_one_is_shown_whole_up_to_sixty_lines():
    playback = Playback(Recording(header(), []), Path("/live"))
    _, short = playback.claim("POST", "/v1/messages", {"model": MODEL})
    assert short == ("[replay stopped: the recording has no more requests, and the script sent "
                     "another one]\nPOST /v1/messages\n{\n  \"model\": \"claude-sonnet-5-5\"\n}")
    sixty = {f"k{number:02d}": number for number in range(58)}  # 60 lines with the braces
    _, whole = playback.claim("POST", "/v1/messages/count_tokens", sixty)
    assert len(whole.splitlines()) == 62 and "more lines" not in whole
    assert whole.splitlines()[1] == "POST /v1/messages/count_tokens"
    long = {f"k{number:02d}": number for number in range(60)}  # 62 lines
    _, cut = playback.claim("POST", "/v1/messages", long)
    shown = cut.splitlines()
    assert len(shown) == 63 and shown[-2] == '  "k58": 58,' and shown[-1] == "... (2 more lines)"


# -- the recorded order --


def test_an_exchange_never_answered_has_no_step_and_the_steps_follow_the_recorded_clock():
    slow = exchange(1, ask("a"), at=0.0, events=[{"at": 0.9, "event": "message_stop", "data": {}}])
    slow.reply_at = 0.5
    stopped = exchange(2, ask("b"), status=0, at=0.2)
    fast = exchange(3, ask("c"), at=0.1, events=[{"at": 0.3, "event": "message_stop", "data": {}}])
    fast.reply_at = 0.2
    turnstile = Turnstile(Recording(header(), [slow, stopped, fast]), max_pause=0)
    assert turnstile.index == {(3, 0): 0, (3, 1): 1, (1, 0): 2, (1, 1): 3}
    assert turnstile.times == [0.2, 0.3, 0.5, 0.9]


def test_the_pauses_between_steps_are_replayed_cut_to_max_pause(monkeypatch):
    """Each step waits as long after the last step that went out as it did when recorded, at
    most max_pause seconds. The pauses are taken from the one call that makes them."""
    pauses: list[float] = []
    monkeypatch.setattr(replay.time, "sleep", pauses.append)
    first = exchange(1, ask("a"), events=[{"at": 0.15, "event": "e", "data": {}},
                                          {"at": 0.9, "event": "e", "data": {}},
                                          {"at": 0.95, "event": "e", "data": {}}])
    first.reply_at = 0.1
    turnstile = Turnstile(Recording(header(), [first]), max_pause=0.5)
    for step in range(4):
        turnstile.wait(step)
        turnstile.went(step)
    assert pauses == pytest.approx([0.1, 0.05, 0.5, 0.05])
    assert turnstile.low == 4 and turnstile.last == 0.95


def test_a_later_step_is_let_out_at_once_when_the_order_is_given_up():
    """When the replay stops, the steps still due never come: open() lets the waiting ones go."""
    early = exchange(1, ask("a"), at=0.0)
    late = exchange(2, ask("b"), at=1.0)
    turnstile = Turnstile(Recording(header(), [early, late]), max_pause=0)
    waiting, done = threading.Event(), threading.Event()

    def wait_for_the_late_one() -> None:
        waiting.set()
        turnstile.wait(1)
        done.set()

    thread = threading.Thread(target=wait_for_the_late_one, daemon=True)
    thread.start()
    assert waiting.wait(5)
    assert not done.wait(0.05)  # held back: step 0 has not gone
    turnstile.open()
    assert done.wait(5)  # well before the stall of 10 s would let it through
    assert turnstile.gone == [True, True] and turnstile.low == 2


def test_a_step_held_back_past_the_stall_lets_only_those_before_it_through(monkeypatch):
    """A recorded request the script never sends holds the later steps back until nothing has
    gone out for STALL seconds; then those before the waiting step count as gone, not it."""
    monkeypatch.setattr(replay, "STALL", 0.01)
    steps = [exchange(number, ask(text), at=number) for number, text in enumerate("abc", 1)]
    turnstile = Turnstile(Recording(header(), steps), max_pause=0)
    done = threading.Event()

    def wait_for_the_last_one() -> None:
        turnstile.wait(2)
        done.set()

    threading.Thread(target=wait_for_the_last_one, daemon=True).start()
    assert done.wait(5)
    assert turnstile.gone == [True, True, False] and turnstile.low == 2


# -- the replay server, over HTTP --


def test_a_plain_reply_goes_out_as_recorded_with_its_headers_and_its_length(serve):
    recorded = message("こんにちは")
    reply_headers = {"content-type": "application/json", "request-id": "req_1"}
    server = serve(exchange(1, ask("hi"), recorded, 200, reply_headers=reply_headers))
    status, headers, raw = post(server.url, ask("hi"))
    assert status == 200 and json.loads(raw) == recorded
    assert "こんにちは".encode() in raw  # as UTF-8, not \u escapes
    assert headers["content-type"] == "application/json" and headers["request-id"] == "req_1"
    assert headers["content-length"] == str(len(raw))
    assert "retry-after-ms" not in headers
    assert server.playback.waiting == [] and server.difference == ""


@pytest.mark.parametrize("recorded", [{"retry-after": "20"}, {"retry-after-ms": "20000"}])
def test_a_recorded_wait_before_a_retry_is_replayed_as_a_short_one(serve, recorded):
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    server = serve(exchange(1, ask("hi"), overloaded, 529,
                            reply_headers={"content-type": "application/json", **recorded}))
    status, headers, raw = post(server.url, ask("hi"))
    assert status == 529 and json.loads(raw) == overloaded
    assert headers["retry-after-ms"] == "200" and "retry-after" not in headers


def test_a_recorded_wait_in_milliseconds_goes_out_once_as_the_short_one(serve):
    """Two retry-after-ms lines would reach the SDK as "20000, 200", which it cannot read."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    server = serve(exchange(1, ask("hi"), overloaded, 529, reply_headers={
        "content-type": "application/json", "retry-after-ms": "20000"}))
    where = urlsplit(server.url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    connection.request("POST", "/v1/messages", body=json.dumps(ask("hi")).encode(), headers=JSON)
    reply = connection.getresponse()
    reply.read()
    connection.close()
    assert reply.status == 529 and reply.headers.get_all("retry-after-ms") == ["200"]


def test_a_stream_goes_out_event_by_event_as_recorded(serve):
    events = [{"at": 0.2, "event": "message_start", "data": {"type": "message_start",
                                                               "note": "日本"}},
              {"at": 0.3, "event": "ping", "data": "not json"}]
    server = serve(exchange(1, ask("hi"), events=events,
                            reply_headers={"content-type": "text/event-stream"}))
    status, headers, raw = post(server.url, ask("hi"))
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert "content-length" not in headers
    assert raw.decode() == (
        'event: message_start\ndata: {"type": "message_start", "note": "日本"}\n\n'
        "event: ping\ndata: not json\n\n"
    )
    assert server.turnstile.low == 3  # the reply's start and both events went out


def test_a_request_that_differs_and_every_one_after_it_get_an_error_the_sdk_reads(serve):
    server = serve(exchange(1, ask("hi"), message("A")), exchange(2, ask("next"), message("B")))
    status, headers, raw = post(server.url, ask("something else"))
    assert (status, headers["content-type"]) == (400, "application/json")
    assert headers["content-length"] == str(len(raw))
    assert json.loads(raw) == {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "replay: this request differs from the recording (the diff follows when the "
                   "script ends)"}}
    first_difference = server.difference
    assert first_difference.startswith("[replay stopped: request 1 of the recording differs")
    status, _, raw = post(server.url, ask("next"))  # recorded, but after the difference
    assert status == 400 and "differs from the recording" in raw.decode()
    post(server.url, ask("a third"))
    assert server.difference == first_difference  # the first difference is the one shown
    assert not server.ended_early


def test_a_request_that_is_not_utf8_is_answered_as_one_that_differs(serve):
    """Not the SDK's, but a client's bytes are read with U+FFFD for what is not UTF-8, and the
    client gets the error and the diff, not a dropped connection."""
    server = serve(exchange(1, ask("hi"), message("A")))
    where = urlsplit(server.url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    connection.request("POST", "/v1/messages", body=b'{"model": "\xff"}', headers=JSON)
    reply = connection.getresponse()
    raw = reply.read()
    connection.close()
    assert reply.status == 400 and "differs from the recording" in raw.decode()
    assert '+  "model": "\ufffd"' in server.difference.splitlines()


def test_a_request_the_session_was_stopped_during_ends_the_recording(serve):
    server = serve(exchange(1, ask("hi"), status=0), exchange(2, ask("other"), message("B")))
    status, _, raw = post(server.url, ask("hi"))
    assert status == 400
    assert json.loads(raw)["error"]["message"] == (
        "replay: the recording ends here: the session was stopped during this request")
    assert server.ended_early and server.difference == ""
    assert server.turnstile.low == len(server.turnstile.gone)  # nothing holds the others back


def test_a_request_that_differs_after_the_recordings_end_is_said_to_differ(serve):
    server = serve(exchange(1, ask("hi"), status=0), exchange(2, ask("other"), message("B")))
    post(server.url, ask("hi"))
    status, _, raw = post(server.url, ask("something else"))
    assert status == 400 and json.loads(raw)["error"]["message"] == (
        "replay: this request differs from the recording (the diff follows when the script ends)")
    assert server.ended_early and server.difference.startswith("[replay stopped: request 2 ")


def test_other_methods_and_a_request_without_a_body_are_matched_too(serve):
    models = {"data": [{"id": MODEL}]}
    server = serve(exchange(1, "", models, method="GET", path="/v1/models"))
    status, _, raw = post(server.url, None, method="GET", path="/v1/models")
    assert status == 200 and json.loads(raw) == models


# -- a whole replay --


class Runner:
    """Stands where the script runs: keeps what the replay gives it, and sends the requests it
    is given to the replay server, as the script's SDK would."""

    def __init__(self, *bodies, code: int = 0) -> None:
        self.bodies, self.code, self.seen, self.statuses = bodies, code, None, []

    def __call__(self, script: Path, args: list[str], env: dict, typed: str | None) -> int:
        workdir = Path(args[1])
        self.seen = {"script": script, "args": args, "env": env, "typed": typed,
                     "files": sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*"))}
        for body in self.bodies:
            self.statuses.append(post(env["ANTHROPIC_BASE_URL"], body)[0])
        return self.code


def recorded_session(tmp_path: Path, *exchanges: Exchange, **changes) -> Path:
    path = tmp_path / "session.jsonl"
    write_recording(path, header(**changes), list(exchanges), set())
    return path


def test_a_replay_runs_the_recorded_script_with_its_task_settings_and_files(tmp_path, capsys):
    path = recorded_session(
        tmp_path, exchange(1, ask("hi"), message("Hi.")),
        settings={"MODEL_ID": "claude-opus-5", "MAX_TOKENS": "99"},
        files={"notes.txt": "a\r\n", "src/a.py": "x = 1\n"},
        args=["--mcp-config", "{root}/mcp.json"], typed="not used\n",
    )
    work = tmp_path / "work"
    work.mkdir()
    runner = Runner(ask("hi"), code=7)
    assert replay.replay_session(path, None, work, max_pause=0, run=runner) == 7
    seen = runner.seen
    assert seen["script"] == ROOT / "v1_basic.py"
    assert seen["args"] == ["--workdir", str(work), "--mcp-config", f"{ROOT}/mcp.json", "say hi"]
    assert seen["typed"] is None and runner.statuses == [200]
    assert seen["files"] == ["notes.txt", "src", "src/a.py"]
    assert (work / "notes.txt").read_bytes() == b"a\r\n"
    env = seen["env"]
    assert env["MODEL_ID"] == "claude-opus-5" and env["MAX_TOKENS"] == "99"
    assert env["ANTHROPIC_API_KEY"] == "offline-replay"
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    assert capsys.readouterr().out == (
        "[replay of session.jsonl, recorded from the scripted model (v1_demo.yaml) on 2026-11-28: "
        f"offline, no key; v1_basic.py works in {work}]\n"
    )
    with pytest.raises(OSError):  # the replay server is stopped when the script ends
        post(env["ANTHROPIC_BASE_URL"], ask("hi"))


def test_a_replay_of_typed_messages_gives_them_to_the_given_script(tmp_path, capsys):
    path = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi.")), task=None,
                            typed="hi\nbye\n", files=None)
    mine = tmp_path / "mine.py"
    runner = Runner(ask("hi"))
    assert replay.replay_session(path, mine, tmp_path, max_pause=0, run=runner) == 0
    assert runner.seen["script"] == mine and runner.seen["typed"] == "hi\nbye\n"
    assert runner.seen["args"] == ["--workdir", str(tmp_path)]
    out = capsys.readouterr().out
    assert "mine.py works in" in out
    assert out.splitlines()[1] == ("[replay: the recording kept no copy of its work directory; "
                                   "see --workdir]")


@pytest.mark.parametrize("files", [{"a.txt": "1"}, None], ids=["files-kept", "no-files"])
def test_the_replays_lines_reach_a_pipe_as_printed_before_the_scripts_own(
    tmp_path, piped_stdout, files
):
    """Piped (`... | tee log`), print() keeps lines back until its buffer fills; the script,
    another process, writes to the same pipe at once. The replay's lines before the script runs
    must go out as they are printed, or they would come after the script's output."""
    path = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi.")), files=files)

    def script(path: Path, args: list[str], env: dict, typed: str | None) -> int:
        Runner(ask("hi"))(path, args, env, typed)
        piped_stdout.child_writes("the script's own line\n")
        return 0

    work = tmp_path / "work"
    with piped_stdout:
        assert replay.replay_session(path, None, work, max_pause=0, run=script) == 0
    assert piped_stdout.lines() == [
        "[replay of session.jsonl, recorded from the scripted model (v1_demo.yaml) on 2026-11-28: "
        f"offline, no key; v1_basic.py works in {work}]",
        *([] if files else [
            "[replay: the recording kept no copy of its work directory; see --workdir]"]),
        "the script's own line",
    ]


def test_a_replay_that_differs_prints_the_diff_and_fails(tmp_path, capsys):
    path = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi.")))
    runner = Runner(ask("hello"))
    assert replay.replay_session(path, None, tmp_path, max_pause=0, run=runner) == 1
    out = capsys.readouterr().out
    assert runner.statuses == [400]
    assert "[replay stopped: request 1 of the recording differs from what the script sent]" in out
    assert '+      "content": "hello",' in out
    assert "[replay stopped: the script ended" not in out


def test_a_script_that_asks_less_than_the_recording_fails_and_says_how_far_it_got(tmp_path,
                                                                                  capsys):
    path = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi.")),
                            exchange(2, ask("more"), message("More.")))
    assert replay.replay_session(path, None, tmp_path, max_pause=0, run=Runner(ask("hi"))) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "[replay stopped: the script ended after 1 of the 2 recorded requests]")


def test_a_session_stopped_mid_request_replays_to_that_request_and_passes(tmp_path, capsys):
    path = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi.")),
                            exchange(2, ask("more"), status=0), exchange(3, ask("x")))
    runner = Runner(ask("hi"), ask("more"))
    assert replay.replay_session(path, None, tmp_path, max_pause=0, run=runner) == 0
    assert runner.statuses == [200, 400]
    assert "replay stopped" not in capsys.readouterr().out


def test_a_replay_says_on_stderr_where_our_rules_and_the_recording_disagree(tmp_path, capsys):
    path = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi."), headers={}))
    assert replay.replay_session(path, None, tmp_path, max_pause=0, run=Runner(ask("hi"))) == 0
    assert capsys.readouterr().err == (
        "[replay: our rules reject a request the real API accepted: request 1: "
        "anthropic-version: header is required]\n")


def test_a_replay_works_in_the_folder_given_made_if_need_be_or_in_one_it_removes(
    tmp_path, monkeypatch
):
    path = recorded_session(tmp_path, files={"a.txt": "kept"})
    folders = []

    def session(path, script, workdir, max_pause):
        folders.append((path, script, workdir, workdir.is_dir(), max_pause))
        return 5

    monkeypatch.setattr(replay, "replay_session", session)
    new = tmp_path / "new" / "work"
    mine = tmp_path / "mine.py"
    assert replay.replay_in_folder(path, None, new, 0.25) == 5
    assert replay.replay_in_folder(path, None, new, 0.25) == 5  # a folder already there
    assert replay.replay_in_folder(path, mine, None, 0.5) == 5
    (given, made, pause), again, (temporary, existed, other_pause) = [
        (workdir, is_dir, max_pause) for _, _, workdir, is_dir, max_pause in folders]
    assert (given, made, pause) == (new.resolve(), True, 0.25) == again
    assert existed and other_pause == 0.5 and temporary.name.startswith("agent-replay-")
    assert temporary == temporary.resolve() and not temporary.exists()
    assert [(recording, script) for recording, script, *_ in folders] == [
        (path, None), (path, None), (path, mine)]


# -- our rules against the recording --


def test_check_reads_only_message_requests_and_says_what_each_side_did(tmp_path):
    refused = {"type": "error", "error": {"type": "invalid_request_error", "message": "nope"}}
    recording = Recording(header(), [
        exchange(1, "", {"data": []}, method="GET", path="/v1/models", headers={}),
        exchange(2, ask("ok"), path="/v1/messages?beta=true", headers={}),
        exchange(3, ask("fine"), refused, 400),
        exchange(4, ask("fine"), {}, 400),
        exchange(5, {"model": MODEL, "max_tokens": 10, "messages": []}, refused, 400),
        exchange(6, {"model": MODEL, "max_tokens": 10, "messages": []}, message("?"), 529),
        exchange(7, ["not", "an", "object"], message("?")),
        exchange(8, ask("x") | {"model": "gpt-x"}, message("?")),
        exchange(9, ask("x"), None, 400),
    ])
    assert check_rules(recording) == [
        "our rules reject a request the real API accepted: request 2: anthropic-version: "
        "header is required",
        "the real API refused a request our rules accept: request 3: nope",
        "the real API refused a request our rules accept: request 4: HTTP 400",
        "our rules reject a request the real API accepted: request 7: request body must be a "
        "JSON object",
        "our rules reject a request the real API accepted: request 8: model: 'gpt-x' is not in "
        "scripted/models.py",
        "the real API refused a request our rules accept: request 9: HTTP 400",
    ]


def test_check_joins_every_rule_a_request_breaks():
    body = ask("x") | {"max_tokens": "ten"}
    recording = Recording(header(), [exchange(1, body, message("?"), headers={})])
    [problem] = check_rules(recording)
    assert problem.startswith("our rules reject a request the real API accepted: request 1: ")
    assert problem.count("; ") == 1 and problem.endswith("; anthropic-version: header is required")


def test_check_fails_if_any_file_fails_and_says_so_for_each(tmp_path, capsys):
    good = recorded_session(tmp_path, exchange(1, ask("hi"), message("Hi.")),
                            exchange(2, ask("hi", {"role": "assistant", "content": "Hi."},
                                            {"role": "user", "content": "more"}), message("!")))
    bad = tmp_path / "bad.jsonl"
    write_recording(bad, header(), [exchange(1, ask("hi"), message("Hi."), headers={})], set())
    assert replay.main(["--check", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: our rules agree with the API on all 2 requests\n"
    assert replay.main(["--check", str(bad), str(good)]) == 1
    assert capsys.readouterr().out == (
        f"{bad}: our rules reject a request the real API accepted: request 1: "
        "anthropic-version: header is required\n"
        f"{good}: our rules agree with the API on all 2 requests\n")
    with pytest.raises(SystemExit):
        replay.main([str(good)])  # --check is what this command does; without it, a usage error
    assert "--check" in capsys.readouterr().err


def test_the_check_commands_help_says_what_it_does_and_how_to_replay(help_shown):
    shown = help_shown(replay.main)
    assert shown.startswith("usage: python -m scripted.replay [-h] --check files [files ...] ")
    assert ("Replay a recorded session offline: the same screen, no key, no network; and check "
            "our rules.") in shown
    assert "files recordings (.jsonl)" in shown
    assert ("--check check every recorded request against scripted/rules.py (replay with "
            "python -m scripted.demo --replay FILE)") in shown

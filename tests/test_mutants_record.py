"""The recorder (scripted/record.py), as the script that is recorded and the reader of the file
see it: the proxy passes requests and replies on over HTTP and keeps a copy; the file says what
the session was and holds no key; the work directory is kept while it is small and plain.
tests/test_recordings.py records whole sessions of the version scripts; these cases are small,
made here with the real SDK or urllib as the client and the scripted server as the upstream."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import anthropic
import pytest
from prompt_toolkit.history import FileHistory

from scripted import ROOT, SCRIPTS, record
from scripted.record import (
    KEY_REMOVED,
    EventReader,
    Exchange,
    LoopbackServer,
    RecordingProxy,
    as_piped_input,
    folder_files,
    model_of,
    sdk_version,
    settings_read_by,
    typed_messages,
    where,
    write_files,
    write_recording,
)

KEY = "sk-ant-test-0123456789-never-written"
MODEL = "claude-sonnet-5-5"


# -- the events of a stream --


def test_events_are_read_as_they_complete_whatever_the_chunks_cut():
    reader = EventReader()
    japanese = "日本".encode()
    stream = (b"event: message_start\ndata: {\"text\": \"" + japanese + b"\"}\n\n"
              b"event:ping\ndata:{}\r\n\r\n"
              b"data: first line\ndata: second line\n\n"
              b": a comment alone\n\n"
              b"event: error\ndata:  two spaces\n\n")
    inside = stream.index(japanese) + 1  # after the first of the character's three bytes
    cut = [stream[:5], stream[5:inside], stream[inside:inside + 1], stream[inside + 1:]]
    events = [event for chunk in cut for event in reader.feed(chunk)]
    assert events == [
        ("message_start", {"text": "日本"}),
        ("ping", {}),
        ("message", "first line\nsecond line"),  # no event: line, two data: lines
        ("error", " two spaces"),  # one space after the colon is the separator, not the data
    ]
    assert reader.feed(b"event: message_stop\ndata: {}\n") == []  # not ended yet
    assert reader.feed(b"\n") == [("message_stop", {})]
    assert reader.feed(b"data: bad \xff byte\n\n") == [("message", "bad \ufffd byte")]


# -- the proxy --


@pytest.fixture
def proxy(scripted_api):
    secrets: set[str] = set()
    recorder = RecordingProxy(scripted_api.start() + "/", secrets)
    recorder.url = recorder.start()
    yield recorder
    recorder.stop()


def client(url: str, key: str = KEY, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=key, max_retries=0, **options)


def test_a_streamed_reply_passes_through_whole_and_every_event_is_kept(proxy, scripted_api):
    scripted_api.play({"turns": [{"text": "Hello from upstream."}]})
    with client(proxy.url).messages.stream(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        text = "".join(stream.text_stream)
        request_id = stream.response.headers["request-id"]
    assert text == "Hello from upstream."
    [exchange] = proxy.exchanges
    sent = scripted_api.requests[0]
    assert (exchange.number, exchange.method, exchange.path) == (1, "POST", "/v1/messages")
    assert exchange.body == sent.body and exchange.body["stream"] is True
    assert exchange.size == int(sent.headers["content-length"]) > 0
    assert exchange.status == 200 and exchange.reply_body is None
    assert exchange.reply_headers == {"content-type": "text/event-stream",
                                      "request-id": request_id}
    names = [event["event"] for event in exchange.events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    deltas = [event["data"]["delta"].get("text", "") for event in exchange.events
              if event["event"] == "content_block_delta"]
    assert "".join(deltas) == "Hello from upstream."
    times = [exchange.at, exchange.reply_at, *(event["at"] for event in exchange.events)]
    assert times == sorted(times) and all(round(at, 3) == at for at in times)
    # seconds since the proxy began, to the millisecond: not whole seconds, not the machine's clock
    assert times[-1] < 60 and not all(at == int(at) for at in times)


def test_a_plain_reply_and_an_error_reply_are_passed_on_and_kept_as_bodies(proxy, scripted_api):
    scripted_api.play({"turns": [
        {"text": "Plain."},
        {"error": {"status": 529, "message": "Overloaded", "retry_after_ms": 5}},
    ]})
    api = client(proxy.url)
    reply = api.messages.create(model=MODEL, max_tokens=50,
                                messages=[{"role": "user", "content": "hi"}])
    assert reply.content[0].text == "Plain."
    with pytest.raises(anthropic.APIStatusError) as refused:
        api.messages.create(model=MODEL, max_tokens=50,
                            messages=[{"role": "user", "content": "again"}])
    assert refused.value.status_code == 529
    assert refused.value.response.headers["retry-after-ms"] == "5"
    plain, error = proxy.exchanges
    assert plain.reply_body["content"][0]["text"] == "Plain." and plain.events == []
    assert (error.number, error.status) == (2, 529)
    assert error.reply_body["error"]["message"] == "Overloaded"
    assert error.reply_headers["retry-after-ms"] == "5"
    assert set(error.reply_headers) <= record.REPLY_HEADERS_KEPT


def test_the_proxy_passes_on_the_path_and_headers_but_not_those_of_the_connection(
    proxy, scripted_api
):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    body = json.dumps({"model": MODEL, "max_tokens": 5,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "x-custom": "kept",
               "content-type": "application/json", "accept-encoding": "gzip",
               "keep-alive": "timeout=5"}
    request = urllib.request.Request(proxy.url + "/v1/messages?beta=true", body, headers)
    with urllib.request.urlopen(request) as reply:
        assert reply.status == 200 and json.loads(reply.read())["content"][0]["text"] == "Hi."
        [server] = reply.headers.get_all("server")  # the proxy's own, not the upstream's too
        assert server.startswith("recording-proxy")
        assert reply.headers.get_all("date") is not None and len(reply.headers.get_all("date")) == 1
        assert reply.headers["content-length"] is not None
    upstream = scripted_api.requests[0].headers
    assert upstream["x-custom"] == "kept" and upstream["x-api-key"] == KEY
    assert upstream["accept-encoding"] == "identity" and "keep-alive" not in upstream
    [exchange] = proxy.exchanges
    assert exchange.path == "/v1/messages?beta=true" and exchange.size == len(body)
    assert exchange.headers == {"anthropic-version": "2023-06-01",
                                "content-type": "application/json"}


@pytest.mark.allow_violations  # the scripted server is sent what it must refuse
def test_a_body_that_is_not_json_is_kept_as_text_and_a_get_passes_through(proxy, scripted_api):
    request = urllib.request.Request(proxy.url + "/v1/messages", b"not json {",
                                     {"x-api-key": KEY}, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(urllib.request.Request(proxy.url + "/v1/nothing", method="GET"))
    assert missing.value.code == 404
    text, get = proxy.exchanges
    assert text.body == "not json {" and text.status == 400
    assert (get.method, get.path, get.body, get.size) == ("GET", "/v1/nothing", "", 0)
    assert get.reply_body["type"] == "error"


def free_port() -> int:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        return taken.getsockname()[1]


def test_an_upstream_that_does_not_answer_is_a_502_that_names_it():
    upstream = f"http://127.0.0.1:{free_port()}"
    recorder = RecordingProxy(upstream, set())
    url = recorder.start()
    try:
        with pytest.raises(anthropic.InternalServerError) as failed:
            client(url).messages.create(model=MODEL, max_tokens=5,
                                        messages=[{"role": "user", "content": "hi"}])
    finally:
        recorder.stop()
    assert failed.value.status_code == 502
    answered = failed.value.response
    assert answered.headers["content-type"] == "application/json"
    assert answered.headers["content-length"] == str(len(answered.content))
    said = failed.value.body["error"]
    assert failed.value.body["type"] == "error" and said["type"] == "api_error"
    assert said["message"].startswith(f"recording proxy: {upstream} did not answer: ")
    assert "Connection refused" in said["message"]
    [exchange] = recorder.exchanges
    assert exchange.status == 502 and exchange.reply_body == failed.value.body
    assert exchange.reply_headers == {"content-type": "application/json"}
    assert exchange.reply_at >= exchange.at


class GatewayHandler(BaseHTTPRequestHandler):
    def answer(self) -> None:
        owner = self.server.owner
        owner.seen.append((self.command, self.path,
                           self.rfile.read(int(self.headers.get("content-length") or 0))))
        owner.arrived.set()
        owner.release.wait(30)  # set from the start, unless the test holds the reply back
        self.send_response_only(200)  # no date or server line but those it is given
        for name, value in owner.headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(owner.body)))
        self.end_headers()
        self.wfile.write(owner.body)

    do_GET = do_POST = do_DELETE = answer

    def log_message(self, format: str, *args) -> None:
        pass


class Gateway(LoopbackServer):
    """An upstream that is not the Messages API itself, as a gateway or a broken server may be:
    it keeps each request's method, path and body, and answers with the headers and bytes it is
    given."""

    handler = GatewayHandler

    def __init__(self, headers: list[tuple[str, str]], body: bytes) -> None:
        self.headers, self.body, self.seen = headers, body, []
        self.arrived, self.release = threading.Event(), threading.Event()
        self.release.set()


def proxied(upstream: str, method: str, path: str, body: bytes | None = None):
    recorder = RecordingProxy(upstream, set())
    url = recorder.start()
    try:
        request = urllib.request.Request(url + path, body, method=method)
        with urllib.request.urlopen(request) as reply:
            return recorder, reply.status, reply.headers, reply.read()
    finally:
        recorder.stop()


def test_an_upstream_under_a_path_gets_each_request_there_with_its_own_method():
    """A base URL may have a path of its own (a gateway's /anthropic/), with or without a last
    slash; a DELETE and a POST without a body are still a DELETE and a POST."""
    gateway = Gateway([("content-type", "application/json")], b"{}")
    base = gateway.start()
    try:
        proxied(base + "/gateway/", "DELETE", "/v1/files/file_1")
        proxied(base + "/gateway", "POST", "/v1/messages/count_tokens", b"")
    finally:
        gateway.stop()
    assert gateway.seen == [("DELETE", "/gateway/v1/files/file_1", b""),
                            ("POST", "/gateway/v1/messages/count_tokens", b"")]


def test_bytes_that_are_not_utf8_and_a_reply_without_a_content_type_pass_as_they_came():
    latin1 = '{"text": "caf\xe9"}'.encode("latin-1")
    gateway = Gateway([("server", "gateway/1.0"), ("x-gateway", "yes")], latin1)
    base = gateway.start()
    try:
        recorder, status, headers, body = proxied(base, "POST", "/v1/messages", latin1)
    finally:
        gateway.stop()
    assert gateway.seen == [("POST", "/v1/messages", latin1)]
    assert (status, body, headers["x-gateway"]) == (200, latin1, "yes")
    [server] = headers.get_all("server")
    assert server.startswith("recording-proxy")
    [exchange] = recorder.exchanges
    assert exchange.body == exchange.reply_body == {"text": "caf\ufffd"}
    assert exchange.reply_headers == {} and exchange.events == []


def test_servers_started_together_each_have_a_port_and_a_stopped_one_is_gone_at_once():
    """stop() does not wait for a reply still to come (a script stopped half-way, an upstream
    that is slow): the recording is written when the script ends, whatever it left open."""
    gateway = Gateway([("content-type", "application/json")], b"{}")
    gateway.release.clear()
    first = RecordingProxy(gateway.start(), set())
    second = RecordingProxy("http://127.0.0.1:9", set())
    ports = [int(server.start().rpartition(":")[2]) for server in (first, second)]
    assert ports[0] != ports[1]
    request = urllib.request.Request(f"http://127.0.0.1:{ports[0]}/v1/messages", b"{}")
    threading.Thread(target=lambda: urllib.request.urlopen(request).close(), daemon=True).start()
    stopped = threading.Event()
    try:
        assert gateway.arrived.wait(10)  # the proxy is in the middle of relaying it
        threading.Thread(target=lambda: (first.stop(), stopped.set()), daemon=True).start()
        assert stopped.wait(10), "stop() waited for a reply that had not come"
    finally:
        gateway.release.set()
        gateway.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", ports[0]))
    socket.create_connection(("127.0.0.1", ports[1])).close()  # the other one still serves
    second.stop()
    LoopbackServer().stop()  # one never started stops too


def test_a_key_sent_on_the_wire_is_learnt_as_sent_and_without_bearer():
    recorder = RecordingProxy("http://upstream", {"already-known"})
    recorder.learn_secrets({"x-api-key": "12345678", "authorization": "Bearer abcdefgh "})
    recorder.learn_secrets({"x-api-key": "1234567", "authorization": "Bearer"})  # too short
    recorder.learn_secrets({"cookie": "session=long-enough-secret"})  # not a key header
    assert recorder.secrets == {"already-known", "12345678", "Bearer abcdefgh ", "abcdefgh"}


# -- what the header says --


def test_the_settings_a_script_reads_are_taken_from_the_environment_then_its_env_file(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(
        'a = os.environ.get("MODEL_ID", "x")\nb = os.environ.get("MAX_TOKENS")\n'
        'c = os.environ.get("BASH_TIMEOUT")\nd = os.environ.get("ANTHROPIC_BASE_URL")\n'
        'e = os.environ.get("lower_case")\nf = os.environ.get("MODEL_ID")\n',
        encoding="utf-8",
    )
    (tmp_path / ".env").write_text("MAX_TOKENS=99\nMODEL_ID=from-file\nANTHROPIC_BASE_URL=u\n",
                                   encoding="utf-8")
    env = {"MODEL_ID": "from-env", "ANTHROPIC_BASE_URL": "http://x", "lower_case": "y"}
    settings = settings_read_by(script, env)
    assert settings == {"MAX_TOKENS": "99", "MODEL_ID": "from-env"}
    assert list(settings) == ["MAX_TOKENS", "MODEL_ID"]


def write(folder: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)


def test_the_work_directory_is_kept_but_for_generated_folders_secrets_and_binaries(tmp_path):
    write(tmp_path, {"a.py": b"x = 1\r\n", "src/b.md": "日本\n".encode(), ".env": b"KEY=1",
                     ".env.local": b"KEY=2", "logo.png": b"\x89PNG\xff", ".git/HEAD": b"ref",
                     "pkg/node_modules/x.js": b"1", "src/__pycache__/b.pyc": b"1",
                     ".venv/lib.py": b"1", "venv/lib.py": b"1", ".pytest_cache/x": b"1"})
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    files, left_out = folder_files(tmp_path)
    assert files == {"a.py": "x = 1\r\n", "src/b.md": "日本\n"}
    assert left_out == [".env", ".env.local", "logo.png"]


def test_a_work_directory_over_either_limit_is_not_kept(tmp_path, monkeypatch):
    """At the limits themselves the folder is kept; one file or one byte more, and it is not.
    The limits are made small here (3 files, 10 bytes), so the test writes a few bytes."""
    monkeypatch.setattr(record, "FOLDER_FILE_LIMIT", 3)
    monkeypatch.setattr(record, "FOLDER_BYTE_LIMIT", 10)
    write(tmp_path / "many", {"a.txt": b"", "b.txt": b"", "c.txt": b""})
    assert sorted(folder_files(tmp_path / "many")[0]) == ["a.txt", "b.txt", "c.txt"]
    write(tmp_path / "many", {"d.txt": b""})
    assert folder_files(tmp_path / "many") == (None, [])
    write(tmp_path / "big", {"a.txt": b"12345678", "b.txt": "é".encode()})  # 2 bytes, 1 char
    assert sorted(folder_files(tmp_path / "big")[0]) == ["a.txt", "b.txt"]
    write(tmp_path / "big", {"c.txt": b"!", "z.bin": b"\xff"})
    assert folder_files(tmp_path / "big") == (None, [])  # stops at c.txt, before z.bin


def exchange(number: int, headers: dict, body) -> Exchange:
    return Exchange(number, 0.0, "POST", "/v1/messages", 0, headers, body)


def test_the_sdk_and_model_are_those_of_the_first_request_that_says():
    exchanges = [exchange(1, {}, "text"), exchange(2, {}, {"model": 5}),
                 exchange(3, {"x-stainless-package-version": "2.1.0"}, {"model": "claude-a"}),
                 exchange(4, {"x-stainless-package-version": "9.9.9"}, {"model": "claude-b"})]
    assert sdk_version(exchanges) == "anthropic-python 2.1.0"
    assert model_of(exchanges) == "claude-a"
    installed = importlib.metadata.version("anthropic")
    assert sdk_version(exchanges[:2]) == f"anthropic-python {installed}"
    assert model_of(exchanges[:2]) == "(no request was sent)"


@pytest.mark.parametrize(("upstream", "shown"), [
    ("https://user:secret@api.example.com/account/42", "https://api.example.com"),
    ("http://127.0.0.1:4000/", "http://127.0.0.1:4000"),
    ("https://api.anthropic.com", "https://api.anthropic.com"),
])
def test_the_upstream_is_written_without_a_password_or_a_path(upstream, shown):
    assert where(upstream) == shown


def test_messages_typed_at_a_terminal_come_back_oldest_first_as_a_pipe_gives_them(tmp_path):
    history = FileHistory(str(tmp_path / "history"))
    for typed in ("first one", "two\nlines", "third"):
        history.store_string(typed)
    messages = typed_messages(tmp_path / "history")
    assert messages == ["first one", "two\nlines", "third"]
    assert as_piped_input(messages) == "first one\ntwo\\\nlines\nthird\n"
    assert as_piped_input([]) == ""


# -- writing the file --


def test_the_file_holds_the_exchanges_in_order_and_no_key_even_inside_a_longer_one(tmp_path):
    short, longer = "sk-short-1234", "sk-short-1234-and-more"
    # and one inside another that sorts before it: removed first, it would leave "team-a-"
    token, team_token = "tok-98765432", "team-a-tok-98765432"
    first = exchange(1, {}, {"text": f"keys {longer} and {short}, {team_token} 日本"})
    second = exchange(2, {}, {"text": "second"})
    second.status, second.reply_at, second.reply_headers = 200, 1.5, {"request-id": "r"}
    second.events = [{"at": 1.6, "event": "ping", "data": {}}]
    first.reply_body = {"ok": True}
    out = tmp_path / "session.jsonl"
    write_recording(out, {"kind": "header", "note": "h"}, [second, first],
                    {short, longer, token, team_token})
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(line["kind"], line.get("exchange")) for line in lines] == [
        ("header", None), ("request", 1), ("reply", 1), ("body", 1),
        ("request", 2), ("reply", 2), ("event", 2)]
    assert lines[1]["body"]["text"] == (f"keys {KEY_REMOVED} and {KEY_REMOVED}, {KEY_REMOVED} "
                                        "日本")
    assert lines[2] == {"kind": "reply", "exchange": 1, "at": 0.0, "status": 0, "headers": {}}
    assert lines[3] == {"kind": "body", "exchange": 1, "data": {"ok": True}}
    assert lines[5] == {"kind": "reply", "exchange": 2, "at": 1.5, "status": 200,
                        "headers": {"request-id": "r"}}
    assert lines[6] == {"kind": "event", "exchange": 2, "at": 1.6, "event": "ping", "data": {}}
    assert "日本" in out.read_text(encoding="utf-8")  # as written, not \u escapes


def test_files_are_put_back_in_new_folders_byte_for_byte(tmp_path):
    write_files(tmp_path / "new", {"a/b/c.txt": "x\r\n", "d.txt": "日本"})
    assert (tmp_path / "new" / "a" / "b" / "c.txt").read_bytes() == b"x\r\n"
    assert (tmp_path / "new" / "d.txt").read_bytes() == "日本".encode()


# -- running the script --


def test_the_script_runs_as_a_child_with_its_arguments_and_input_and_ctrl_c_is_its_own(
    tmp_path
):
    script = tmp_path / "child.py"
    script.write_text(
        "import os, sys\n"
        "print(sys.argv[1:], repr(sys.stdin.read()), os.environ['ONLY_HERE'], flush=True)\n"
        "sys.exit(3)\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    env = {**os.environ, "ONLY_HERE": "yes"}
    before = signal.getsignal(signal.SIGINT)
    with out.open("w") as screen:
        saved = os.dup(1)
        os.dup2(screen.fileno(), 1)
        try:
            code = record.run_script(script, ["--workdir", "w", "task"], env, "typed\n")
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    assert code == 3
    assert out.read_text() == "['--workdir', 'w', 'task'] 'typed\\n' yes\n"
    assert signal.getsignal(signal.SIGINT) == before  # the recorder's own handler is back
    assert record.ignore_interrupt(signal.SIGINT, None) is None  # Ctrl-C does not stop it


def test_with_nothing_typed_for_it_the_script_reads_the_recorders_own_input(tmp_path):
    """Recording an interactive session: the script reads the terminal the recorder was started
    at (here a pipe put in its place), not an empty input that would end it at once."""
    script = tmp_path / "child.py"
    script.write_text(
        "import sys\nsys.exit(0 if sys.stdin.read() == 'at the terminal\\n' else 5)\n",
        encoding="utf-8")
    reading, writing = os.pipe()
    os.write(writing, b"at the terminal\n")
    os.close(writing)
    saved = os.dup(0)
    os.dup2(reading, 0)
    try:
        code = record.run_script(script, [], dict(os.environ), None)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(reading)
    assert code == 0


class Sender:
    """Stands where the script runs: sends one request through the proxy with the SDK and the
    key it was given, and keeps what the recorder gave it."""

    def __init__(self, history: list[str] | None = None, code: int = 0) -> None:
        self.history, self.code, self.seen = history, code, None

    def __call__(self, script: Path, args: list[str], env: dict, typed: str | None) -> int:
        self.seen = {"script": script, "args": args, "env": env, "typed": typed}
        key = env.get("ANTHROPIC_API_KEY") or env["ANTHROPIC_AUTH_TOKEN"]
        client(env["ANTHROPIC_BASE_URL"], key).messages.create(
            model=MODEL, max_tokens=5, messages=[{"role": "user", "content": f"hi {key}"}])
        for message in self.history or []:
            FileHistory(env["AGENT_HISTORY"]).store_string(message)
        return self.code


def test_a_session_is_written_with_a_header_that_says_what_it_was(scripted_api, tmp_path, capsys):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    work = tmp_path / "work"
    write(work, {"notes.txt": f"token {KEY}\n".encode()})
    out = tmp_path / "session.jsonl"
    sender = Sender(code=4)
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_AUTH_TOKEN": "short", "MODEL_ID": "m"}
    code = record.record_session("v1", out, work, "say hi", scripted_api.start() + "/",
                                 env, options=["--mcp-config", "{root}/m.json"], run=sender)
    assert code == 4
    assert sender.seen["script"] == ROOT / SCRIPTS["v1"]
    assert sender.seen["args"] == ["--workdir", str(work), "--mcp-config", f"{ROOT}/m.json",
                                   "say hi"]
    assert sender.seen["typed"] is None
    assert sender.seen["env"]["ANTHROPIC_BASE_URL"] != scripted_api.start()  # the proxy's
    history = Path(sender.seen["env"]["AGENT_HISTORY"])
    assert not history.exists()  # its own file, removed afterwards
    text = out.read_text(encoding="utf-8")
    assert KEY not in text and text.count(KEY_REMOVED) == 2  # the file's copy, the message
    header = json.loads(text.splitlines()[0])
    assert header == {
        "kind": "header", "format": 1,
        "what": "a coding-agent session, recorded by python -m scripted.record",
        "version": "v1", "script": SCRIPTS["v1"], "model": MODEL,
        "sdk": f"anthropic-python {anthropic.__version__}",
        "date": time.strftime("%Y-%m-%d"), "upstream": scripted_api.start(), "exit_code": 4,
        "task": "say hi", "typed": "", "settings": {"MODEL_ID": "m"}, "workdir": str(work),
        "files": {"notes.txt": f"token {KEY_REMOVED}\n"}, "files_left_out": [],
        "args": ["--mcp-config", "{root}/m.json"],
    }
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith(f"[recording to {out}: the file will hold this conversation")
    assert said[-1] == (f"[recorded 1 requests to {out}; replay it offline with: "
                        f"python -m scripted.demo --replay {out}]")
    assert len(said) == 2


@pytest.mark.parametrize("kept", [True, False], ids=["folder-kept", "folder-too-big"])
def test_the_recorders_lines_reach_a_pipe_as_printed_in_order_with_the_scripts_own(
    scripted_api, tmp_path, monkeypatch, piped_stdout, kept
):
    """Piped (`... | tee log`), print() keeps lines back until its buffer fills; the script,
    another process, writes to the same pipe at once. Each of the recorder's lines must go out
    as it is printed, or it would come after the script's output, or only when the recorder
    ends."""
    scripted_api.play({"turns": [{"text": "Hi."}]})
    if not kept:  # then a line says so, and it goes out at once too
        monkeypatch.setattr(record, "FOLDER_FILE_LIMIT", 1)
    work = tmp_path / "work"
    write(work, {"a.txt": b"1", "b.txt": b"2"})

    def script(path: Path, args: list[str], env: dict, typed: str | None) -> int:
        Sender()(path, args, env, typed)
        piped_stdout.child_writes("the script's own line\n")
        return 0

    out = tmp_path / "session.jsonl"
    with piped_stdout:
        record.record_session("v1", out, work, "hi", scripted_api.start(),
                              {**os.environ, "ANTHROPIC_API_KEY": KEY}, run=script)
    assert piped_stdout.lines() == [
        f"[recording to {out}: the file will hold this conversation, the files of {work} and "
        "all the tools showed of them. The API key is left out; before you share the file, read "
        "it for secrets, personal data and paths you would rather keep]",
        *([] if kept else [
            f"[record: {work} is too big to keep in the file; replay with --workdir pointing at "
            "a copy of the folder as it is now]"]),
        "the script's own line",
        f"[recorded 1 requests to {out}; replay it offline with: python -m scripted.demo "
        f"--replay {out}]",
    ]


def test_messages_typed_at_a_terminal_are_read_back_from_the_prompts_history(
    scripted_api, tmp_path, capsys
):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    write(tmp_path / "big", {"big.txt": b"x" * (record.FOLDER_BYTE_LIMIT + 1)})
    out = tmp_path / "session.jsonl"
    sender = Sender(history=["first", "two\nlines"])
    env = {**os.environ, "ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": KEY}
    assert record.record_session("v2", out, tmp_path / "big", None, scripted_api.start(), env,
                                 source="scripted model (x.yaml)", run=sender) == 0
    assert sender.seen["args"] == ["--workdir", str(tmp_path / "big")]
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["typed"] == "first\ntwo\\\nlines\n" and header["task"] is None
    assert header["files"] is None and header["upstream"] == "scripted model (x.yaml)"
    assert "args" not in header and header["script"] == SCRIPTS["v2"]
    assert KEY not in out.read_text(encoding="utf-8")  # the token, learnt from the environment
    said = capsys.readouterr().out.splitlines()
    assert said[1] == (f"[record: {tmp_path / 'big'} is too big to keep in the file; replay with "
                       "--workdir pointing at a copy of the folder as it is now]")


@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_a_key_of_the_environment_is_removed_even_if_the_script_never_sent_it(tmp_path, variable):
    """Eight characters are a key (record.SHORTEST_SECRET); seven are ordinary text."""
    work = tmp_path / "work"
    write(work, {"notes.txt": b"12345678 and 1234567"})
    out = tmp_path / "session.jsonl"
    env = {**os.environ, "ANTHROPIC_API_KEY": "1234567", "ANTHROPIC_AUTH_TOKEN": "", variable:
           "12345678"}
    record.record_session("v1", out, work, "hi", "http://127.0.0.1:9", env,
                          run=lambda *args: 0)  # a script that sent nothing
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["files"] == {"notes.txt": f"{KEY_REMOVED} and 1234567"}


def test_messages_piped_in_are_written_as_they_came(scripted_api, tmp_path):
    scripted_api.play({"turns": [{"text": "Hi."}]})
    out = tmp_path / "session.jsonl"
    sender = Sender(history=["not this"])
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
    record.record_session("v1", out, tmp_path, None, scripted_api.start(), env,
                          piped="piped\n", run=sender)
    assert sender.seen["typed"] == "piped\n"
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["typed"] == "piped\n"


# -- the command line --


@pytest.fixture
def sessions(monkeypatch):
    """What main() asked to record, in place of running a script (which takes seconds)."""
    asked = []
    monkeypatch.setattr(record, "record_session",
                        lambda *args, **kwargs: asked.append(("session", args, kwargs)) or 6)
    monkeypatch.setattr(record, "record_demo",
                        lambda *args: asked.append(("demo", args, {})) or 7)
    return asked


def test_the_command_line_records_a_task_to_a_dated_file_from_the_set_upstream(
    sessions, tmp_path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://gateway:4000")
    stamp = time.strftime("%Y-%m-%d-%H%M")
    assert record.main(["v3", "add", "a", "discount", "--workdir", str(tmp_path)]) == 6
    [(kind, args, kwargs)] = sessions
    version, out, workdir, task, upstream, env, piped = args
    assert (kind, version, workdir, task, upstream, piped) == (
        "session", "v3", tmp_path.resolve(), "add a discount", "http://gateway:4000", None)
    assert out.name in (f"session-v3-{stamp}.jsonl",
                        f"session-v3-{time.strftime('%Y-%m-%d-%H%M')}.jsonl")
    assert env["ANTHROPIC_BASE_URL"] == "http://gateway:4000" and kwargs == {}
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "")
    record.main(["v1", "hi", "--out", str(tmp_path / "x.jsonl")])
    _, args, _ = sessions[-1]
    assert args[1] == tmp_path / "x.jsonl" and args[2] == Path(".").resolve()
    assert args[4] == "https://api.anthropic.com"


def test_the_command_line_reads_messages_from_a_pipe_when_no_task_is_given(
    sessions, tmp_path, monkeypatch
):
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("one\ntwo\n"))
    record.main(["v1", "--workdir", str(tmp_path)])
    _, args, _ = sessions[-1]
    assert args[3] is None and args[6] == "one\ntwo\n"


def test_the_command_lines_help_says_each_choice_and_its_default(help_shown):
    shown = help_shown(record.main)
    assert shown.startswith("usage: python -m scripted.record [-h] [--workdir WORKDIR] ")
    assert ("Record a session with Claude once, to replay it later offline, with no key and no "
            "network.") in shown
    for said in (f"{{{','.join(SCRIPTS)}}} which script to run",
                 "task one task to run, then exit; none: interactive",
                 "--workdir WORKDIR the folder to work in (default: .)",
                 "--out OUT the file to write (default: session-vN-….jsonl)",
                 "--demo play the version's demo scenario, the scripted model standing in for "
                 "Claude"):
        assert said in shown


def test_the_command_line_refuses_a_version_that_does_not_exist(sessions, capsys):
    with pytest.raises(SystemExit) as stopped:
        record.main(["v9", "hi"])
    assert stopped.value.code == 2
    assert "argument version: invalid choice: 'v9'" in capsys.readouterr().err
    assert sessions == []


def test_the_command_line_refuses_a_work_folder_that_is_not_there(sessions, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        record.main(["v1", "hi", "--workdir", str(tmp_path / "missing")])
    assert stopped.value.code == 2
    assert f"--workdir {tmp_path / 'missing'}: no such folder" in capsys.readouterr().err
    assert sessions == []


def test_the_demo_is_recorded_in_the_folder_given_made_if_need_be_or_in_a_temporary_one(
    sessions, tmp_path
):
    folder = tmp_path / "new" / "demo"
    assert record.main(["v2", "--demo", "--workdir", str(folder), "--out",
                        str(tmp_path / "d.jsonl")]) == 7
    assert sessions[-1][1] == ("v2", tmp_path / "d.jsonl", folder.resolve())
    assert folder.is_dir()
    assert record.main(["v2", "--demo", "--workdir", str(folder)]) == 7  # already there
    assert record.main(["v1", "--demo"]) == 7
    _, (version, out, temporary), _ = sessions[-1]
    assert version == "v1" and temporary.name.startswith("agent-record-v1-")
    assert out.name.startswith("session-v1-") and not temporary.exists()


@pytest.mark.parametrize("version", ["v2", "v6"])  # one with files, one with arguments
def test_the_demo_plays_its_scenario_from_its_files_with_the_scripted_model(
    tmp_path, monkeypatch, version
):
    asked = []

    def session(version, out, workdir, task, upstream, env, **options):
        with pytest.raises(urllib.error.HTTPError) as answered:  # a scripted server is up
            urllib.request.urlopen(upstream + "/v1/nothing")
        asked.append((version, out, workdir, task, env["ANTHROPIC_API_KEY"], options,
                      answered.value.code, upstream))
        return 5

    monkeypatch.setattr(record, "record_session", session)
    assert record.record_demo(version, tmp_path / "d.jsonl", tmp_path) == 5
    [(played, out, workdir, task, key, options, code, upstream)] = asked
    name = f"{version}_demo.yaml"
    scenario = record.load_scenario(ROOT / "scripted" / "scenarios" / name)
    assert (played, out, workdir, task, key, code) == (
        version, tmp_path / "d.jsonl", tmp_path, scenario["task"], "scripted-demo", 404)
    assert options == {"source": f"scripted model ({name})", "options": scenario.get("args", [])}
    for file, content in scenario.get("files", {}).items():
        assert (tmp_path / file).read_text(encoding="utf-8") == content
    with pytest.raises(urllib.error.URLError):  # stopped once the session is written
        urllib.request.urlopen(upstream + "/v1/nothing")

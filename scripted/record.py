"""Record a session with Claude once, to replay it later offline, with no key and no network.

    python -m scripted.record v3 "Add a 10% discount"   # one task, then exit
    python -m scripted.record v1 --workdir proj         # interactive: type at the prompt as usual
    python -m scripted.record v3 --demo                 # the scripted model stands in for Claude

    script ──SDK──▶ recording proxy on 127.0.0.1 ──▶ ANTHROPIC_BASE_URL (default: the real API)
                            │ a copy of every request and of every streamed event, in order
                            ▼
                    session-v3-2026-11-24-1031.jsonl ──▶ python -m scripted.demo --replay FILE

The script runs unchanged, as a subprocess; only its ANTHROPIC_BASE_URL points at the proxy.
The file is JSON Lines, one object a line. First a header: the model, the SDK version, the date,
the task or the messages typed at the prompt, the settings the script read, and the files of the
work directory as they were at the start (the replay starts from the same files). Then each
exchange whole, in the order the requests arrived: the request, the reply's status, then every
event of the stream with its time in seconds since the session began.

The API key and every header that authenticates are never written; a key that turns up anywhere
else (a file the model read, a command's output) is replaced by KEY_REMOVED.
"""

from __future__ import annotations

import argparse
import codecs
import datetime
import functools
import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPException
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dotenv import dotenv_values

from scripted import ROOT, SCRIPTS, script_args
from scripted.server import ScriptedAPI, load_scenario, loopback_env

# -- configuration --

DEFAULT_UPSTREAM = "https://api.anthropic.com"
FORMAT = 1  # the file's layout; a reader refuses a file of another one
KEY_REMOVED = "[API key removed]"
SHORTEST_SECRET = 8  # characters: a shorter "key" (a test's "x") would blank out ordinary text
# What is kept of the headers, by name. A list of what may be written, not of what may not: a
# new authentication header (a cookie, a proxy's token) is left out without anyone adding it.
REQUEST_HEADERS_KEPT = {
    "anthropic-version",
    "anthropic-beta",
    "content-type",
    "x-stainless-helper-method",
    "x-stainless-package-version",
    "x-stainless-retry-count",
}
REPLY_HEADERS_KEPT = {
    "content-type",
    "request-id",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
}
# Not passed on either way: they describe one connection, and the proxy makes its own.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-encoding",
    "content-length",
    "host",
    "accept-encoding",
}
UPSTREAM_TIMEOUT = 600  # seconds the upstream may stay silent: a model may think for minutes
# The work directory is copied into the file only while it is small and plain: a replay starts from
# it. Folders a project regenerates, and files that hold secrets by convention, are left out.
FOLDER_FILE_LIMIT = 200
FOLDER_BYTE_LIMIT = 1_000_000
FOLDERS_LEFT_OUT = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache"}
STREAM_CHUNK = 65536  # bytes read at most at once; read1 returns what has come
SETTING = re.compile(r'os\.environ\.get\("([A-Z][A-Z0-9_]*)"')

# -- the events of a stream --


class EventReader:
    """Splits the bytes of a server-sent event stream into (event, data) pairs as they arrive. An
    event ends at a blank line; a chunk may end anywhere, even inside a UTF-8 character."""

    def __init__(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending = ""

    def feed(self, chunk: bytes) -> list[tuple[str, Any]]:
        self.pending = (self.pending + self.decoder.decode(chunk)).replace("\r\n", "\n")
        events = []
        while "\n\n" in self.pending:
            block, self.pending = self.pending.split("\n\n", 1)
            name = "message"  # the SSE default, for an event without an event: line
            data = []
            for line in block.split("\n"):
                if line.startswith("event:"):
                    name = line.removeprefix("event:").strip()
                elif line.startswith("data:"):
                    data.append(line.removeprefix("data:").removeprefix(" "))
            if data:
                events.append((name, json_or_text("\n".join(data))))
        return events


def json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


# -- the recording proxy --


@dataclass
class Exchange:
    """One request and its reply, as they went through the proxy."""

    number: int  # in the order the requests arrived, from 1
    at: float  # seconds since the session began
    method: str
    path: str
    size: int  # bytes of the request body
    headers: dict
    body: Any
    status: int = 0
    reply_at: float = 0.0
    reply_headers: dict = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)  # {"at", "event", "data"}, in order
    reply_body: Any = None  # a reply that is not a stream: a message, or an error

    def lines(self) -> list[dict]:
        """The exchange as the file's lines: request, reply, then the events or the body."""
        lines = [
            {
                "kind": "request",
                "exchange": self.number,
                "at": self.at,
                "method": self.method,
                "path": self.path,
                "size": self.size,
                "headers": self.headers,
                "body": self.body,
            },
            {
                "kind": "reply",
                "exchange": self.number,
                "at": self.reply_at,
                "status": self.status,
                "headers": self.reply_headers,
            },
        ]
        for event in self.events:
            lines.append({"kind": "event", "exchange": self.number, **event})
        if self.reply_body is not None:
            lines.append({"kind": "body", "exchange": self.number, "data": self.reply_body})
        return lines


class ProxyHandler(BaseHTTPRequestHandler):
    server_version = "recording-proxy"

    def do_POST(self) -> None:
        self.server.owner.relay(self)

    do_GET = do_PUT = do_DELETE = do_POST  # the SDK's other endpoints pass through as well

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the recording is the log; lines on stderr would break into the agent's screen


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1, on a free port, serving in the background: the
    recording proxy, and the replay server. Its `handler` reaches it as self.server.owner."""

    handler: type[BaseHTTPRequestHandler]
    _httpd: ThreadingHTTPServer | None = None

    def start(self) -> str:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self
        # A short poll: stop() waits for the loop to notice, up to one interval.
        serve = functools.partial(self._httpd.serve_forever, poll_interval=0.05)
        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


class RecordingProxy(LoopbackServer):
    """Passes each request on to the upstream API and each reply back, byte for byte as it
    comes, keeping a copy of both. Subagents send requests in parallel: each is numbered as it
    arrives and recorded on its own, so every exchange stays whole."""

    handler = ProxyHandler

    def __init__(self, upstream: str, secrets: set[str]) -> None:
        self.upstream = upstream.rstrip("/")
        self.secrets = secrets  # grows with every key the script sends
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._began = time.monotonic()

    def clock(self) -> float:
        return round(time.monotonic() - self._began, 3)

    def begin(self, method: str, path: str, headers: dict, raw: bytes) -> Exchange:
        self.learn_secrets(headers)
        kept = {name: value for name, value in headers.items() if name in REQUEST_HEADERS_KEPT}
        with self._lock:
            exchange = Exchange(
                len(self.exchanges) + 1,
                self.clock(),
                method,
                path,
                len(raw),
                kept,
                json_or_text(raw.decode("utf-8", errors="replace")),
            )
            self.exchanges.append(exchange)
        return exchange

    def learn_secrets(self, headers: dict) -> None:
        """The key a script sends may come from a .env file the recorder never saw: take it from
        the wire, so that it is removed wherever else it shows up."""
        for name in ("x-api-key", "authorization"):
            value = headers.get(name, "")
            for secret in (value, value.removeprefix("Bearer ").strip()):
                if len(secret) >= SHORTEST_SECRET:
                    self.secrets.add(secret)

    def relay(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        headers = {name.lower(): value for name, value in handler.headers.items()}
        exchange = self.begin(handler.command, handler.path, headers, raw)
        onward = {name: value for name, value in headers.items() if name not in HOP_BY_HOP}
        # urllib asks for plain bytes (no gzip), so the copy can be read, and it goes through a
        # proxy set for the real network (HTTPS_PROXY), as the SDK would.
        request = urllib.request.Request(
            self.upstream + handler.path, data=raw or None, headers=onward, method=handler.command
        )
        try:
            reply = urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT)
        except urllib.error.HTTPError as error:
            reply = error  # an error status is a reply like any other: passed on and recorded
        except OSError as error:  # no reply at all: the host is unreachable, or timed out
            self.answer_unreachable(handler, exchange, error)
            return
        try:
            self.pass_on(handler, exchange, reply)
        except (OSError, HTTPException):
            pass  # the script stopped reading (Ctrl-C), or the upstream broke off: kept so far
        finally:
            reply.close()

    def pass_on(self, handler: BaseHTTPRequestHandler, exchange: Exchange, reply: Any) -> None:
        exchange.status = reply.status
        exchange.reply_at = self.clock()
        headers = {name.lower(): value for name, value in reply.headers.items()}
        exchange.reply_headers = {
            name: value for name, value in headers.items() if name in REPLY_HEADERS_KEPT
        }
        handler.send_response(reply.status)
        for name, value in headers.items():
            # send_response() has written this server's own date and server lines
            if name not in HOP_BY_HOP and name not in ("date", "server"):
                handler.send_header(name, value)
        # Each part is kept before it is passed on: the script may end as soon as it has the
        # last one, and the file is written then.
        if not headers.get("content-type", "").startswith("text/event-stream"):
            body = reply.read()
            exchange.reply_body = json_or_text(body.decode("utf-8", errors="replace"))
            handler.send_header("content-length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
            return
        handler.end_headers()
        reader = EventReader()
        while True:
            chunk = reply.read1(STREAM_CHUNK)
            if not chunk:
                break
            arrived = self.clock()
            for name, data in reader.feed(chunk):
                exchange.events.append({"at": arrived, "event": name, "data": data})
            handler.wfile.write(chunk)
            handler.wfile.flush()  # the script sees each event as soon as it comes

    def answer_unreachable(
        self, handler: BaseHTTPRequestHandler, exchange: Exchange, error: Exception
    ) -> None:
        message = f"recording proxy: {self.upstream} did not answer: {error}"
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        payload = json.dumps(body).encode()
        exchange.status = 502
        exchange.reply_at = self.clock()
        exchange.reply_body = body
        exchange.reply_headers = {"content-type": "application/json"}
        handler.send_response(502)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


# -- what the header says --


def settings_read_by(script: Path, env: dict) -> dict[str, str]:
    """The settings the script reads (`os.environ.get("NAME"` in its source, so a setting added
    to a script is recorded without a change here), as set in the environment or in the .env
    beside the script. The replay sets them again: MODEL_ID, MAX_TOKENS and BASH_TIMEOUT all
    show in the requests. Credentials and the endpoint are not settings to replay."""
    beside = dotenv_values(script.resolve().parent / ".env")
    settings = {}
    for name in sorted(set(SETTING.findall(script.read_text(encoding="utf-8")))):
        if name.startswith("ANTHROPIC_"):
            continue
        value = env.get(name, beside.get(name))
        if value is not None:
            settings[name] = value
    return settings


def folder_files(workdir: Path) -> tuple[dict[str, str] | None, list[str]]:
    """The work directory's text files as they are before the session, by relative path, and what
    was left out. None if the folder is too big to keep: the replay then needs --workdir."""
    files: dict[str, str] = {}
    left_out: list[str] = []
    total = 0  # bytes
    for path in sorted(workdir.rglob("*")):
        relative = path.relative_to(workdir)
        if set(relative.parts) & FOLDERS_LEFT_OUT or not path.is_file() or path.is_symlink():
            continue
        if relative.name.startswith(".env"):
            left_out.append(relative.as_posix())  # where keys live by convention
            continue
        try:
            text = path.read_bytes().decode("utf-8")  # \r\n kept: read_text would make it \n
        except (UnicodeDecodeError, OSError):
            left_out.append(relative.as_posix())  # binary or unreadable: not in a text file
            continue
        total += len(text.encode("utf-8"))
        if len(files) >= FOLDER_FILE_LIMIT or total > FOLDER_BYTE_LIMIT:
            return None, left_out
        files[relative.as_posix()] = text
    return files, left_out


def sdk_version(exchanges: list[Exchange]) -> str:
    """The SDK the script used, as it says in each request; the one installed here otherwise."""
    for exchange in exchanges:
        if "x-stainless-package-version" in exchange.headers:
            return f"anthropic-python {exchange.headers['x-stainless-package-version']}"
    # The installed version, read from its metadata: importing the SDK here would cost each demo
    # and replay a second of start-up for one string (the script it runs imports it anyway).
    return f"anthropic-python {importlib.metadata.version('anthropic')}"


def model_of(exchanges: list[Exchange]) -> str:
    for exchange in exchanges:
        if isinstance(exchange.body, dict) and isinstance(exchange.body.get("model"), str):
            return exchange.body["model"]
    return "(no request was sent)"


def where(upstream: str) -> str:
    """The upstream as scheme://host[:port]: a URL may carry a user and password, or a path
    that names an account."""
    parts = urlsplit(upstream)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def typed_messages(history_file: Path) -> list[str]:
    """What the user sent at the prompt, oldest first, read from the prompt's history file."""
    from prompt_toolkit.history import FileHistory

    return list(reversed(list(FileHistory(str(history_file)).load_history_strings())))


def as_piped_input(messages: list[str]) -> str:
    """The messages as the prompt reads them from a pipe: a line that ends in a backslash goes
    on to the next one, so a message of several lines stays one message."""
    return "".join("\\\n".join(message.split("\n")) + "\n" for message in messages)


# -- writing the file --


def write_recording(out: Path, header: dict, exchanges: list[Exchange], secrets: set[str]) -> None:
    lines = [header]
    for exchange in sorted(exchanges, key=lambda exchange: exchange.number):
        lines += exchange.lines()
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    for secret in sorted(secrets, key=len, reverse=True):  # a longer one may contain a shorter
        text = text.replace(secret, KEY_REMOVED)
    out.write_bytes(text.encode("utf-8"))


def write_files(folder: Path, files: dict[str, str]) -> None:
    """Put files into a folder byte for byte: their line endings as they are, on every OS
    (write_text would write each \n as \r\n on Windows, and a replay would then differ)."""
    for name, content in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8"))


# -- running the script --


def ignore_interrupt(signum: int, frame: Any) -> None:
    """Ctrl-C reaches the script and the recorder alike. It is the script's to handle (it stops
    a turn, or leaves); the recorder goes on, so the file is written when the script ends."""


def run_script(script: Path, args: list[str], env: dict, typed: str | None) -> int:
    """Run the script as the user would, in a subprocess on this terminal; return its exit code.
    `typed`: what to send to its prompt through a pipe (None: the terminal's own input). The
    tests pass an in-process runner with the same arguments instead."""
    previous = signal.signal(signal.SIGINT, ignore_interrupt)
    try:
        process = subprocess.Popen(
            [sys.executable, str(script), *args],
            env=env,
            stdin=subprocess.PIPE if typed is not None else None,
            text=True,
        )
        process.communicate(typed)
        return process.returncode
    finally:
        signal.signal(signal.SIGINT, previous)


def record_session(
    version: str,
    out: Path,
    workdir: Path,
    task: str | None,
    upstream: str,
    env: dict,
    piped: str | None = None,
    source: str = "",
    run: Callable[[Path, list[str], dict, str | None], int] = run_script,
    options: list[str] | None = None,
) -> int:
    """Run the version's script through the recording proxy and write the file; return the
    script's exit code. `piped`: what to send to the script's prompt (None: the terminal).
    `options`: the script's own (v6's --mcp-config FILE), kept in the header for the replay."""
    script = ROOT / SCRIPTS[version]
    secrets = {
        env[name]
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
        if len(env.get(name) or "") >= SHORTEST_SECRET
    }
    files, left_out = folder_files(workdir)
    proxy = RecordingProxy(upstream, secrets)
    handle, name = tempfile.mkstemp(prefix="agent-record-history-")
    os.close(handle)  # Windows refuses to remove a file that is still open (WinError 32)
    history = Path(name)
    child_env = {**env, **loopback_env(proxy.start()), "AGENT_HISTORY": str(history)}
    print(
        f"[recording to {out}: the file will hold this conversation, the files of {workdir} and "
        "all the tools showed of them. The API key is left out; before you share the file, read "
        "it for secrets, personal data and paths you would rather keep]",
        flush=True,
    )
    if files is None:
        print(
            f"[record: {workdir} is too big to keep in the file; replay with --workdir pointing "
            "at a copy of the folder as it is now]",
            flush=True,
        )
    args = ["--workdir", str(workdir), *script_args(options or [])] + ([task] if task else [])
    try:
        code = run(script, args, child_env, piped)
    finally:
        proxy.stop()
    if task is None and piped is None:
        piped = as_piped_input(typed_messages(history))
    history.unlink()
    header = {
        "kind": "header",
        "format": FORMAT,
        "what": "a coding-agent session, recorded by python -m scripted.record",
        "version": version,
        "script": SCRIPTS[version],
        "model": model_of(proxy.exchanges),
        "sdk": sdk_version(proxy.exchanges),
        "date": datetime.date.today().isoformat(),
        "upstream": source or where(upstream),
        "exit_code": code,
        "task": task,
        "typed": piped or "",
        "settings": settings_read_by(script, env),
        "workdir": str(workdir),
        "files": files,
        "files_left_out": left_out,
    }
    if options:  # only where there are some: older recordings stay as they were
        header["args"] = options
    write_recording(out, header, proxy.exchanges, proxy.secrets)
    print(
        f"[recorded {len(proxy.exchanges)} requests to {out}; replay it offline with: "
        f"python -m scripted.demo --replay {out}]",
        flush=True,
    )
    return code


def record_demo(version: str, out: Path, workdir: Path) -> int:
    """The version's demo scenario, with the scripted model standing in for Claude: a recording
    to test the machinery with (tests/recordings/), made without a key."""
    scenario_file = f"{version}_demo.yaml"
    scenario = load_scenario(Path(__file__).resolve().parent / "scenarios" / scenario_file)
    write_files(workdir, scenario.get("files", {}))
    api = ScriptedAPI()
    api.play(scenario)
    env = {**os.environ, "ANTHROPIC_API_KEY": "scripted-demo"}
    try:
        return record_session(
            version,
            out,
            workdir,
            scenario["task"],
            api.start(),
            env,
            source=f"scripted model ({scenario_file})",
            options=scenario.get("args", []),
        )
    finally:
        api.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripted.record", description=__doc__.splitlines()[0]
    )
    parser.add_argument("version", choices=SCRIPTS, help="which script to run")
    parser.add_argument("task", nargs="*", help="one task to run, then exit; none: interactive")
    parser.add_argument("--workdir", type=Path, help="the folder to work in (default: .)")
    parser.add_argument("--out", type=Path, help="the file to write (default: session-vN-….jsonl)")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="play the version's demo scenario, the scripted model standing in for Claude",
    )
    args = parser.parse_args(argv)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = args.out or Path(f"session-{args.version}-{stamp}.jsonl")
    if args.demo:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            return record_demo(args.version, out, args.workdir.resolve())
        with tempfile.TemporaryDirectory(prefix=f"agent-record-{args.version}-") as folder:
            return record_demo(args.version, out, Path(folder).resolve())
    workdir = (args.workdir or Path(".")).resolve()
    if not workdir.is_dir():
        parser.error(f"--workdir {workdir}: no such folder")
    task = " ".join(args.task) or None
    piped = None
    if task is None and not sys.stdin.isatty():
        piped = sys.stdin.read()  # messages from a pipe: kept, then given to the script
    upstream = os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM
    return record_session(args.version, out, workdir, task, upstream, dict(os.environ), piped)


if __name__ == "__main__":
    sys.exit(main())

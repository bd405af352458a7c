"""Replay a recorded session offline: the same screen, no key, no network; and check our rules.

    python -m scripted.demo --replay session.jsonl                  # the script it was made with
    python -m scripted.demo --replay session.jsonl --script mine.py # a workshop copy, a version
    python -m scripted.replay --check session.jsonl                 # our rules against reality

    script ──SDK──▶ replay server on 127.0.0.1 ── the request the recording has? ──no──▶ stop: diff
                                                        │ yes
                                                        ▼
                                  the recorded reply, event by event, in the recorded order

The script runs unchanged, as a subprocess, in a work directory that starts with the files the
recording kept, and gets the task or the typed messages the session had. Each request it sends is
matched to the recorded exchange of the same conversation (the same first message), not by its
place in the file: parallel subagents may ask in another order. The work directory's path, ids,
clock times and the OS and shell the model is told of are masked before comparing: they differ from
run to run, or from machine to machine. The first request that differs stops the replay: it and
every request after it get an error instead of a reply, which ends the script's turn, and when the
script ends the two requests are shown as a diff of their pretty JSON.

The replies go out in the order they were recorded across all exchanges, so parallel subagents
finish, and thinking shows, in the order they did; the pauses between events are replayed, each
cut to at most `max_pause` seconds.

`--check`: a recording is evidence of what the API accepted. Every recorded request is checked
against scripted/rules.py; one that our rules reject but the API accepted is a bug in our rules.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from scripted import ROOT, script_args
from scripted.models import MODELS
from scripted.record import FORMAT, Exchange, LoopbackServer, json_or_text, run_script, write_files
from scripted.rules import cache_breakpoint_errors, model_errors, validate_request
from scripted.server import loopback_env

# -- configuration --

MAX_PAUSE = 0.2  # seconds: a long pause (the model thinking) is cut to this; 0 plays at once
STALL = 10.0  # seconds without any event going out: stop keeping the recorded order (see Turnstile)
RETRY_PAUSE_MS = 200  # a recorded "retry after 20 s" is replayed as this, so the room need not wait
DIFF_CONTEXT = 3  # lines around each change
LONGEST_SHOWN = 60  # lines of a request the recording does not have
# Masked before comparing, because they change from run to run: ids the API makes up, and clock
# times in tool output (an ISO date and time, or HH:MM:SS). Times without seconds are left alone:
# too many other things look like them ("lines 12:30").
ID = re.compile(r"(toolu|srvtoolu|msg|req)_[A-Za-z0-9_-]+")
CLOCK = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"
)
# Where the bash tool's commands run, as the script tells the model (plumbing.platforms'
# shell_in_use): a session recorded on Linux replays on Windows and macOS too.
SHELL_IN_USE = re.compile(r"\b(?:bash|sh|PowerShell) on (?:Linux|macOS|Windows)\b")
MESSAGES = "/v1/messages"

# -- reading a recording --


@dataclass
class Recording:
    header: dict
    exchanges: list[Exchange]  # in the order the requests arrived


def load_recording(path: str | Path) -> Recording:
    """Read a file written by python -m scripted.record; a ValueError says what is wrong."""
    lines = [
        json.loads(line)
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if not lines or lines[0].get("kind") != "header" or lines[0].get("format") != FORMAT:
        raise ValueError(f"{path}: not a recording of python -m scripted.record (format {FORMAT})")
    exchanges: dict[int, Exchange] = {}
    for line in lines[1:]:
        number = line["exchange"]
        if line["kind"] == "request":
            exchanges[number] = Exchange(
                number,
                line["at"],
                line["method"],
                line["path"],
                line["size"],
                line["headers"],
                line["body"],
            )
            continue
        exchange = exchanges[number]
        if line["kind"] == "reply":
            exchange.status = line["status"]
            exchange.reply_at = line["at"]
            exchange.reply_headers = line["headers"]
        elif line["kind"] == "event":
            exchange.events.append({key: line[key] for key in ("at", "event", "data")})
        elif line["kind"] == "body":
            exchange.reply_body = line["data"]
    return Recording(lines[0], sorted(exchanges.values(), key=lambda exchange: exchange.number))


def final_message(exchange: Exchange) -> Any:
    """The reply as one message: a plain reply's body, or what the stream's events add up to."""
    if not exchange.events:
        return exchange.reply_body
    message: dict = {"content": [], "usage": {}}
    partial_json: dict[int, str] = {}
    for event in exchange.events:
        data = event["data"]
        if event["event"] == "message_start":
            message = copy.deepcopy(data["message"])
        elif event["event"] == "content_block_start":
            message["content"].append(copy.deepcopy(data["content_block"]))
        elif event["event"] == "content_block_delta":
            add_delta(message["content"][data["index"]], data["delta"], partial_json, data["index"])
        elif event["event"] == "content_block_stop" and data["index"] in partial_json:
            message["content"][data["index"]]["input"] = json.loads(
                partial_json[data["index"]] or "{}"
            )
        elif event["event"] == "message_delta":
            message.update(data.get("delta", {}))
            message["usage"].update(data.get("usage") or {})
        elif event["event"] == "error":
            message["error"] = data.get("error")  # a stream can fail after HTTP 200
    return message


def add_delta(block: dict, delta: dict, partial_json: dict[int, str], index: int) -> None:
    if delta["type"] == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif delta["type"] == "input_json_delta":
        # A tool's input comes as pieces of JSON text, whole only at the block's end.
        partial_json[index] = partial_json.get(index, "") + delta["partial_json"]
    elif delta["type"] == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif delta["type"] == "signature_delta":
        block["signature"] = delta["signature"]
    elif delta["type"] == "citations_delta":
        block.setdefault("citations", []).append(delta["citation"])


def source_of(header: dict) -> str:
    """Where a recording came from, in a few words."""
    if header["upstream"].startswith("scripted"):
        return f"recorded from the {header['upstream']} on {header['date']}"
    if header["upstream"] == "https://api.anthropic.com":
        return f"recorded from {header['model']} on {header['date']}"
    return f"recorded from {header['model']} at {header['upstream']} on {header['date']}"


# -- comparing a request with the recorded one --


def mask(value: Any, folders: list[str], ids: dict[str, str]) -> Any:
    """The value with what changes from run to run masked. Ids are numbered by where they first
    appear, so a result given to the wrong call still differs. A text of several lines becomes
    a list of its lines: a diff then shows the line that changed, not one long escaped string."""
    if isinstance(value, dict):
        return {key: mask(item, folders, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [mask(item, folders, ids) for item in value]
    if not isinstance(value, str):
        return value
    if ID.fullmatch(value):
        if value not in ids:
            ids[value] = f"<id {len(ids) + 1}>"
        return ids[value]
    for folder in sorted(folders, key=len, reverse=True):
        value = value.replace(folder, "<workdir>")
    value = CLOCK.sub("<time>", value)
    value = SHELL_IN_USE.sub("<shell> on <OS>", value)
    if "\n" in value:
        return value.split("\n")
    return value


def comparable(body: Any, folders: list[str]) -> str:
    return json.dumps(mask(body, folders, {}), indent=2, ensure_ascii=False, sort_keys=True)


def first_message(body: Any, folders: list[str]) -> str:
    """What names a conversation: its first message. A subagent's is its prompt; the main
    agent's, the user's first message, which every later request of the session repeats."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ""
    return comparable(body["messages"][:1], folders)


class Playback:
    """The recorded exchanges not played yet, and which of them an incoming request is."""

    def __init__(self, recording: Recording, workdir: Path) -> None:
        self.waiting = list(recording.exchanges)
        self.total = len(self.waiting)
        self.recorded_folders = [recording.header["workdir"]]
        self.live_folders = [str(workdir), str(workdir.resolve())]
        self.recorded = {
            exchange.number: comparable(exchange.body, self.recorded_folders)
            for exchange in self.waiting
        }
        self.conversation = {
            exchange.number: first_message(exchange.body, self.recorded_folders)
            for exchange in self.waiting
        }
        self._lock = threading.Lock()

    def claim(self, method: str, path: str, body: Any) -> tuple[Exchange | None, str]:
        """The recorded exchange this request is, taken off the list; or None and a diff
        against the request the recording has next in the same conversation."""
        live = comparable(body, self.live_folders)
        conversation = first_message(body, self.live_folders)
        with self._lock:
            same = [
                exchange
                for exchange in self.waiting
                if self.conversation[exchange.number] == conversation
            ]
            for exchange in same:
                if (exchange.method, exchange.path) == (method, path):
                    if self.recorded[exchange.number] == live:
                        self.waiting.remove(exchange)
                        return exchange, ""
            expected = same[0] if same else (self.waiting[0] if self.waiting else None)
        return None, self.difference(expected, f"{method} {path}", live)

    def difference(self, expected: Exchange | None, request: str, live: str) -> str:
        """`request`: the method and path, the diff's first line, so that a request to another
        endpoint shows what changed even when its body is the same."""
        if expected is None:
            shown = live.splitlines()
            more = [f"... ({len(shown) - LONGEST_SHOWN} more lines)"]
            lines = shown[:LONGEST_SHOWN] + (more if len(shown) > LONGEST_SHOWN else [])
            return (
                "[replay stopped: the recording has no more requests, and the script sent "
                "another one]\n" + "\n".join([request, *lines])
            )
        recorded = [f"{expected.method} {expected.path}",
                    *self.recorded[expected.number].splitlines()]
        diff = difflib.unified_diff(
            recorded,
            [request, *live.splitlines()],
            f"recorded request {expected.number}",
            "this script's request",
            n=DIFF_CONTEXT,
            lineterm="",
        )
        return (
            f"[replay stopped: request {expected.number} of the recording differs from what the "
            "script sent]\n" + "\n".join(diff)
        )


# -- sending the replies in the recorded order --


class Turnstile:
    """Lets the recorded replies out in the order they were recorded, across exchanges: each
    reply's start and each event of a stream waits until every step recorded before it has gone
    out. So two subagents finish in the order they did, whatever the threads do. A step whose
    request the script has not sent yet holds the later ones back; the script sends it once it
    has what came before, as it did. If nothing goes out for STALL seconds (a slow command, or
    a script that asks less than it did), the order is no longer kept for what came before."""

    def __init__(self, recording: Recording, max_pause: float) -> None:
        steps = []
        for exchange in recording.exchanges:
            if exchange.status == 0:
                continue  # never answered (the session ended while it ran): nothing to send
            times = [exchange.reply_at] + [event["at"] for event in exchange.events]
            for position, at in enumerate(times):
                steps.append((at, exchange.number, position))
        steps.sort()
        self.index = {(number, position): i for i, (_, number, position) in enumerate(steps)}
        self.times = [at for at, _, _ in steps]
        self.gone = [False] * len(steps)
        self.low = 0  # every step before this one has gone out
        self.last = 0.0  # when the last step to go out was recorded
        self.max_pause = max_pause
        self._changed = threading.Condition()

    def wait(self, step: int) -> None:
        with self._changed:
            while self.low < step:
                if not self._changed.wait(STALL):
                    self.let_through(step)
            pause = min(max(self.times[step] - self.last, 0.0), self.max_pause)
        time.sleep(pause)

    def let_through(self, step: int) -> None:
        for earlier in range(self.low, step):
            self.gone[earlier] = True
        self.advance()

    def open(self) -> None:
        """Keep no order from now on: the replay has stopped, the steps still due never come."""
        with self._changed:
            self.let_through(len(self.gone))

    def went(self, step: int) -> None:
        with self._changed:
            self.gone[step] = True
            self.last = max(self.last, self.times[step])
            self.advance()

    def advance(self) -> None:
        while self.low < len(self.gone) and self.gone[self.low]:
            self.low += 1
        self._changed.notify_all()


class ReplayHandler(BaseHTTPRequestHandler):
    server_version = "replay-server"

    def do_POST(self) -> None:
        self.server.owner.answer(self)

    do_GET = do_PUT = do_DELETE = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the screen belongs to the script


class ReplayServer(LoopbackServer):
    """Answers each request with the recorded reply; from the first request that differs from
    the recording on, an error instead."""

    handler = ReplayHandler

    def __init__(self, recording: Recording, workdir: Path, max_pause: float) -> None:
        self.playback = Playback(recording, workdir)
        self.turnstile = Turnstile(recording, max_pause)
        self.difference = ""  # the first request that differed, as a diff
        self.ended_early = False  # a request came that the recording has no reply to
        self._lock = threading.Lock()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        body = json_or_text(raw.decode("utf-8", errors="replace"))
        exchange, difference = self.playback.claim(handler.command, handler.path, body)
        with self._lock:
            if exchange is None and not self.difference:
                self.difference = difference
            if exchange is not None and exchange.status == 0:
                self.ended_early = True  # the session was stopped during this request
            stopped = bool(self.difference) or self.ended_early
        if stopped:
            self.turnstile.open()  # what is still waiting for its turn goes out now
            # An error the script shows and recovers from, as from any refused request: the
            # turn ends, and nothing after the difference is played.
            answer_stopped(handler, self.ended_early and not self.difference)
            return
        steps = [
            self.turnstile.index[(exchange.number, position)]
            for position in range(len(exchange.events) + 1)
        ]
        try:
            self.send(handler, exchange, steps)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the script went away (stopped at another request's difference)
        finally:
            for step in steps:
                self.turnstile.went(step)  # a reply cut short must not hold the others back

    def send(self, handler: BaseHTTPRequestHandler, exchange: Exchange, steps: list[int]) -> None:
        self.turnstile.wait(steps[0])
        handler.send_response(exchange.status)
        for name, value in replay_headers(exchange.reply_headers).items():
            handler.send_header(name, value)
        if not exchange.events:
            payload = json.dumps(exchange.reply_body, ensure_ascii=False).encode()
            handler.send_header("content-length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        handler.end_headers()
        handler.wfile.flush()
        self.turnstile.went(steps[0])
        for event, step in zip(exchange.events, steps[1:], strict=True):
            self.turnstile.wait(step)
            data = event["data"]
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            handler.wfile.write(f"event: {event['event']}\ndata: {text}\n\n".encode())
            handler.wfile.flush()
            self.turnstile.went(step)


def replay_headers(recorded: dict) -> dict:
    headers = {name: value for name, value in recorded.items() if name != "retry-after"}
    if "retry-after" in recorded or "retry-after-ms" in recorded:
        # The SDK waits as long as the reply says: the room need not wait as the recording did.
        headers["retry-after-ms"] = str(RETRY_PAUSE_MS)
    return headers


def answer_stopped(handler: BaseHTTPRequestHandler, ended: bool) -> None:
    why = (
        "the recording ends here: the session was stopped during this request"
        if ended
        else "this request differs from the recording (the diff follows when the script ends)"
    )
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": f"replay: {why}"},
    }
    payload = json.dumps(body).encode()
    handler.send_response(400)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


# -- running a replay --


def starting_folder(recording: Recording, workdir: Path) -> None:
    """Put the files the recording kept into the work directory, as they were at the start."""
    write_files(workdir, recording.header.get("files") or {})


def replay_session(
    path: Path,
    script: Path | None,
    workdir: Path,
    max_pause: float = MAX_PAUSE,
    run: Callable[[Path, list[str], dict, str | None], int] = run_script,
) -> int:
    """Run the script against the recording in workdir; 0 if it asked what the recording has
    (and the script's own exit code was 0), 1 at the first difference."""
    recording = load_recording(path)
    header = recording.header
    script = script or ROOT / header["script"]
    starting_folder(recording, workdir)
    server = ReplayServer(recording, workdir, max_pause)
    env = {
        **os.environ,
        **loopback_env(server.start()),
        **header["settings"],
        "ANTHROPIC_API_KEY": "offline-replay",  # the script wants one; nothing checks it
    }
    print(
        f"[replay of {Path(path).name}, {source_of(header)}: offline, no key; "
        f"{Path(script).name} works in {workdir}]",
        flush=True,
    )
    if header["files"] is None:
        missing = "[replay: the recording kept no copy of its work directory; see --workdir]"
        print(missing, flush=True)
    task = [header["task"]] if header["task"] else []
    try:
        code = run(
            script,
            ["--workdir", str(workdir), *script_args(header.get("args", [])), *task],
            env,
            None if task else header["typed"],
        )
    finally:
        server.stop()
    for problem in check_rules(recording):
        print(f"[replay: {problem}]", file=sys.stderr, flush=True)
    if server.difference:
        print(server.difference, flush=True)
        return 1
    played = server.playback.total - len(server.playback.waiting)
    if server.playback.waiting and not server.ended_early:
        print(
            f"[replay stopped: the script ended after {played} of the "
            f"{server.playback.total} recorded requests]",
            flush=True,
        )
        return 1
    return code


# -- our rules against the recording --


def check_rules(recording: Recording) -> list[str]:
    """Where our rules and the API that answered disagree, one line each. Our rules here are
    those of scripted/rules.py and the model table of scripted/models.py; what the scripted
    server checks against its own state (its signatures, its paused replies) cannot apply to
    another server's replies."""
    problems = []
    for exchange in recording.exchanges:
        if (exchange.method, exchange.path.split("?")[0]) != ("POST", MESSAGES):
            continue
        errors = rule_errors(exchange.body)
        if "anthropic-version" not in exchange.headers:
            errors.append("anthropic-version: header is required")
        if errors and exchange.status == 200:
            problems.append(
                "our rules reject a request the real API accepted: "
                f"request {exchange.number}: {'; '.join(errors)}"
            )
        elif not errors and exchange.status == 400:
            error = (final_message(exchange) or {}).get("error", {})
            problems.append(
                "the real API refused a request our rules accept: "
                f"request {exchange.number}: {error.get('message', 'HTTP 400')}"
            )
    return problems


def rule_errors(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return ["request body must be a JSON object"]
    errors = validate_request(body)
    if errors:
        return errors  # the rules below assume a well-formed request
    model = MODELS.get(body["model"])
    if model is None:
        return [f"model: {body['model']!r} is not in scripted/models.py"]
    return model_errors(body, model) + cache_breakpoint_errors(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripted.replay", description=__doc__.splitlines()[0]
    )
    parser.add_argument("files", nargs="+", type=Path, help="recordings (.jsonl)")
    parser.add_argument(
        "--check",
        action="store_true",
        required=True,
        help="check every recorded request against scripted/rules.py (replay with "
        "python -m scripted.demo --replay FILE)",
    )
    args = parser.parse_args(argv)
    failed = False
    for path in args.files:
        recording = load_recording(path)
        problems = check_rules(recording)
        for problem in problems:
            print(f"{path}: {problem}")
        if not problems:
            count = len(recording.exchanges)
            print(f"{path}: our rules agree with the API on all {count} requests")
        failed = failed or bool(problems)
    return 1 if failed else 0


def replay_in_folder(
    path: Path, script: Path | None, workdir: Path | None, max_pause: float
) -> int:
    """The replay in workdir, or in a fresh temporary folder that is removed afterwards."""
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        return replay_session(path, script, workdir.resolve(), max_pause)
    with tempfile.TemporaryDirectory(prefix="agent-replay-") as folder:
        return replay_session(path, script, Path(folder).resolve(), max_pause)


if __name__ == "__main__":
    sys.exit(main())

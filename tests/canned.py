"""An endpoint that sends what it is given, byte for byte: streams the scripted server never
sends (it follows the API's rules), and the replies a real stack sent (tests/recordings/real/).
The real SDK reads them over real HTTP."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

START = {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "smollm2", "content": [],
    "stop_reason": None, "stop_sequence": None,
    "usage": {"input_tokens": 0, "output_tokens": 0}}}
STOP = {"type": "message_stop"}


def delta(stop_reason: str | None, **usage) -> dict:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 0, **usage}}


def text_block(text: str) -> list[dict]:
    return [{"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": text}},
            {"type": "content_block_stop", "index": 0}]


def tool_block(partial_json: str, name: str = "bash") -> list[dict]:
    return [{"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "call_1", "name": name, "input": {}}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": partial_json}},
            {"type": "content_block_stop", "index": 0}]


POLL = 0.02  # seconds: how soon the server notices stop() (the default 0.5 s, at every test's end)


class Canned:
    """An endpoint that answers each POST with the next of `replies`, byte for byte, and keeps
    each request body. A reply is a stream (a list of events, after HTTP 200) or an error
    ({"status": 500, "body": {...}}, sent with retry-after-ms 0: the SDK's retries of it come at
    once, which changes when they come and nothing else)."""

    def __init__(self) -> None:
        self.replies: list[list[dict] | dict] = []
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                owner.requests.append(json.loads(body))
                events = owner.replies.pop(0)
                if isinstance(events, dict):
                    self.send_error_reply(events)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                stream = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                 for event in events)
                try:
                    self.wfile.write(stream.encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the SDK stopped reading a stream it could not read, as it may

            def send_error_reply(self, reply: dict) -> None:
                payload = json.dumps(reply["body"]).encode()
                self.send_response(reply["status"])
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.send_header("retry-after-ms", "0")
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(POLL,), daemon=True).start()
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(name="canned")
def canned_endpoint():
    """A Canned endpoint for one test: import `canned_endpoint`, ask for `canned`."""
    server = Canned()
    yield server
    server.stop()

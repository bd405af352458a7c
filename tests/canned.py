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


class Canned:
    """An endpoint that answers each POST with the next stream of `replies`, byte for byte, and
    keeps each request body."""

    def __init__(self) -> None:
        self.replies: list[list[dict]] = []
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                owner.requests.append(json.loads(body))
                events = owner.replies.pop(0)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for event in events:
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                     .encode())

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
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

"""One model reply, streamed: the optional request features, and the failures a retry fixes.

    stream_reply(client, request, options, screen, calls)
      each request spends one of the turn's model calls (a CallBudget of plumbing/turns.py)
      request + the optional features the endpoint accepts (RequestOptions)
      stream: thinking -> screen.thinking (dimmed), text -> screen.text
        an endpoint refuses an optional feature (400)  -> drop it, one line, the same request again
        `event: error` inside the 200 stream            -> the same request again, like a 529
        max_tokens inside a tool call                   -> once more, with room up to the maximum

The history is never touched here: a retried request is the same request, so whatever stopped
the first attempt leaves the conversation as it was.
"""

import re
import threading
import time

import anthropic

from plumbing.turns import CallBudget

# Thinking, on 5.x models on by default, and shown. On Sonnet 5.5 the notes the model writes
# between tool calls come back inside thinking blocks, and the default display is "omitted": a
# client that shows only text goes quiet between tool calls. Two settings bring the notes back
# (https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5): `between_tools`
# also turns off the thinking before the first tool call, and Sonnet 5 does not take it;
# adaptive thinking with display "summarized" keeps that thinking, returns its text, and is
# valid on 5.5 and 5 alike (https://platform.claude.com/docs/en/build-with-claude/thinking).
THINKING = {"type": "adaptive", "display": "summarized"}
# Automatic prompt caching: the breakpoint moves to the last block as the conversation grows,
# so each call reads the whole earlier conversation from the cache.
# https://platform.claude.com/docs/en/build-with-claude/prompt-caching
AUTOMATIC_CACHING = {"type": "ephemeral"}
# The largest max_tokens of each model, for the retry of a reply cut inside a tool call; a
# model not listed gets UNKNOWN_MAX_OUTPUT, the smallest of current models.
# https://platform.claude.com/docs/en/about-claude/models/overview
MAX_OUTPUT = {"claude-sonnet-5-5": 128_000, "claude-sonnet-5": 128_000,
              "claude-opus-5-5": 128_000, "claude-haiku-5-5": 128_000,
              "claude-sonnet-4-6": 128_000, "claude-haiku-4-5": 64_000}
UNKNOWN_MAX_OUTPUT = 64_000
# An `event: error` in a 200 stream is retried like the SDK retries a 529 or a 500: the same
# request, a short wait that doubles, and as many attempts as the SDK makes.
# https://platform.claude.com/docs/en/build-with-claude/streaming#error-events
STREAM_RETRIES = anthropic.DEFAULT_MAX_RETRIES
STREAM_RETRY_DELAY = 0.5  # seconds before the first retry
RETRYABLE_STREAM_ERRORS = ["overloaded_error", "api_error", "rate_limit_error"]
# The field a 400 names first: "cache_control: Extra inputs are not permitted",
# "thinking.display: ...". A thinking block in the history is named as messages.N..., never here.
REFUSED_FIELD = re.compile(r"\A(cache_control|thinking)(\.display)?\b")


class RequestOptions:
    """The optional parts of every request: thinking shown, automatic caching. An endpoint that
    refuses one (a compatible endpoint in front of another cloud, a model without adaptive
    thinking) gets every later request without it, and one line says so."""

    def __init__(self, screen) -> None:
        self.screen = screen
        self.lock = threading.Lock()  # subagents call the model from their own threads
        self.optional = {"thinking": dict(THINKING), "cache_control": dict(AUTOMATIC_CACHING)}

    def added_to(self, request: dict) -> dict:
        with self.lock:
            return {**request, **self.optional}

    def drop_refused(self, exc: anthropic.BadRequestError, sent: dict) -> bool:
        """If the 400 names an optional field the request had, stop sending it and say so once.
        True: send the request again without it."""
        match = REFUSED_FIELD.match(error_message(exc))
        if match is None:
            return False
        field, display = match[1], bool(match[2])
        if field not in sent or (display and "display" not in sent[field]):
            return False  # not ours: going on without it would change nothing
        with self.lock:
            if display and "display" in self.optional.get("thinking", {}):
                del self.optional["thinking"]["display"]
                self.screen.alert("the endpoint refused thinking.display, so the model's "
                                  "thinking is not shown; going on without it")
            elif not display and field in self.optional:
                del self.optional[field]
                self.screen.alert(f"the endpoint refused {field} ({FEATURE_LOST[field]}); "
                                  "going on without it")
        return True  # dropped now, or by another thread since this request was made


FEATURE_LOST = {"thinking": "the model thinks as its default says, and nothing of it is shown",
                "cache_control": "no prompt caching: every call pays for the whole prompt"}


def stream_reply(client: anthropic.Anthropic, request: dict, options: RequestOptions,
                 screen, calls: CallBudget | None = None) -> anthropic.types.Message:
    """One model reply: streamed to the screen, retried where a retry fixes it (see above). Each
    request, a retry too, spends one of the turn's `calls`: past the last, the turn stops."""
    broken_streams = 0
    while True:
        if calls is not None:
            calls.spend()
        sent = options.added_to(request)
        try:
            response = stream_once(client, sent, screen)
        except anthropic.BadRequestError as exc:
            if not options.drop_refused(exc, sent):
                raise
            continue
        except anthropic.APIStatusError as exc:
            if not broke_off(exc) or broken_streams == STREAM_RETRIES:
                raise
            broken_streams += 1
            screen.alert(f"retrying: the stream broke off ({error_message(exc)}); attempt "
                         f"{broken_streams + 1} of {STREAM_RETRIES + 1}")
            time.sleep(STREAM_RETRY_DELAY * 2 ** (broken_streams - 1))
            continue
        if not cut_inside_tool_call(response):
            return response
        room = MAX_OUTPUT.get(request["model"], UNKNOWN_MAX_OUTPUT)
        if room <= request["max_tokens"]:  # asked with all of it already: once is enough
            return response
        cut_at = request["max_tokens"]
        screen.alert(f"the reply was cut inside a tool call at max_tokens={cut_at:,}; the cut "
                     f"call is not run; asking again with room for {room:,}")
        request = {**request, "max_tokens": room}


def stream_once(client: anthropic.Anthropic, request: dict, screen) -> anthropic.types.Message:
    """Stream one reply: its thinking dimmed and set apart, its text as it comes."""
    with client.messages.stream(**request) as stream:
        for event in stream:
            if event.type == "thinking":
                screen.thinking(event.thinking)
            elif event.type == "text":
                screen.text(event.text)
            elif event.type == "content_block_stop" and event.content_block.type == "thinking":
                screen.end_thinking()  # the next block starts on a line of its own
        return stream.get_final_message()


def cut_inside_tool_call(response: anthropic.types.Message) -> bool:
    """The reply ran out of max_tokens while it wrote a tool call: its input may be cut."""
    if response.stop_reason != "max_tokens" or not response.content:
        return False
    return response.content[-1].type == "tool_use"


def broke_off(exc: anthropic.APIStatusError) -> bool:
    """An `event: error` inside a stream that had begun with HTTP 200, of a kind worth a retry."""
    if exc.status_code != 200:
        return False
    return error_type(exc) in RETRYABLE_STREAM_ERRORS


def error_type(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("type", ""))
    return ""


def error_message(exc: anthropic.APIStatusError) -> str:
    """The API's own message ("cache_control: Extra inputs are not permitted"), else the text."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message") or body["error"].get("type", ""))
    return str(exc)

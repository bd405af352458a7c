"""One model reply, streamed: the optional request features, and the failures a retry fixes.

    stream_reply(client, request, options, screen, calls)
      each request spends one of the turn's model calls (a CallBudget of plumbing/turns.py)
      request + the optional features the endpoint accepts (RequestOptions)
      stream: thinking -> screen.thinking (dimmed), text -> screen.text
        an endpoint refuses an optional feature (400 or 422 naming it, however worded)
                                                        -> drop it, one line, the same request again
        `event: error` inside the 200 stream            -> the same request again, like a 529
        max_tokens inside a tool call                   -> once more, with room up to the maximum
        a reply that is no reply: empty, cut before message_stop or a stop reason, or a stream
        the SDK cannot read                             -> BadReply: one line naming the endpoint
      the usage as the endpoint reported it (ReportedUsage): None where it sent no figure

The history is never touched here: a retried request is the same request, so whatever stopped
the first attempt leaves the conversation as it was.
"""

import json
import re
import threading
import time
from dataclasses import dataclass

import anthropic

from plumbing.replies import AgentStopped, tool_results_were_last
from plumbing.screen import ReportedUsage
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
# Sent with the tools: the API's default when tools are given, so Claude answers the same, and
# the same on every request, so the cached prefix stays the same. Some OpenAI-format servers
# leave the tools out of the prompt without it (llama-cpp-python). Only a forced choice ("any",
# "tool") is refused by some models; "auto" is valid on every model and with thinking.
# https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use
AUTO_TOOL_CHOICE = {"type": "auto"}
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
# A request field named in an error's message, where the body names none (OpenAI's `param`): a
# path at its start ("thinking.display: Extra inputs are not permitted", as the Messages API
# words it), else a quoted name ("does not support parameters: ['reasoning_effort']", as
# LiteLLM words it). A path names one field: "messages.1.content.0: Invalid `signature` in
# `thinking` block" is about a block of the history, not the request's `thinking` field.
FIELD_PATH = r"[a-z_]+(?:\.[a-z0-9_]+)*"
LEADING_FIELD = re.compile(rf"\A({FIELD_PATH})\s*:")
QUOTED_FIELD = re.compile(rf"[`'\"]({FIELD_PATH})[`'\"]")
REFUSAL_STATUSES = [400, 422]  # a request the endpoint will not take: 422 from FastAPI servers
# What an endpoint may call each optional field. LiteLLM's OpenAI-format route turns `thinking`
# into `reasoning_effort`, and refuses that by its own name (its UnsupportedParamsError).
FIELD_ALIASES = {"reasoning_effort": "thinking", "reasoning": "thinking"}


@dataclass(frozen=True)
class APIErrorBody:
    """What an endpoint's error says, whichever shape it comes in: the Messages API's
    {"type": "error", "error": {"type", "message"}}; OpenAI's {"error": {"message", "type",
    "param", "code"}} (llama.cpp, LiteLLM's proxy); {"error": "..."}, {"message": "..."} or
    {"detail": "..."} from other servers; or a body that is only text."""

    status: int | None  # None: no HTTP answer at all (a connection that failed)
    type: str  # "invalid_request_error", ...; "" where the body gives none
    message: str
    fields: tuple[str, ...]  # the request fields it names: "thinking.display", "max_tokens", ...

    def __str__(self) -> str:
        if self.type and self.message:
            return f"{self.type}: {self.message}"
        return self.message or self.type

    def names(self, field: str) -> bool:
        """Whether the error is about this top-level field (or a field inside it)."""
        return any(top_level(name) == field for name in self.fields)


def read_api_error(exc: anthropic.APIError) -> APIErrorBody:
    """The one reader of an API error, for every place that decides or says something by it."""
    kind, message, named = read_body(getattr(exc, "body", None))
    message = message or str(exc)
    named = [name for name in named if name]
    named = named or LEADING_FIELD.findall(message) or QUOTED_FIELD.findall(message)
    status = getattr(exc, "status_code", None)
    return APIErrorBody(status, kind, message, tuple(named))


def read_body(body) -> tuple[str, str, list[str]]:
    """An error body's type, message and the fields it names, in each shape (see APIErrorBody)."""
    if not isinstance(body, dict):
        return "", known(body), []
    error = body.get("error")
    if isinstance(error, dict):
        return known(error.get("type")), known(error.get("message")), [known(error.get("param"))]
    return "", known(error or body.get("message") or body.get("detail")), []


def known(value) -> str:
    """A value of an error body as text; LiteLLM writes a missing one as "None"."""
    if value is None or str(value) in ("None", "null"):
        return ""
    return str(value)


def top_level(name: str) -> str:
    """The top-level request field a name stands for: thinking.type -> thinking. A block's
    breakpoint stands for prompt caching as a whole: system.0.cache_control -> cache_control."""
    if name.endswith(".cache_control"):
        return "cache_control"
    first = name.split(".")[0]
    return FIELD_ALIASES.get(first, first)


class RequestOptions:
    """The optional parts of every request: thinking shown, automatic caching. An endpoint that
    refuses one (a compatible endpoint in front of another cloud, a model without adaptive
    thinking) gets every later request without it, and one line says so."""

    def __init__(self, screen) -> None:
        self.screen = screen
        self.lock = threading.Lock()  # subagents call the model from their own threads
        self.optional = {"thinking": dict(THINKING), "cache_control": dict(AUTOMATIC_CACHING),
                         "tool_choice": dict(AUTO_TOOL_CHOICE)}

    def added_to(self, request: dict) -> dict:
        with self.lock:
            if "cache_control" not in self.optional:  # refused: the system's breakpoint goes too
                request = without_system_breakpoint(request)
            added = {**request, **self.optional}
        if not request.get("tools"):  # the API refuses a tool_choice without tools
            added.pop("tool_choice", None)
        return added

    def drop_refused(self, exc: anthropic.APIStatusError, sent: dict) -> bool:
        """If the endpoint refused the request (400, 422) and its error names an optional field
        the request had, stop sending that field and say so once. Decided by the field the
        error names, not by its wording, which differs from endpoint to endpoint.
        True: send the request again without it."""
        error = read_api_error(exc)
        if error.status not in REFUSAL_STATUSES:
            return False
        field = refused_field(error, sent)
        if not field:
            return False  # not ours: going on without it would change nothing
        with self.lock:
            if field == "thinking.display" and "display" in self.optional.get("thinking", {}):
                del self.optional["thinking"]["display"]
                self.screen.alert("the endpoint refused thinking.display, so the model's "
                                  "thinking is not shown; going on without it")
            elif field in self.optional:
                del self.optional[field]
                self.screen.alert(f"the endpoint refused {field} ({FEATURE_LOST[field]}); "
                                  "going on without it")
        return True  # dropped now, or by another thread since this request was made


def refused_field(error: APIErrorBody, sent: dict) -> str:
    """The optional field of the request `sent` that the error names: "thinking.display",
    "thinking" or "cache_control"; "" when it names none of them."""
    for name in error.fields:
        if name == "thinking.display":
            if "display" in sent.get("thinking", {}):
                return name
            continue
        field = top_level(name)
        if field in FEATURE_LOST and field in sent:
            return field
    return ""


def without_system_breakpoint(request: dict) -> dict:
    """The request with no cache_control on its system blocks (v5 marks the system's end)."""
    if not isinstance(request.get("system"), list):
        return request
    blocks = [{key: value for key, value in block.items() if key != "cache_control"}
              for block in request["system"]]
    return {**request, "system": blocks}


FEATURE_LOST = {"thinking": "the model thinks as its default says, and nothing of it is shown",
                "cache_control": "no prompt caching: every call pays for the whole prompt",
                "tool_choice": "the server decides whether the model sees the tools"}


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
        except anthropic.APIStatusError as exc:
            if options.drop_refused(exc, sent):
                continue
            if not broke_off(exc) or broken_streams == STREAM_RETRIES:
                raise
            broken_streams += 1
            screen.alert(f"retrying: the stream broke off ({read_api_error(exc)}); attempt "
                         f"{broken_streams + 1} of {STREAM_RETRIES + 1}")
            time.sleep(STREAM_RETRY_DELAY * 2 ** (broken_streams - 1))
            continue
        response.usage = reported_usage(response.usage, sent)
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
    """Stream one reply: its thinking dimmed and set apart, its text as it comes. A reply that
    is no reply (see BadReply) raises BadReply, naming the endpoint."""
    host = client.base_url.netloc.decode()
    seen = set()  # the kinds of event that came: message_start, message_stop, ...
    with client.messages.stream(**request) as stream:
        events = iter(stream)
        while True:
            try:
                event = next(events)
            except StopIteration:
                break
            except anthropic.APIError:
                raise  # an error the endpoint sent: retried, or explained, by its status
            except Exception as exc:  # noqa: BLE001 - whatever the SDK raised while reading
                raise BadReply(unreadable_stream(host, exc, seen)) from exc
            seen.add(event.type)
            if event.type == "message_delta":
                end_usage = event.usage
            show(event, screen)
        if "message_start" not in seen:
            raise BadReply(no_reply(host, "HTTP 200 and then no message at all"))
        response = stream.get_final_message()
    if "message_delta" in seen:
        drop_placeholders(response.usage, end_usage)
    fault = reply_fault(response, seen, request)
    if fault:
        raise BadReply(no_reply(host, fault))
    return response


def drop_placeholders(usage: anthropic.types.Usage, end_usage) -> None:
    """LiteLLM's OpenAI-format route sends every figure as 0 in message_start, then the counts
    it has in message_delta: input and output, no cache figure (tests/recordings/real/). Where
    the end gives the input but leaves a cache figure out, that figure's 0 was a placeholder,
    not a count: it becomes None, not reported, rather than a claimed cache miss."""
    if end_usage.input_tokens is None:
        return  # the counts came at the start (Claude's API): its 0 is a count
    for name in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if getattr(end_usage, name, None) is None and getattr(usage, name) == 0:
            setattr(usage, name, None)


def show(event, screen) -> None:
    if event.type == "thinking":
        screen.thinking(event.thinking)
    elif event.type == "text":
        screen.text(event.text)
    elif event.type == "content_block_stop" and event.content_block.type == "thinking":
        screen.end_thinking()  # the next block starts on a line of its own


class BadReply(AgentStopped):
    """The endpoint answered 200, but what came is no reply: nothing in it, a stream that stops
    before `message_stop` or without a stop reason, or one the SDK cannot read (a tool call's
    input that is not JSON, a block it never started). Claude's API sends none of these (an
    empty reply right after tool results aside, which final_answer() handles), so the endpoint
    (a gateway, or the server behind it) is the likely cause, not the model."""


def reply_fault(response: anthropic.types.Message, seen: set, request: dict) -> str:
    """What is wrong with a reply that streamed to its end, in a few words; "" if nothing is.
    An empty reply right after tool results is the model's (final_answer() says so): the API
    documents it, and it comes with a stop reason."""
    if "message_stop" not in seen:
        return "a stream that ended before message_stop"
    if response.stop_reason is None:
        return "a reply without a stop reason"
    ended = response.stop_reason in NORMAL_END  # a refusal or max_tokens is the loop's to say
    if ended and nothing_in(response) and not tool_results_were_last(request["messages"]):
        return f"an empty reply (stop reason {response.stop_reason}, no text, no tool call)"
    return ""


def nothing_in(response: anthropic.types.Message) -> bool:
    """No block, or only text blocks with not one character: LiteLLM's OpenAI-format route sends
    one empty text block when the server behind it failed after its 200 (tests/recordings/real/).
    A reply of blank text is the model's own: the loop keeps nothing of it and goes on."""
    return all(block.type == "text" and block.text == "" for block in response.content)


NORMAL_END = ["end_turn", "stop_sequence"]


def no_reply(host: str, what: str) -> str:
    return (f"the endpoint at {host} sent {what}: the endpoint, or the server behind it, is the "
            f"likely cause, not the model; its log says why. {WHAT_TO_TRY}")


def unreadable_stream(host: str, exc: Exception, seen: set) -> str:
    first_line = (str(exc).splitlines() or [""])[0][:UNREADABLE_SHOWN]
    after = "its first event" if not seen else "its events"
    return (f"the endpoint at {host} sent a stream the SDK cannot read ({type(exc).__name__}: "
            f"{first_line}, in {after}): the endpoint, or the server behind it, is the likely "
            f"cause, not the model; its log says why. {WHAT_TO_TRY}")


# Behind a gateway, a local server whose chat template cannot take the request fails after the
# gateway's 200: llama-cpp-python's own format for tools refuses a streamed automatic tool
# choice, and a GGUF's template that adds text to a message's content cannot take a list of
# blocks (both recorded in tests/recordings/real/). Its chat format is the setting to change.
WHAT_TO_TRY = ("Try again, or change the server's chat format (llama-cpp-python: --chat_format; "
               "llama-server: --jinja), MODEL_ID or ANTHROPIC_BASE_URL")


UNREADABLE_SHOWN = 200  # characters of the SDK's error: it may quote a whole tool input


def reported_usage(usage: anthropic.types.Usage, sent: dict) -> ReportedUsage:
    """The usage as the endpoint sent it (the SDK leaves a figure it never got as None), with
    about how many tokens the request held and whether it asked for caching: the screen's usage
    line says where the two disagree (plumbing/screen.py, usage_line)."""
    prompt = {name: sent.get(name) for name in ("system", "tools", "messages")}
    size = len(json.dumps(prompt, ensure_ascii=False, default=as_data)) // CHARACTERS_PER_TOKEN
    return ReportedUsage.construct(**usage.to_dict(), sent_estimate=size,
                                   cache_asked="cache_control" in sent)


CHARACTERS_PER_TOKEN = 4  # a rough count of what was sent: English text, JSON


def as_data(block) -> dict:
    """A block of the SDK's (a reply's block kept in the history) as the JSON it is sent as."""
    return block.to_dict()


def cut_inside_tool_call(response: anthropic.types.Message) -> bool:
    """The reply ran out of max_tokens while it wrote a tool call: its input may be cut."""
    if response.stop_reason != "max_tokens" or not response.content:
        return False
    return response.content[-1].type == "tool_use"


def broke_off(exc: anthropic.APIStatusError) -> bool:
    """An `event: error` inside a stream that had begun with HTTP 200, of a kind worth a retry."""
    if exc.status_code != 200:
        return False
    return read_api_error(exc).type in RETRYABLE_STREAM_ERRORS

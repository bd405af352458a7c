"""Start-up checks, the API client's retry notices, and failures explained in one line each."""

import argparse
import functools
import json
import os
import re
import sys
import threading
from pathlib import Path

import anthropic
import httpx2

from plumbing.budget import cut_short, make_room, tool_results_size
from plumbing.commands import end_every_process_started
from plumbing.model import REFUSAL_STATUSES, BadReply, read_api_error
from plumbing.replies import AgentStopped, Refused, room_made
from plumbing.sandbox import remove_private_folders
from plumbing.screen import Screen

API_ERRORS = [  # (SDK exception, what the user should do), most specific first
    (anthropic.AuthenticationError, "the API rejected the key (401): check ANTHROPIC_API_KEY"),
    (anthropic.APIConnectionError,
     "could not reach the API at {url}{retried}: check ANTHROPIC_BASE_URL and your network"),
    (anthropic.RateLimitError, "rate limited (429){retried}: wait a minute, then try again"),
    (anthropic.NotFoundError, "not found (404): is MODEL_ID={model} offered at {url}?"),
    (anthropic.APIStatusError, "the API answered {status}{retried}: {message}"),
]
RETRY_COUNT_HEADER = "x-stainless-retry-count"  # the SDK numbers each attempt of a request
PlainHelp = argparse.RawDescriptionHelpFormatter  # --help prints the docstring as it is written
ALERT_LIMIT = 1000  # characters of an error shown to the user: an error may echo a huge input


def with_retry_notices(screen: Screen, max_retries: int = anthropic.DEFAULT_MAX_RETRIES):
    """An HTTP client for the SDK that shows one line for each retry the SDK makes: why, and
    which attempt. It watches requests and responses through httpx's event hooks, a public
    interface, rather than the SDK's log text."""
    last_failure = threading.local()

    def on_response(response) -> None:
        last_failure.why = ""
        if retryable(response):
            last_failure.why = f"the API answered {response.status_code}"

    def on_request(request) -> None:
        attempt = int(request.headers.get(RETRY_COUNT_HEADER, "0") or 0)
        if attempt > 0:
            why = getattr(last_failure, "why", "") or "no answer"
            screen.alert(f"retrying: {why}; attempt {attempt + 1} of {max_retries + 1}")
        last_failure.why = ""

    return anthropic.DefaultHttpxClient(event_hooks={"request": [on_request],
                                                     "response": [on_response]},
                                        verify=trusted_certificates())


@functools.cache
def trusted_certificates():
    """The certificates a server must be signed by, as the SDK's HTTP library finds them
    (httpx's public create_ssl_context). Reading them takes about 15 ms, so a program reads
    them once, however many clients it makes (a test run makes a thousand)."""
    return httpx2.create_ssl_context()


def retryable(response) -> bool:
    """Whether the SDK retries this answer: its documented rule (408, 409, 429, 5xx), or what
    the server says in x-should-retry."""
    should_retry = response.headers.get("x-should-retry")
    if should_retry in ("true", "false"):
        return should_retry == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def explain_api_error(exc: anthropic.APIError) -> str:
    """One line: what failed, and what the user can do about it."""
    error = read_api_error(exc)
    request = failed_request(exc)
    if refused_max_tokens(exc):
        return (f"the endpoint refused max_tokens={sent_field(request, 'max_tokens')} "
                f"({error}): set MAX_TOKENS lower, in the environment or .env (a local "
                "server's limit is its context size)")
    hint = "API error: {message}"
    for kind, text in API_ERRORS:
        if isinstance(exc, kind):
            hint = text
            break
    retried = ""
    retries = retries_taken(request)
    if retries:
        retried = f", still after {retries} retries"
    url = "the API"
    if request is not None:
        url = f"{request.url.scheme}://{request.url.netloc.decode()}"
    said = hint.format(url=url, model=sent_field(request, "model"), status=error.status or "?",
                       retried=retried, message=error)
    if (error.status or 0) < 500 or request is None or request.url.host == CLAUDE_API_HOST:
        return said
    # A gateway's 500 may quote a whole request back (LiteLLM in front of llama-cpp-python
    # quoted v5's system prompt): the start of it, then whose fault it is and what to try.
    return (f"{bounded(said, SERVER_ERROR_SHOWN)}; the endpoint at {request.url.netloc.decode()}, "
            "or the server behind it, failed on this request: its log says why; try again, or "
            "another MODEL_ID or ANTHROPIC_BASE_URL")


CLAUDE_API_HOST = "api.anthropic.com"
SERVER_ERROR_SHOWN = 400  # characters of a server error's message, before what to try


def failed_request(exc: anthropic.APIError):
    try:
        return exc.request
    except (AttributeError, RuntimeError):
        return None


def retries_taken(request) -> int:
    if request is None:
        return 0
    try:
        return int(request.headers.get(RETRY_COUNT_HEADER, "0"))
    except ValueError:
        return 0


def refused_max_tokens(exc: anthropic.APIError) -> bool:
    """The endpoint refused the request's max_tokens: its error names the field ("max_tokens:
    ...", vLLM's "'max_tokens' ... is too large"), or quotes the number the request sent
    (llama.cpp: "request (64000 tokens) exceeds the available context size (32768 tokens)").
    Sizing the request down instead would guess the limit from the wording, and on a local
    server the prompt shares that room: MAX_TOKENS is the setting that fixes it for good."""
    error = read_api_error(exc)
    if error.status not in REFUSAL_STATUSES:
        return False
    sent = sent_field(failed_request(exc), "max_tokens")
    return error.names("max_tokens") or sent in NUMBER.findall(error.message.replace(",", ""))


NUMBER = re.compile(r"\d+")


def sent_field(request, name: str) -> str:
    """A field of the request as it was sent ("?" if it cannot be read)."""
    try:
        return str(json.loads(request.content)[name])
    except (AttributeError, TypeError, ValueError, KeyError, RuntimeError):
        return "?"


def recover_from(exc: BaseException, messages: list, before: list, screen: Screen,
                 stopped: threading.Event) -> int:
    """Say in one line why a turn failed, keep the history valid, and return an exit code."""
    if isinstance(exc, BadReply):  # the broken reply was never added: the history is valid
        screen.alert(f"error: {bounded(str(exc))}; your conversation is kept")
        return 1
    if isinstance(exc, AgentStopped):  # the round cap, max_tokens, a refusal: the history is valid
        screen.alert(f"stopped: {exc}; your conversation is kept: say how to go on")
        return 1
    if isinstance(exc, KeyboardInterrupt):  # every call was answered, so the history stays
        stopped.set()  # commands of other threads stop too: nothing may change a file after this
        screen.alert("interrupted: the turn stopped here; your conversation is kept")
        return 130
    if isinstance(exc, Refused):  # the docs: take the refused exchange out of the context
        messages[:] = before
        screen.alert(f"{exc}; this turn is taken out of the conversation, so it does not weigh "
                     "on the next one: ask again differently, or ask something else")
        return 1
    if prompt_too_long(exc):  # as it is, every later request would fail the same way
        make_room_for_the_next_turn(exc, messages, before, screen)
        return 1
    if isinstance(exc, anthropic.APIError):  # the request failed as a whole: nothing to undo
        screen.alert(f"error: {bounded(explain_api_error(exc))}")
        return 1
    messages[:] = before  # a bug: the turn may have left the history half-written
    error = bounded(f"{type(exc).__name__}: {exc}")  # the SDK's may quote a 200 kB tool input
    screen.alert(f"error: {error}; this turn is not kept in the history")
    return 1


def prompt_too_long(exc: BaseException) -> bool:
    """The endpoint's 400 for a prompt longer than the context window: the Messages API's
    "prompt is too long: ..." (https://platform.claude.com/docs/en/build-with-claude/context-windows),
    llama.cpp's exceed_context_size_error, OpenAI-shaped "maximum context length"; or the same
    words in an `event: error` of a 200 stream."""
    if not isinstance(exc, anthropic.APIStatusError):
        return False
    error = read_api_error(exc)
    if error.status not in [*REFUSAL_STATUSES, STREAM_ERROR] or refused_max_tokens(exc):
        return False  # max_tokens too large for the window: MAX_TOKENS is what to change
    return bool(CONTEXT_FULL.search(f"{error.type} {error.message}"))


# The status the SDK gives an `event: error` inside a stream that began with HTTP 200. Amazon
# Bedrock's Mantle sends an overflow so, as OpenAI's context_length_exceeded in a streamed error
# event, as LiteLLM's source notes (litellm 1.108.7: litellm_core_utils/exception_mapping_utils.py).
STREAM_ERROR = 200
CONTEXT_FULL = re.compile(r"prompt is too long|context[ _](size|length|window)", re.IGNORECASE)


def make_room_for_the_next_turn(exc: anthropic.APIStatusError, messages: list, before: list,
                                screen: Screen) -> None:
    """After a prompt too long for the context window, leave a history the next request fits.
    Failed on the turn's first request, the turn is taken back, so the user's message is not
    in the history twice when they send it again; if that message is the bulk (larger than
    every tool result that room could be made from), the user is told its size and the limit.
    Otherwise the oldest tool results make room, the turn's own calls and results kept."""
    error = bounded(str(read_api_error(exc)))
    said = users_new_text(messages, before)
    if said is not None:
        messages[:] = before
    if said is not None and len(said) > tool_results_size(messages):
        screen.alert(f"error: your message is {len(said):,} characters, too long for the "
                     f"model's context window ({error}); it is taken back and the conversation "
                     "is as before: send a shorter one, or save the text in a file and ask for "
                     "the parts you need")
        return
    screen.alert(f"error: the conversation no longer fits the model's context window "
                 f"({error}); {room_made(make_room(messages))}; send your message again")


def users_new_text(messages: list, before: list) -> str | None:
    """The message the user sent this turn, if the turn got no reply yet; else None. It is the
    first block the turn added: a reminder of the script's own may follow it (v2's planning)."""
    if len(messages) > len(before) + 1 or messages[-1]["role"] != "user":
        return None
    added = messages[-1]["content"]
    if len(messages) == len(before):  # joined to the last user message of a stopped turn
        added = added[len(before[-1]["content"]):]
    return added[0]["text"]


def bounded(error: str, limit: int = ALERT_LIMIT) -> str:
    """An error as one line of the screen: its lines joined (LiteLLM's run over six), at most
    `limit` characters, and how many it had."""
    line = " ".join(error.split())
    return cut_short(line, limit, f"… [{len(line):,} characters in all]")


def in_effect(model: str, max_tokens: int, client: anthropic.Anthropic) -> str:
    """--help's last line: the model and MAX_TOKENS, the endpoint (its host, and the path the
    requests go under), and the header that carries the key, as the SDK will send it (never the
    key itself)."""
    endpoint = client.base_url.netloc.decode() + client.base_url.path.rstrip("/")
    return (f"In effect: MODEL_ID={model}, MAX_TOKENS={max_tokens}, endpoint {endpoint}, "
            f"{key_header(client)}.")


def key_header(client: anthropic.Anthropic) -> str:
    """Which variable the key comes from, and the header the SDK puts it in, read from the SDK
    itself: 2.14 sends either variable as `Authorization: Bearer` (its _client.py), and takes
    ANTHROPIC_API_KEY when it is not empty, else ANTHROPIC_AUTH_TOKEN."""
    ignored = ""
    if client.api_key:
        source = "ANTHROPIC_API_KEY"
        if os.environ.get("ANTHROPIC_AUTH_TOKEN"):  # the SDK warns on stderr; say it here too
            ignored = " (ANTHROPIC_AUTH_TOKEN is set too, and not sent)"
    elif client.auth_token:
        source = "ANTHROPIC_AUTH_TOKEN"
    else:
        return "no key set"
    headers = []
    for name, value in client.auth_headers.items():
        if name.lower() == "authorization":
            name = f"{name}: {value.split()[0]}"  # the scheme, "Bearer"; not the key
        headers.append(name)
    return f"the key from {source} sent as {' and '.join(headers)}{ignored}"


def check_setup(args: argparse.Namespace, version: str, screen: Screen) -> None:
    """Exit with one line if there is no API key, no such work directory, or an empty task."""
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        sys.exit("ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN): export it or put it "
                 "in .env (see .env.example). No key? Try the offline demo: python -m "
                 f"scripted.demo {version}, or a local model (docs: Other models, and no key)")
    if not os.path.isdir(args.workdir):
        sys.exit(f"--workdir {args.workdir!r} is not a folder")
    if args.task and not " ".join(args.task).strip():
        sys.exit("the task is empty: say what to do, or give no task for an interactive session")
    work_env = Path(args.workdir, ".env").resolve()
    if work_env.is_file() and work_env != Path(sys.argv[0]).resolve().parent / ".env":
        screen.note(f"{work_env} is not read: settings come from your environment and the .env "
                    "beside the script, never from the folder the agent works in")
    screen.wait("waiting for the model")


def leave(code: int, screen: Screen) -> None:
    """Exit with `code` at once: a subagent's thread still waiting for the model must not hold
    the program open. Nothing the agent started stays behind: no process (a job a command left in
    the background included), no temp folder (a subagent's thread may not have removed its own).
    The live region is taken down first, so the terminal gets its cursor back."""
    screen.wait("")
    end_every_process_started()
    remove_private_folders()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

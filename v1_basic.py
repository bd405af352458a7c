#!/usr/bin/env python3
"""v1_basic.py: the agent loop. A model, four tools, and a loop that runs until it stops asking.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

Read from the top: configuration, the tools the model sees, the loop, what each tool does, and
the command line. What a first reading can skip (guards, limits, the screen) comes from the
plumbing package, imported in one block whose names say what each piece does.

Settings come from the environment, or from the .env file beside this script (never from one in
the folder the agent works in): ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (a compatible
endpoint), MODEL_ID (the model), and the limits MAX_TOKENS (per reply, thinking and text
together), MAX_ROUNDS (50 model calls per turn), MAX_CALLS_PER_TURN (200, subagents' included),
BASH_TIMEOUT (120 s per command). --help ends with the model and MAX_TOKENS in effect.
No API key? `python -m scripted.demo v1` runs this script offline, against a scripted model.
"""
import argparse
import os
import threading
from pathlib import Path

import anthropic
from dotenv import load_dotenv

# -- plumbing -- what a first reading can skip (guards, limits, the screen), one module each
from plumbing.budget import clip  # the context budget: a long result is cut, and says so
from plumbing.checks import ToolError, check_tool_call, tool_error_text
from plumbing.commands import refuse_if_blocked, run_command
from plumbing.files import (count_matches, edit_hint, match_line_endings, page_note, read_lines,
                            read_text_file, workdir_path, write_text_file)
from plumbing.model import RequestOptions, stream_reply
from plumbing.platforms import shell_in_use  # "bash on Linux", "PowerShell on Windows", ...
from plumbing.prompt import KEYS, Prompt
from plumbing.replies import (INCOMPLETE_REPLY, INTERRUPTED, AgentStopped, add_user_message,
                              blocks_to_keep, copy_history, final_answer, not_run_results,
                              stop_incomplete_turn)
from plumbing.screen import LoopScreen, Screen
from plumbing.setup import (PlainHelp, check_setup, in_effect, leave, recover_from,
                            with_retry_notices)
from plumbing.turns import CallBudget  # the model calls one turn may make, subagents' included

# -- config -- configuration: environment variables, optionally from a .env file
load_dotenv(Path(__file__).resolve().parent / ".env")  # not the work directory's: untrusted
MODEL_ID = os.environ.get("MODEL_ID", "claude-sonnet-5-5")  # the default: the current Sonnet
# Per reply, thinking and text together: room for long thinking and a whole file in one
# write_file, within the 128K a 5.x model may write (a call cut short is retried with all 128K).
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", 64_000))
MAX_ROUNDS = int(os.environ.get("MAX_ROUNDS", 50))  # model calls per turn: a runaway loop stops
CALLS = CallBudget(int(os.environ.get("MAX_CALLS_PER_TURN", 200)))  # per turn, subagents' calls too
BASH_TIMEOUT = int(os.environ.get("BASH_TIMEOUT", 120))  # seconds
TOOL_RESULT_BUDGET = 30_000  # characters of one tool result that may enter the context
READ_LIMIT = 2000  # read_file: lines per call
LINE_LIMIT = 2000  # read_file: characters per line
BLOCKED_COMMANDS = ["rm -rf /", "rm -rf ~", "sudo ", "mkfs", "shutdown", "reboot", "dd if=", ":(){"]
SYSTEM = ("You are a coding agent working in the user's current directory. Act with your tools "
          "instead of describing what you would do: read before you edit, keep changes small, run "
          "what you write to check it. Tool results may be cut to fit the context; the cut says "
          "how to get the rest. When the task is done, reply with a short summary and call no "
          f"tool. The bash tool runs your commands with {shell_in_use()}.")
BASE_URL = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"  # empty: default
SCREEN = Screen()  # the terminal: the reply as it streams, tool lines, progress
OPTIONS = RequestOptions(SCREEN)  # thinking shown, automatic caching; dropped where refused
STOPPED = threading.Event()  # set by Ctrl-C: every running command stops at once
client = anthropic.Anthropic(base_url=BASE_URL, http_client=with_retry_notices(SCREEN))

# -- tools -- tool schemas: what the model sees
# Paths are relative to the work directory. additionalProperties: False turns a typo into an error.
TOOLS = [
    {"name": "bash", "description": (
        f"Run a command with {shell_in_use()} in the work directory. Returns stdout and stderr "
        f"together, then the exit code. Stopped after {BASH_TIMEOUT} s. Long output is cut: narrow "
        "it with grep or head."),
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                      "required": ["command"], "additionalProperties": False}},
    {"name": "read_file", "description": (
        f"Read a text file as numbered lines, at most {READ_LIMIT} lines per call and {LINE_LIMIT} "
        "characters per line. For more, call again with offset = the next line number."),
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"},
         "offset": {"type": "integer", "minimum": 1, "description": "first line, 1-based"},
         "limit": {"type": "integer", "minimum": 1,
                   "description": f"how many lines (default {READ_LIMIT})"}},
         "required": ["path"], "additionalProperties": False}},
    {"name": "write_file", "description": (
        "Create or overwrite a file; missing parent folders are created."),
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "content": {"type": "string"}},
         "required": ["path", "content"], "additionalProperties": False}},
    {"name": "edit_file", "description": (
        "Replace old_text with new_text in a file. old_text must match exactly one place, "
        "whitespace included; if it matches none or several, the error says so."),
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "old_text": {"type": "string", "minLength": 1},
         "new_text": {"type": "string"}},
         "required": ["path", "old_text", "new_text"], "additionalProperties": False}},
]


# -- loop -- the agent loop: call the model, run the tools it asks for, repeat until it answers
def agent_loop(messages: list, system: str, tools: list, screen: LoopScreen,
               max_rounds: int = MAX_ROUNDS) -> str:
    """Call the model, run the tools it asks for, repeat until it answers. Returns its text."""
    for _ in range(max_rounds):
        response = call_model(messages, system, tools, screen)
        content = blocks_to_keep(response.content)  # thinking as it came; no blank text
        if content:  # the API refuses empty messages, so an empty reply is not kept
            messages.append({"role": "assistant", "content": content})
        calls = [block for block in response.content if block.type == "tool_use"]
        if response.stop_reason in INCOMPLETE_REPLY:  # max_tokens, a refusal: nothing to go on with
            stop_incomplete_turn(messages, calls, response.stop_reason)
        if calls:
            answer_tool_calls(messages, calls, tools, screen)
        elif response.stop_reason != "pause_turn":  # pause_turn: send it back and the model resumes
            return final_answer(response, messages)  # an empty one after tool results stops
    raise AgentStopped(f"no final answer within the round cap of {max_rounds} model calls")


def call_model(messages: list, system: str, tools: list,
               screen: LoopScreen) -> anthropic.types.Message:
    """One streamed model call: its thinking shown dimmed, then its text. The same system prompt
    and tools each time, and automatic caching: each call reads the earlier ones from the cache."""
    request = {"model": MODEL_ID, "max_tokens": MAX_TOKENS, "system": system, "tools": tools,
               "messages": messages}
    response = stream_reply(client, request, OPTIONS, screen, CALLS)  # retried where it helps
    screen.reply_done(response)
    return response


def answer_tool_calls(messages: list, calls: list, tools: list, screen: LoopScreen) -> None:
    """Run the calls in order and send all their results back in one user message."""
    results = []
    try:
        for call in calls:
            results.append(run_tool(call, tools, screen))
    finally:  # the API refuses a tool_use without its tool_result: answer each call, even on Ctrl-C
        results += not_run_results(calls[len(results):], INTERRUPTED)  # the calls not yet run
        messages.append({"role": "user", "content": results})


def run_tool(call, tools: list, screen: LoopScreen) -> dict:
    """Run one tool call. Every failure becomes a result the model can read, marked is_error."""
    screen.tool_call(call.name, call.input)
    try:
        check_tool_call(call, tools)  # a tool it was given, with input that fits the schema
        handler = TOOL_HANDLERS[call.name]
        output = handler(**call.input)
        is_error = False
    except Exception as exc:  # noqa: BLE001 - a failing tool must not end the session
        output = tool_error_text(call.name, exc)
        is_error = True
    screen.tool_result(output, is_error)
    content = clip(output, TOOL_RESULT_BUDGET)  # the context budget: a long result is cut
    return {"type": "tool_result", "tool_use_id": call.id, "content": content, "is_error": is_error}


# -- handlers -- tool handlers: what each tool does
def run_bash(command: str) -> str:
    refuse_if_blocked(command, BLOCKED_COMMANDS)  # a teaching guard, not a sandbox
    output, exit_code = run_command(command, BASH_TIMEOUT, STOPPED)  # too long, too much: stopped
    return f"{output}\n[exit code {exit_code}]"


def read_file(path: str, offset: int = 1, limit: int = READ_LIMIT) -> str:
    lines, total = read_lines(workdir_path(path), offset, limit, LINE_LIMIT)  # text; long lines cut
    shown = [f"{number:6}\t{line}" for number, line in enumerate(lines, start=offset)]
    return "\n".join(shown + page_note(path, offset, len(lines), total))


def write_file(path: str, content: str) -> str:
    write_text_file(workdir_path(path), content)  # folders made; a regular file, through no link
    return f"wrote {len(content):,} characters to {path}"


def edit_file(path: str, old_text: str, new_text: str) -> str:
    target = workdir_path(path)
    text = read_text_file(target)  # as bytes, so \r\n endings stay as they are; regular files only
    old_text, new_text = match_line_endings(text, old_text, new_text)
    matches = count_matches(text, old_text)
    if matches != 1:
        raise ToolError(f"old_text matches {matches} places in {path}; {edit_hint(matches)}")
    write_text_file(target, text.replace(old_text, new_text))  # \r\n endings written as they are
    return f"edited {path}"


TOOL_HANDLERS = {"bash": run_bash, "read_file": read_file, "write_file": write_file,
                 "edit_file": edit_file}


# -- cli -- the command line: one task, or an interactive session
def run_turn(messages: list, text: str) -> int:
    """One user turn. Failures print one line and leave the history valid. Returns an exit code."""
    before = copy_history(messages)  # to undo a turn that broke on a bug
    add_user_message(messages, text)
    CALLS.start_turn()
    try:
        agent_loop(messages, SYSTEM, TOOLS, SCREEN)
        return 0
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - limits, API errors, Ctrl-C, bugs
        return recover_from(exc, messages, before, SCREEN, STOPPED)  # one line; history kept valid


def main() -> int:
    settings = in_effect(MODEL_ID, MAX_TOKENS, client)  # and the endpoint, and the key's header
    parser = argparse.ArgumentParser(description=__doc__, epilog=f"{KEYS}\n\n{settings}",
                                     formatter_class=PlainHelp)
    parser.add_argument("task", nargs="*", help="one task to run, then exit; none: interactive")
    parser.add_argument("--workdir", default=".", help="the folder the tools work in (default: .)")
    args = parser.parse_args()
    check_setup(args, "v1", SCREEN)  # the API key is there and the folder exists, or exit
    os.chdir(args.workdir)
    SCREEN.note(f"{MODEL_ID} in {Path.cwd()}")
    if args.task:
        return run_turn([], " ".join(args.task))
    history = []
    prompt = Prompt(SCREEN, STOPPED)  # line editing, history, pasted blocks
    while True:
        text = prompt.read()  # the next message; None when the user leaves
        if text is None:
            return 0
        run_turn(history, text)


if __name__ == "__main__":
    leave(main(), SCREEN)

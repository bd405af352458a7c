#!/usr/bin/env python3
"""v2_planning.py: planning. The model writes a todo list, works through it, checks items off.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

Read from the top: configuration, the tools the model sees, the loop, what each tool does, and
the command line. What a first reading can skip (guards, limits, the screen) comes from the
plumbing package, imported in one block whose names say what each piece does.

New in v2: a `todo` tool. The model sends its whole plan on every call; a TodoList checks the
rules (at most 20 items, at most one in progress, no blank text) before the new list replaces the
old one, so a bad update changes nothing. The user sees the plan each time it changes: [ ] pending,
[>] in progress, [x] completed. Two reminders keep the plan in use: one in the session's first
message, and one when open items have gone untouched for TODO_REMINDER_ROUNDS rounds of tool calls.

Settings come from the environment, or from the .env file beside this script (never from one in
the folder the agent works in): ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (a compatible
endpoint), MODEL_ID (the model), and the limits MAX_TOKENS (per reply, thinking and text
together), MAX_ROUNDS (50 model calls per turn), MAX_CALLS_PER_TURN (200, subagents' included),
BASH_TIMEOUT (120 s per command). --help ends with the model and MAX_TOKENS in effect.
No API key? `python -m scripted.demo v2` runs this script offline, against a scripted model.
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
from plumbing.todo import (first_broken_rule, has_todo_tool, open_todos_reminder, render_todos,
                          shorten, without_edge_spaces)

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
    remind_to_plan(messages, tools)
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
            remind_of_open_todos(messages, calls, tools)
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


# -- todo -- planning: a todo list the model rewrites, checked by rules, kept in mind by reminders
TODO_LIMIT = 20  # items in one list; a longer plan is too fine-grained to keep current
TODO_REMINDER_ROUNDS = 10  # rounds of tool calls without a todo call, while items are open
TODO_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}  # as the user sees them

TOOLS.append(
    {"name": "todo", "description": (
        "Plan and track a task that takes several steps (three or more, or several tasks at once); "
        "skip it for a single quick step. Each call replaces the whole list, so send every item, "
        "completed ones too. Each item has content (what to do: 'Run the tests'), activeForm "
        "(shown while it is worked on: 'Running the tests') and a status. Rules: at most "
        f"{TODO_LIMIT} items; at most one in_progress, marked before you start that step; mark an "
        "item completed as soon as it is done, not in batches. Returns a one-line summary. A list "
        "that breaks a rule is rejected, the error names the rule and the item, and your previous "
        "list stays."),
     "input_schema": {"type": "object", "properties": {"items": {"type": "array", "items": {
         "type": "object", "properties": {
             "content": {"type": "string"},
             "status": {"type": "string", "enum": list(TODO_MARKS)},
             "activeForm": {"type": "string"}},
         "required": ["content", "status", "activeForm"], "additionalProperties": False}}},
         "required": ["items"], "additionalProperties": False}})  # no maxItems: the error says more


class TodoList:
    """The model's plan. An update replaces the whole list, or breaks a rule and changes nothing."""

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.rounds_since_update = 0  # rounds of tool calls in which the model did not call todo

    def replace(self, items: list[dict]) -> None:
        broken_rule = first_broken_rule(items, TODO_LIMIT, TODO_MARKS)  # None: every rule kept
        if broken_rule:
            raise ToolError(f"todo list rejected: {broken_rule}. Your previous list is kept "
                            f"({self.summary()}); send the whole list again with this fixed.")
        self.items = [without_edge_spaces(item) for item in items]

    def open_items(self) -> int:
        return sum(item["status"] != "completed" for item in self.items)

    def summary(self) -> str:
        """One line for the model: how far along the plan is, and what is being worked on."""
        if not self.items:
            return "the list is empty"
        progress = f"{len(self.items) - self.open_items()}/{len(self.items)} done"
        current = [item["activeForm"] for item in self.items if item["status"] == "in_progress"]
        pending = [item["content"] for item in self.items if item["status"] == "pending"]
        if current:
            return f"{progress}; in progress: {shorten(current[0])}"
        if pending:
            return f"{progress}; nothing in progress, next: {shorten(pending[0])}"
        return progress


TODO = TodoList()  # one plan per session; v3's subagents have no todo tool, so they never touch it


def update_todos(items: list[dict]) -> str:
    TODO.replace(items)  # a list that breaks a rule raises ToolError here, and the old list stays
    SCREEN.block(render_todos(TODO.items, TODO_MARKS))
    return f"todo list updated: {TODO.summary()}"


TOOL_HANDLERS["todo"] = update_todos

# Reminders are text blocks in user messages, so the system prompt and tools stay byte-identical
# (cached). They only apply to an agent that has the todo tool: v3's subagents never see them.
PLANNING_REMINDER = {"type": "text", "text": (
    "<reminder>If this task takes several steps, first write a plan with the todo tool, then keep "
    "it current: one item in_progress while you work on it, marked completed as soon as it is "
    "done.</reminder>")}


def remind_to_plan(messages: list, tools: list) -> None:
    """Before the session's first model call, add the planning reminder to the first message."""
    first = messages[0]["content"]  # has one already if the first turn failed and the user went on
    if has_todo_tool(tools) and len(messages) == 1 and PLANNING_REMINDER not in first:
        first.append(PLANNING_REMINDER)


def remind_of_open_todos(messages: list, calls: list, tools: list) -> None:
    """After TODO_REMINDER_ROUNDS rounds of tool calls without todo, remind the model of them."""
    if not has_todo_tool(tools):
        return
    if any(call.name == "todo" for call in calls):  # a rejected call counts: it works on the plan
        TODO.rounds_since_update = 0
    else:
        TODO.rounds_since_update += 1
    if TODO.rounds_since_update >= TODO_REMINDER_ROUNDS and TODO.open_items():
        TODO.rounds_since_update = 0  # the next reminder after another TODO_REMINDER_ROUNDS
        reminder = open_todos_reminder(TODO_REMINDER_ROUNDS, TODO.summary())
        messages[-1]["content"].append(reminder)  # after the tool_results: the API wants them first


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
    check_setup(args, "v2", SCREEN)  # the API key is there and the folder exists, or exit
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

#!/usr/bin/env python3
"""v2_planning.py: planning. The model writes a todo list, works through it, checks items off.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

Read from the top: configuration, the tools the model sees, the loop, what each tool does, and
the command line. The "plumbing" section at the end (guards, limits, what the screen shows) can
wait for a second reading: the lesson calls it by names that say what it does.

New in v2: a `todo` tool. The model sends its whole plan on every call; a TodoList checks the
rules (at most 20 items, at most one in progress, no blank text) before the new list replaces the
old one, so a bad update changes nothing. The user sees the plan each time it changes: [ ] pending,
[>] in progress, [x] completed. Two reminders keep the plan in use: one in the session's first
message, and one when open items have gone untouched for TODO_REMINDER_ROUNDS rounds of tool calls.

Environment, also read from a .env file: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL
(another Anthropic-compatible endpoint), MODEL_ID (default claude-sonnet-5), and the limits
MAX_TOKENS (8000 per reply), MAX_ROUNDS (50 model calls per turn), BASH_TIMEOUT (120 s per
command).
Interactive session: arrow keys edit the line and recall earlier ones (kept in ~/.agent_history;
AGENT_HISTORY=off keeps none, AGENT_HISTORY=FILE keeps them there). A line that ends in a
backslash goes on to the next one, and a pasted block of lines is one message. Ctrl-C stops the
current turn and keeps the history; at the prompt it clears the line. Ctrl-C twice, Ctrl-D, q or
exit leaves. On a terminal, a spinner shows what the agent waits for, and each retry is shown.
No API key? `python -m scripted.demo v2` runs this script offline, against a scripted model.
"""
import argparse
import os
from pathlib import Path

import anthropic
from dotenv import load_dotenv

# -- config -- configuration: environment variables, optionally from a .env file
load_dotenv(Path.cwd() / ".env")  # what is set already wins; then the work folder's .env,
load_dotenv(Path(__file__).resolve().parent / ".env")  # then the one beside this script
MODEL_ID = os.environ.get("MODEL_ID", "claude-sonnet-5")
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", 8000))  # per model reply
MAX_ROUNDS = int(os.environ.get("MAX_ROUNDS", 50))  # model calls per turn: a runaway loop stops
BASH_TIMEOUT = int(os.environ.get("BASH_TIMEOUT", 120))  # seconds
TOOL_RESULT_BUDGET = 30_000  # characters of one tool result that may enter the context
READ_LIMIT = 2000  # read_file: lines per call
LINE_LIMIT = 2000  # read_file: characters per line
BLOCKED_COMMANDS = ["rm -rf /", "rm -rf ~", "sudo ", "mkfs", "shutdown", "reboot", "dd if=", ":(){"]
SYSTEM = ("You are a coding agent working in the user's current directory. Act with your tools "
          "instead of describing what you would do: read before you edit, keep changes small, run "
          "what you write to check it. Tool results may be cut to fit the context; the cut says "
          "how to get the rest. When the task is done, reply with a short summary and call no "
          "tool.")
BASE_URL = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"  # empty: default
client = anthropic.Anthropic(base_url=BASE_URL)

# -- tools -- tool schemas: what the model sees
# Paths are relative to the work directory. additionalProperties: False turns a typo into an error.
TOOLS = [
    {"name": "bash", "description": (
        "Run a shell command in the work directory. Returns stdout and stderr together, then "
        f"the exit code. Stopped after {BASH_TIMEOUT} s. Long output is cut: narrow it with grep "
        "or head."),
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
class AgentStopped(Exception):
    """The turn ended without a finished answer: the round cap, max_tokens, or a refusal."""


def agent_loop(messages: list, system: str, tools: list, screen: "Screen",
               max_rounds: int = MAX_ROUNDS) -> str:
    """Call the model, run the tools it asks for, repeat until it answers. Returns its text."""
    remind_to_plan(messages, tools)
    for _ in range(max_rounds):
        response = call_model(messages, system, tools, screen)
        content = without_blank_text(response.content)  # the API refuses blank text blocks
        if content:  # and empty messages, so an empty reply is not kept
            messages.append({"role": "assistant", "content": content})
        calls = [block for block in response.content if block.type == "tool_use"]
        if response.stop_reason in INCOMPLETE_REPLY:  # max_tokens, a refusal: nothing to go on with
            stop_incomplete_turn(messages, calls, response.stop_reason)
        if calls:
            answer_tool_calls(messages, calls, tools, screen)
            remind_of_open_todos(messages, calls, tools)
        elif response.stop_reason != "pause_turn":  # pause_turn: send it back and the model resumes
            return reply_text(response)
    raise AgentStopped(f"no final answer after {max_rounds} model calls (MAX_ROUNDS); "
                       "say how to go on")


def call_model(messages: list, system: str, tools: list,
               screen: "Screen") -> anthropic.types.Message:
    """One streamed model call. The same system prompt and tools each time: the prefix is cached."""
    with client.messages.stream(model=MODEL_ID, max_tokens=MAX_TOKENS, system=system, tools=tools,
                                messages=messages, cache_control={"type": "ephemeral"}) as stream:
        for text in stream.text_stream:
            screen.text(text)
        response = stream.get_final_message()
    screen.reply_done(response)
    return response


def answer_tool_calls(messages: list, calls: list, tools: list, screen: "Screen") -> None:
    """Run the calls in order and send all their results back in one user message."""
    results = []
    try:
        for call in calls:
            results.append(run_tool(call, tools, screen))
    finally:  # the API refuses a tool_use without its tool_result: answer each call, even on Ctrl-C
        results += not_run_results(calls[len(results):], INTERRUPTED)  # the calls not yet run
        messages.append({"role": "user", "content": results})


def run_tool(call, tools: list, screen: "Screen") -> dict:
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
    return {"type": "tool_result", "tool_use_id": call.id, "content": clip(output),
            "is_error": is_error}


# -- handlers -- tool handlers: what each tool does
class ToolError(Exception):
    """A failure the model can read and fix, such as a bad path or an ambiguous edit."""


def run_bash(command: str) -> str:
    refuse_if_blocked(command)  # a teaching guard against a few destructive commands, no sandbox
    output, exit_code = run_command(command)  # stopped when it runs too long or writes too much
    return f"{output}\n[exit code {exit_code}]"


def read_file(path: str, offset: int = 1, limit: int = READ_LIMIT) -> str:
    lines, total = read_lines(workdir_path(path), offset, limit)  # text only; long lines cut
    shown = [f"{number:6}\t{line}" for number, line in enumerate(lines, start=offset)]
    return "\n".join(shown + page_note(path, offset, len(lines), total))


def write_file(path: str, content: str) -> str:
    target = workdir_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_file(target, content)  # a regular file with one name, never through a symlink
    return f"wrote {len(content):,} characters to {path}"


def edit_file(path: str, old_text: str, new_text: str) -> str:
    target = workdir_path(path)
    text = read_text_file(target)  # as bytes, so \r\n endings stay as they are; regular files only
    old_text, new_text = match_line_endings(text, old_text, new_text)
    matches = count_matches(text, old_text)
    if matches != 1:
        raise ToolError(f"old_text matches {matches} places in {path}; {edit_hint(matches)}")
    write_text_file(target, text.replace(old_text, new_text), newline="")
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
        broken_rule = first_broken_rule(items)  # None when the new list keeps every rule
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
    SCREEN.block(render_todos(TODO))
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
        reminder = open_todos_reminder()
        messages[-1]["content"].append(reminder)  # after the tool_results: the API wants them first


# -- cli -- the command line: one task, or an interactive session
def run_turn(messages: list, text: str) -> int:
    """One user turn. Failures print one line and leave the history valid. Returns an exit code."""
    before = copy_history(messages)  # to undo a turn that broke on a bug
    add_user_message(messages, text)
    try:
        agent_loop(messages, SYSTEM, TOOLS, SCREEN)
        return 0
    except AgentStopped as exc:  # the round cap, max_tokens, a refusal: the history stays valid
        SCREEN.alert(f"stopped: {exc}")
        return 1
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - API errors, Ctrl-C, bugs
        return recover_from(exc, messages, before)  # one line; undoes a turn that a bug broke


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("task", nargs="*", help="one task to run, then exit; none: interactive")
    parser.add_argument("--workdir", default=".", help="the folder the tools work in (default: .)")
    args = parser.parse_args()
    check_setup(args, "v2")  # the API key is there and the folder exists, or exit
    os.chdir(args.workdir)
    SCREEN.note(f"{MODEL_ID} in {Path.cwd()}")
    if args.task:
        return run_turn([], " ".join(args.task))
    history = []
    while True:
        text = read_user_input()  # the next message; None when the user leaves
        if text is None:
            return 0
        run_turn(history, text)


# -- plumbing -- skip on first read: the guards, limits and display details the lesson calls
# Everything below is called from above by a name that says what it does. A reader who stops
# here has read a complete, correct agent; what follows makes it robust and pleasant to use.
# The plumbing's own imports are here, so that the lesson's list at the top stays short.
import errno
import json
import logging
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata

import jsonschema

# -- plumbing/replies -- what the API accepts in a history
INCOMPLETE_REPLY = ["max_tokens", "refusal", "model_context_window_exceeded"]  # stop reasons
INTERRUPTED = "interrupted by the user before this call finished"


def without_blank_text(content: list) -> list:
    """The reply's blocks without empty text blocks, which the API refuses in a request."""
    return [block for block in content if block.type != "text" or block.text.strip()]


def reply_text(response: anthropic.types.Message) -> str:
    texts = [block.text for block in response.content if block.type == "text"]
    return "".join(texts)


def not_run_results(calls: list, why: str) -> list:
    """An error result for each call that was not run: every tool_use needs its tool_result."""
    return [error_result(call.id, why) for call in calls]


def stop_incomplete_turn(messages: list, calls: list, stop_reason: str) -> None:
    """Answer the calls of a reply that was cut off, without running them; then stop the turn."""
    reason = f"the reply stopped early ({stop_reason}); it is incomplete"
    if calls:
        messages.append({"role": "user", "content": not_run_results(calls, f"not run: {reason}")})
    raise AgentStopped(reason)


def error_result(tool_use_id: str, message: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message,
            "is_error": True}


def add_user_message(messages: list, text: str) -> None:
    """A new user message, or one more block in the last one if the history ends on ours."""
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":  # a stopped turn ended on our side: join it
        messages[-1]["content"].append(block)
    else:
        messages.append({"role": "user", "content": [block]})


def recover_from(exc: BaseException, messages: list, before: list) -> int:
    """Say in one line why a turn failed, keep the history valid, and return an exit code."""
    if isinstance(exc, KeyboardInterrupt):  # every call was answered, so the history stays
        stop_all_commands()  # those of other threads too: nothing may change a file after this
        SCREEN.alert("interrupted: the turn stopped here; your conversation is kept")
        return 130
    if isinstance(exc, anthropic.APIError):  # the request failed as a whole: nothing to undo
        SCREEN.alert(f"error: {explain_api_error(exc)}")
        return 1
    messages[:] = before  # a bug: the turn may have left the history half-written
    SCREEN.alert(f"error: {type(exc).__name__}: {exc}; this turn is not kept in the history")
    return 1


def copy_history(messages: list) -> list:
    """A copy deep enough to undo a turn: new lists of blocks, the blocks themselves shared."""
    return [{**message, "content": message["content"][:]} for message in messages]


# -- plumbing/checks -- a tool call the model got wrong becomes an error it can read
def check_tool_call(call, tools: list) -> None:
    schemas = {tool["name"]: tool["input_schema"] for tool in tools}  # only this agent's tools
    if call.name not in schemas:
        raise ToolError(f"unknown tool {call.name!r}; the tools you have are: {', '.join(schemas)}")
    try:
        jsonschema.validate(call.input, schemas[call.name])
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "input"
        raise ToolError(f"invalid input for {call.name} ({where}): {schema_problem(exc)}") from None


def tool_error_text(name: str, exc: Exception) -> str:
    """What the model reads when a tool fails: a ToolError says it all; anything else is named."""
    if isinstance(exc, ToolError):
        return str(exc)
    return f"{name} failed: {type(exc).__name__}: {exc}"


def schema_problem(exc: jsonschema.ValidationError) -> str:
    """The validator's message, unless it would echo a huge value back into the context."""
    if len(exc.message) < 300:
        return exc.message
    return f"breaks the rule {exc.validator}: {exc.validator_value!r}"


# -- plumbing/budget -- the context budget: one limit for every tool result
def clip(text: str, budget: int = TOOL_RESULT_BUDGET) -> str:
    """The context budget: keep the head and tail of a long result, and say what was cut."""
    if len(text) <= budget:
        return text
    keep = budget - 400  # room for the note
    head = text[:keep * 2 // 3]
    tail = text[len(text) - keep // 3:]
    return head + cut_note(text, head, tail) + tail


def cut_note(text: str, head: str, tail: str) -> str:
    cut = text[len(head):len(text) - len(tail)]
    return (f"\n\n[... {len(cut):,} of {len(text):,} characters ({cut.count(chr(10)):,} lines) "
            "cut here to fit the context budget. Ask for less at a time: read_file with offset "
            "and limit, or narrow the command with grep, head, tail or sed -n ...]\n\n")


# -- plumbing/commands -- bounded command output, and stopping a runaway process group
BASH_OUTPUT_LIMIT = 10_000_000  # bytes a command may write before it is stopped as a runaway


def refuse_if_blocked(command: str) -> None:
    for blocked in BLOCKED_COMMANDS:
        if blocked in command or blocked in blocklist_spelling(command):
            raise ToolError("refused: the command matches the blocklist of destructive commands "
                            "(a teaching guard)")


# The blocklist's entries however they are spelled; quotes and variables still get past it.
BLOCKED_PROGRAM_PATH = re.compile(r"^\S*/(?=(rm|sudo|mkfs|shutdown|reboot|dd)\S*$)")  # /bin/rm
RECURSIVE = r"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)"
FORCE = r"(?:-[a-zA-Z]*f[a-zA-Z]*|--force)"
RM_RF = re.compile(rf"\brm (?=(?:-\S* )*{RECURSIVE} )(?=(?:-\S* )*{FORCE} )(?:-\S* )+")


def blocklist_spelling(command: str) -> str:
    """The command as the blocklist reads it: one space between words (tabs, runs of spaces),
    programs without their folder, and rm's recursive and force options, in any order, as -rf."""
    words = [BLOCKED_PROGRAM_PATH.sub("", word) for word in command.split()]
    return RM_RF.sub("rm -rf ", " ".join(words) + " ")


def run_command(command: str) -> tuple[str, int]:
    """Run a shell command; return its output and exit code, or raise ToolError if stopped."""
    # Output goes to a file, not a pipe: a job left running in the background cannot hang us.
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        why_stopped = wait_or_stop(proc, out)
        out.seek(0)
        output = out.read(BASH_OUTPUT_LIMIT).decode("utf-8", errors="replace").rstrip()
    if why_stopped:
        raise ToolError(f"{why_stopped}. Output so far:\n{output}")
    return output, proc.returncode


def wait_or_stop(proc: subprocess.Popen, out) -> str:
    """Wait for a command. Stop it, and all it started, if it runs too long, writes too much,
    or Ctrl-C comes. Returns why it was stopped, or "" if it ended by itself."""
    deadline = time.monotonic() + BASH_TIMEOUT
    why_stopped = ""
    try:
        while proc.poll() is None and not why_stopped:
            if STOPPED.is_set():  # Ctrl-C, seen in any thread (v3 runs subagents in threads)
                raise KeyboardInterrupt
            time.sleep(0.001)  # short: most commands end within milliseconds
            if time.monotonic() > deadline:
                why_stopped = f"timed out after {BASH_TIMEOUT} s and was stopped"
            elif os.fstat(out.fileno()).st_size > BASH_OUTPUT_LIMIT:
                why_stopped = f"stopped after writing more than {BASH_OUTPUT_LIMIT:,} bytes"
    finally:
        if proc.poll() is None:
            kill_process_group(proc)
    return why_stopped


def kill_process_group(proc: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:  # it ended meanwhile
        pass
    proc.wait()


STOPPED = threading.Event()  # set by Ctrl-C, cleared when the next message is sent


def stop_all_commands() -> None:
    """Ctrl-C reaches only the main thread. This tells every thread: each running command's
    wait_or_stop() kills its process group within a millisecond, and a command about to start
    is stopped at once, until the next message. Nothing may change a file after the prompt."""
    STOPPED.set()


# -- plumbing/files -- paths inside the work directory, text files, line endings, matches
def workdir_path(path: str) -> Path:
    """The full path of `path`, which must lie inside the work directory."""
    root = Path.cwd().resolve()
    full = (root / path).resolve()  # resolve() follows links, so a link pointing out is caught too
    if not full.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the work directory; use a path inside {root}")
    return full


def read_lines(path: Path, offset: int, limit: int) -> tuple[list[str], int]:
    """Up to `limit` lines of a text file from line `offset`, each cut at LINE_LIMIT characters,
    and how many lines the file has. A binary file is refused. Only the lines shown are kept, and
    only their first LINE_LIMIT characters: a huge file costs no more memory than a small one."""
    with open_regular(path, os.O_RDONLY) as file:
        if b"\0" in file.read(8192):
            size = os.fstat(file.fileno()).st_size
            raise ToolError(f"{path.name} looks binary ({size:,} bytes); read_file shows text. "
                            "Try bash: file, xxd | head")
        file.seek(0)
        page, total = [], 0
        while total < offset - 1 + limit:
            line = line_start(file)
            if line is None:
                return [cut_line(line) for line in page], total
            total += 1
            if total >= offset:
                page.append(line.decode("utf-8", errors="replace").rstrip("\r\n"))
        return [cut_line(line) for line in page], total + count_lines(file)


def cut_line(line: str) -> str:
    if len(line) <= LINE_LIMIT:
        return line
    return line[:LINE_LIMIT] + " [line cut]"


def line_start(file) -> bytes | None:
    """The next line's first bytes, enough for more than LINE_LIMIT characters (so cut_line sees
    that it goes on); the rest of a longer line is skipped unread. None at the end of the file."""
    line = file.readline(LINE_LIMIT * 4 + 4)
    if not line:
        return None
    rest = line
    while rest and not rest.endswith(b"\n"):
        rest = file.readline(1 << 16)
    return line


def count_lines(file) -> int:
    """The lines left in a file, counted a chunk at a time."""
    count, last = 0, b"\n"
    chunk = file.read(1 << 20)
    while chunk:
        count, last = count + chunk.count(b"\n"), chunk[-1:]
        chunk = file.read(1 << 20)
    return count + (last != b"\n")


def page_note(path: str, offset: int, shown: int, total: int) -> list[str]:
    """read_file's last line, when there is more to read (so the model can page on), or nothing
    was shown."""
    last = offset - 1 + shown
    if last < total:
        more = f"call read_file with offset={last + 1} for more"
        return [f"[lines {offset}-{last} of {total}; {more}]"]
    if shown == 0:
        return [f"[{path} has {total} lines; nothing from line {offset}]"]
    return []


def match_line_endings(text: str, old_text: str, new_text: str) -> tuple[str, str]:
    """read_file shows lines without their \\r. If old_text only matches a \\r\\n file with
    \\r\\n endings, give both texts \\r\\n endings."""
    if "\r\n" not in text or old_text in text:
        return old_text, new_text
    return with_crlf(old_text), with_crlf(new_text)


def with_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def count_matches(text: str, old_text: str) -> int:
    """How many places old_text matches, overlapping ones included (two in '}}}' for '}}')."""
    return len(re.findall(f"(?={re.escape(old_text)})", text))


def edit_hint(matches: int) -> str:
    if matches == 0:
        return "read the file and copy the text exactly"
    return "add nearby lines so it matches one"


# -- plumbing/open -- the file tools open regular files only, and never through a swapped link
EDIT_LIMIT = 64 * 1024 * 1024  # bytes edit_file reads whole; a bigger file is edited with bash
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows; the checks after opening still hold
NO_BLOCK = getattr(os, "O_NONBLOCK", 0)


def open_regular(path: Path, flags: int, mode: str = "rb", newline: str | None = None):
    """Open a file the tools may use. workdir_path() resolved `path`, so a symlink in its last part
    now means it was swapped in after the check: O_NOFOLLOW refuses it. O_NONBLOCK: a FIFO cannot
    make us wait. Then only a regular file, and for writing, one with no other name (hard link)."""
    try:
        fd = os.open(path, flags | NO_FOLLOW | NO_BLOCK, 0o666)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a link swapped in; a FIFO nobody reads
            raise ToolError(f"{path.name} is not a regular file; refused") from None
        raise
    try:
        check_opened(path, os.fstat(fd), writing=flags != os.O_RDONLY)
        os.set_blocking(fd, True)
        encoding = None if "b" in mode else "utf-8"
        return os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def check_opened(path: Path, info: os.stat_result, writing: bool) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path.name} is not a regular file (a FIFO, a device, ...); the file "
                        "tools read and write regular files only")
    if writing and info.st_nlink > 1:
        raise ToolError(f"{path.name} has {info.st_nlink} names (hard links); writing would change "
                        "the file under its other names too, maybe outside the work directory")


def read_text_file(path: Path) -> str:
    """A regular file's text as it is on disk: no line-ending translation."""
    with open_regular(path, os.O_RDONLY) as file:
        if os.fstat(file.fileno()).st_size > EDIT_LIMIT:
            raise ToolError(f"{path.name} is over {EDIT_LIMIT:,} bytes; edit it with bash (sed)")
        return file.read().decode("utf-8")


def write_text_file(path: Path, text: str, newline: str | None = None) -> None:
    """Create or overwrite; cut to nothing only after open_regular's checks passed."""
    with open_regular(path, os.O_WRONLY | os.O_CREAT, "w", newline) as file:
        file.truncate(0)
        file.write(text)


# -- plumbing/screen -- what the user sees: streamed text, tool calls, results, progress
COLOR = sys.stdout.isatty() and "NO_COLOR" not in os.environ
if COLOR:
    DIM, CYAN, RED, RESET = "\033[2m", "\033[36m", "\033[31m", "\033[0m"
else:
    DIM, CYAN, RED, RESET = "", "", "", ""
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")  # escape codes: never shown as they are
PIPED_WIDTH = 100  # characters of a tool line when the output is not a terminal (logs, the docs)
QUIET_TOOLS: set[str] = set()  # tools that show their own view (v2's todo list): no call line
SPINNER_DELAY = 0.5  # seconds of silence before the spinner says what the agent waits for
SPINNER_FRAMES = "|/-\\"
FAILED_COMMAND = re.compile(r"\[exit code (-?[1-9]\d*)\]\Z")  # run_bash's last line, not 0


class Screen:
    """The terminal of the main agent. Each method shows one kind of event of the loop. On a
    terminal, a spinner line says what the agent is waiting for whenever nothing else is shown."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # the spinner's thread prints too
        self.waiting_for = ""  # what the spinner names; "" at the prompt
        self.since = time.monotonic()  # when that wait began
        self.last_output = time.monotonic()
        self.at_line_start = True  # the spinner draws only on a line of its own
        self.spinner_shown = False
        self.spinner_paused = False  # v3: while the status lines of subagents are drawn
        self.spinner: threading.Thread | None = None
        self.terminal = None  # the stdout the spinner draws on; it never draws on another one

    def text(self, text: str) -> None:
        self.write(text)

    def reply_done(self, response: anthropic.types.Message) -> None:
        if any(block.type == "text" for block in response.content):
            self.write("\n")
        usage = response.usage
        self.note(f"tokens: in {usage.input_tokens:,}, out {usage.output_tokens:,}, "
                  f"cache read {usage.cache_read_input_tokens or 0:,}", indent="  ")
        RETRIES.clear()  # the request went through

    def tool_call(self, name: str, tool_input: dict) -> None:
        if name not in QUIET_TOOLS:
            line = CONTROL_CHARS.sub("?", f"{name} {json.dumps(tool_input, ensure_ascii=False)}")
            self.write(f"{CYAN}> {fit(line, line_width())}{RESET}\n")
        self.wait(f"running {name}")

    def tool_result(self, output: str, is_error: bool) -> None:
        if is_error or self.waiting_for.removeprefix("running ") not in QUIET_TOOLS:
            self.write(result_line(output, is_error) + "\n")
        self.wait("waiting for the model")

    def block(self, text: str) -> None:
        """Lines a tool shows as they are, such as v2's todo list."""
        self.write(text + "\n")

    def note(self, text: str, indent: str = "") -> None:
        self.write(f"{indent}{DIM}[{text}]{RESET}\n")

    def alert(self, text: str) -> None:
        with self.lock:
            self.clear_spinner()
            sys.stdout.flush()
            print(f"\n[{text}]", file=sys.stderr, flush=True)
            self.last_output = time.monotonic()

    def wait(self, what: str) -> None:
        """Say what the agent waits for now ("" at the prompt); the spinner shows it on a TTY."""
        with self.lock:
            self.waiting_for = what
            self.since = time.monotonic()
        if what and self.spinner is None and sys.stdout.isatty():
            self.terminal = sys.stdout
            self.spinner = threading.Thread(target=self.spin, daemon=True)
            self.spinner.start()

    def write(self, text: str) -> None:
        with self.lock:
            self.clear_spinner()
            sys.stdout.write(text)
            sys.stdout.flush()
            if text:
                self.at_line_start = text.endswith("\n")
            self.last_output = time.monotonic()

    def clear_spinner(self) -> None:
        if self.spinner_shown and sys.stdout is self.terminal:
            sys.stdout.write("\r\033[K")
        self.spinner_shown = False

    def spin(self) -> None:
        """The spinner's thread: every tenth of a second, show the wait if nothing else shows."""
        frame = 0
        while True:
            time.sleep(0.1)
            with self.lock:
                quiet = time.monotonic() - self.last_output > SPINNER_DELAY
                drawing = self.waiting_for and quiet and self.at_line_start
                if drawing and not self.spinner_paused and sys.stdout is self.terminal:
                    frame += 1
                    seconds = time.monotonic() - self.since
                    line = f"{SPINNER_FRAMES[frame % 4]} {self.waiting_for} … {seconds:.0f} s"
                    sys.stdout.write(f"\r{DIM}{fit(line, line_width())}{RESET}\033[K")
                    sys.stdout.flush()
                    self.spinner_shown = True


SCREEN = Screen()  # one terminal


def result_line(output: str, is_error: bool) -> str:
    """A result's first line, and how many more there are; a failed command shows as failed."""
    lines = output.strip().splitlines() or ["(no output)"]
    notes = []
    if len(lines) > 1:
        notes.append(f"+{len(lines) - 1} lines")
    failed = FAILED_COMMAND.search(output.rstrip())
    if failed:
        notes.append(f"failed: exit code {failed[1]}")
    more = ""
    if notes:
        more = f"  ({', '.join(notes)})"
    room = line_width()
    if sys.stdout.isatty():  # the notes go on the same line: keep it from wrapping
        room -= len(more)
    first = fit(CONTROL_CHARS.sub("?", lines[0]), room)
    color = DIM
    if is_error or failed:
        color = RED
    return f"  {color}{first}{more}{RESET}"


def line_width() -> int:
    """Columns a line may take: the terminal's width, or PIPED_WIDTH characters in a pipe."""
    if not sys.stdout.isatty():
        return PIPED_WIDTH
    return max(20, shutil.get_terminal_size().columns - 3)


def fit(text: str, columns: int) -> str:
    """The longest start of `text` that takes at most `columns` terminal columns: East Asian
    wide characters take two, combining marks none."""
    used = 0
    for index, char in enumerate(text):
        used += char_columns(char)
        if used > columns:
            return text[:index]
    return text


def char_columns(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 1


# -- plumbing/prompt -- reading a message: line editing, history, pasted blocks, Ctrl-C
HISTORY_SETTING = os.environ.get("AGENT_HISTORY", "~/.agent_history")  # "off": no history file
SECOND_CTRL_C = 1.0  # seconds: a second Ctrl-C at the prompt within this leaves
PASTE_WAIT = 0.02  # seconds: lines that arrive within this of the one before are one paste
LINE_EDITING: list = []  # the readline module, once set up, where the platform has one


def read_user_input() -> str | None:
    """The user's next message, never empty; None when they leave (q, quit, exit, Ctrl-D, or
    Ctrl-C twice in a row). At the prompt, one Ctrl-C clears the line."""
    SCREEN.wait("")
    setup_line_editing()
    last_ctrl_c = 0.0
    while True:
        try:
            text = read_message()
        except EOFError:
            SCREEN.write("\n")
            return None
        except KeyboardInterrupt:
            if time.monotonic() - last_ctrl_c < SECOND_CTRL_C:
                SCREEN.write("\n")
                return None
            last_ctrl_c = time.monotonic()
            SCREEN.write(f"\n{DIM}[line cleared; Ctrl-C again to leave]{RESET}\n")
            continue
        if text in ("q", "quit", "exit"):
            return None
        if text:
            STOPPED.clear()  # commands may run again
            SCREEN.wait("waiting for the model")
            return text


def read_message() -> str:
    """One message: a line, and the lines after it while a line ends in a backslash or more of a
    pasted block is already there (a terminal with bracketed paste sends it as one line)."""
    SCREEN.write("\n")
    lines = [input(prompt("you>"))]
    while lines[-1].endswith("\\") or more_pasted():
        if lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1]
            lines.append(input(prompt("...")))
        else:
            lines.append(input(""))
    return "\n".join(lines).strip()


def prompt(word: str) -> str:
    """The prompt, coloured; with line editing, the colour codes are marked as taking no room
    (between \\001 and \\002), or readline would miscount the line's width when editing."""
    if not COLOR:
        return f"{word} "
    if LINE_EDITING:
        return f"\001{CYAN}\002{word}\001{RESET}\002 "
    return f"{CYAN}{word}{RESET} "


def more_pasted() -> bool:
    """Whether more typed input is waiting already: the rest of a paste, not a person typing."""
    if os.name != "posix" or not sys.stdin.isatty():
        return False
    ready, _, _ = select.select([sys.stdin], [], [], PASTE_WAIT)
    return bool(ready)


def setup_line_editing() -> None:
    """Arrow keys and history, where the platform has readline and both ends are a terminal."""
    if LINE_EDITING or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    try:
        import readline
    except ImportError:  # Windows: plain input() still works
        return
    LINE_EDITING.append(readline)
    if HISTORY_SETTING != "off":
        history = Path(HISTORY_SETTING).expanduser()
        try:
            readline.read_history_file(history)
        except OSError:  # none yet
            pass
        readline.set_history_length(1000)


def save_history() -> None:
    """Write the history file, when there is line editing and a history file is wanted."""
    if LINE_EDITING and HISTORY_SETTING != "off":
        try:
            LINE_EDITING[0].write_history_file(Path(HISTORY_SETTING).expanduser())
        except OSError:  # a read-only home, say: the session itself is not harmed
            pass


# -- plumbing/setup -- start-up checks and API errors, each as one line that says what to do
API_ERRORS = [  # (SDK exception, what the user should do), most specific first
    (anthropic.AuthenticationError, "the API rejected the key (401): check ANTHROPIC_API_KEY"),
    (anthropic.APIConnectionError,
     "could not reach the API at {url}{retried}: check ANTHROPIC_BASE_URL and your network"),
    (anthropic.RateLimitError, "rate limited (429){retried}: wait a minute, then try again"),
    (anthropic.NotFoundError, "not found (404): is MODEL_ID={model} offered at {url}?"),
    (anthropic.APIStatusError, "the API answered {status}{retried}: {message}"),
]
RETRIES: list[str] = []  # the retries the SDK made for the request that is under way


def explain_api_error(exc: anthropic.APIError) -> str:
    hint = "API error: {message}"
    for kind, text in API_ERRORS:
        if isinstance(exc, kind):
            hint = text
            break
    retried = ""
    if RETRIES:
        retried = f", still after {len(RETRIES)} retries"
    RETRIES.clear()
    status = getattr(exc, "status_code", "?")
    return hint.format(url=client.base_url, model=MODEL_ID, status=status, retried=retried,
                       message=api_message(exc))


def api_message(exc: anthropic.APIError) -> str:
    """The API's own error type and message, as its JSON body gives them, not the whole body."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        return f"{error.get('type', 'error')}: {error.get('message', '')}".strip()
    return str(exc)


class RetryNotices(logging.Handler):
    """One line for each retry the SDK makes: why, which attempt, and how long it waits. The SDK
    logs its decisions on the `anthropic` logger; this reads three of its messages."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.why = "no answer"
        self.retries_left = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("HTTP Response:") and len(record.args) > 2:
            self.why = f"the API answered {record.args[2]}"  # method, url, status, ...
        elif record.msg.startswith("Encountered"):  # no response: a timeout or no connection
            self.why = "no answer"
        elif record.msg.endswith("retries left") or record.msg == "1 retry left":
            self.retries_left = record.args[0] if record.args else 1
        elif record.msg.startswith("Retrying request to"):
            RETRIES.append(self.why)
            attempt = client.max_retries - self.retries_left + 2
            SCREEN.alert(f"retrying: {self.why}; attempt {attempt} of {client.max_retries + 1} "
                         f"in {record.args[1]:.1f} s")
            self.why = "no answer"


SDK_LOG = logging.getLogger("anthropic")
SDK_LOG.setLevel(logging.DEBUG)
for old_handler in SDK_LOG.handlers[:]:  # this file loaded twice (the tests do): one handler
    if old_handler.get_name() == "retry notices":
        SDK_LOG.removeHandler(old_handler)
RETRY_NOTICES = RetryNotices()
RETRY_NOTICES.set_name("retry notices")
SDK_LOG.addHandler(RETRY_NOTICES)
SDK_LOG.propagate = False  # its debug lines are for RetryNotices, not for the console

HelpFormatter = argparse.RawDescriptionHelpFormatter  # --help prints the docstring as written


def check_setup(args: argparse.Namespace, version: str) -> None:
    """Exit with one line if there is no API key, no such work folder, or an empty task."""
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        sys.exit("ANTHROPIC_API_KEY is not set: export it or put it in .env (see .env.example). "
                 f"No key? Try the offline demo: python -m scripted.demo {version}")
    if not os.path.isdir(args.workdir):
        sys.exit(f"--workdir {args.workdir!r} is not a folder")
    if args.task and not " ".join(args.task).strip():
        sys.exit("the task is empty: say what to do, or give no task for an interactive session")
    SCREEN.wait("waiting for the model")


def leave(code: int) -> None:
    """Exit with `code` at once: a subagent's thread still waiting for the model must not hold
    the program open (its commands were killed already)."""
    save_history()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# -- plumbing/todo -- the todo list's rules, and how the list is shown
QUIET_TOOLS.add("todo")  # the list itself is shown (SCREEN.block), not the call and its summary


def shorten(text: str, width: int = 60) -> str:
    """One line of at most `width` characters, with no escape codes."""
    text = CONTROL_CHARS.sub("?", " ".join(text.split()))
    if len(text) <= width:
        return text
    return text[:width - 1] + "…"


def first_broken_rule(items: list[dict]) -> str | None:
    """The first rule the new list breaks, naming the item that breaks it; None if it keeps them."""
    if len(items) > TODO_LIMIT:
        return (f"{len(items)} items, but a list holds at most {TODO_LIMIT}; merge small steps "
                "into larger ones")
    labels = [item_label(number, item) for number, item in enumerate(items, 1)]
    for label, item in zip(labels, items, strict=True):
        if item["status"] not in TODO_MARKS:
            return f"{label} has status {item['status']!r}; use one of {', '.join(TODO_MARKS)}"
        for field in ("content", "activeForm"):
            if not item[field].strip():
                return (f"{label} has an empty {field}; every item needs both content and "
                        "activeForm")
    working = [label for label, item in zip(labels, items, strict=True)
               if item["status"] == "in_progress"]
    if len(working) > 1:
        return (f"at most one item may be in_progress, but {' and '.join(working)} are; mark the "
                "finished one completed, or set the others back to pending")
    return None


def item_label(number: int, item: dict) -> str:
    """How an error names an item: its number, and its text when it has one."""
    if not item["content"].strip():
        return f"item {number}"
    return f"item {number} ({shorten(item['content'], 40)!r})"


def without_edge_spaces(item: dict) -> dict:
    return {"content": item["content"].strip(), "status": item["status"],
            "activeForm": item["activeForm"].strip()}


def render_todos(todo: TodoList) -> str:
    """The plan as the user sees it each time it changes."""
    if not todo.items:
        return "  (the todo list is empty)"
    lines = []
    for item in todo.items:
        line = f"  {TODO_MARKS[item['status']]} {shorten(item['content'], 90)}"
        if item["status"] == "in_progress":
            line += f" ({shorten(item['activeForm'])})"
        lines.append(line)
    lines.append(f"  {len(todo.items) - todo.open_items()}/{len(todo.items)} done")
    return "\n".join(lines)


def open_todos_reminder() -> dict:
    return {"type": "text", "text": (
        f"<reminder>You have not updated the todo list for {TODO_REMINDER_ROUNDS} rounds of tool "
        f"calls, and it has open items ({TODO.summary()}). Mark what you finished completed and "
        "what you work on in_progress; if the plan changed, rewrite it.</reminder>")}


def has_todo_tool(tools: list) -> bool:
    return any(tool["name"] == "todo" for tool in tools)


if __name__ == "__main__":
    leave(main())

#!/usr/bin/env python3
"""v6_mcp.py: MCP. Tools from other programs (MCP servers), each answer held to a budget.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

    Task(prompt, agent_type) --> a subagent: this same loop, on a fresh history holding only the
                                 prompt, with its type's tools --> only its final text comes back

    skills/<name>/SKILL.md --start-up--> name + description, in the system prompt  (level 1: always)
                           --Skill-----> the instructions, and a list of its files (level 2: on use)
    skills/<name>/*/...    --read_file-> one of those files, when they call for it (level 3: on use)

    the last request sent more than COMPACT_AT tokens (or the user typed /compact)
      --> the history + one question: "summarize the work so far"  (the same prefix: cached)
      --> a fresh history: <summary> + what must survive it word for word (the user's latest
          request, the todo list, the skills loaded, the files changed) --> the loop goes on

    .mcp.json --start-up--> each server started, its tools listed --> mcp__<server>__<tool>
    mcp__docs__search_docs(...) --> the server answers --> text and images, at most
                                    MCP_RESULT_BUDGET characters; a cut names the tool's own
                                    mode, page or limit argument --> tool_result

Read from the top: configuration, the tools the model sees, the loop, what each tool does, and
the command line. What a first reading can skip (guards, limits, the screen) comes from the
plumbing package, imported in one block whose names say what each piece does.

New in v2: a `todo` tool. The model sends its whole plan on every call; a TodoList checks the
rules (at most 20 items, at most one in progress, no blank text) before the new list replaces the
old one, so a bad update changes nothing. The user sees the plan each time it changes: [ ] pending,
[>] in progress, [x] completed. Two reminders keep the plan in use: one in the session's first
message, and one when open items have gone untouched for TODO_REMINDER_ROUNDS rounds of tool calls.

New in v3: a `Task` tool. The model hands a side job to a subagent of a type from AGENT_TYPES:
explore and plan can only read (their shell is read_only_bash, which checks every word), code has
the four base tools. The subagent's reading never enters the main context. Several Task calls in
one reply run in parallel, and each subagent shows the user one status line, not its tool calls.

New in v4: skills. Skills come from skills/ beside this script, .agents/skills/ in the work
directory, SKILLS_DIR and --skills-dir; a later folder wins a name. Loading one never changes the
system prompt or the tools, so the cached prefix stays valid. Subagents get no Skill tool.

New in v5: compaction. Every request sends the whole history again, so a long session grows until
it no longer fits the context window. After a round of tool calls whose request sent more than
COMPACT_AT tokens, the agent asks the model for a summary of the work so far (the history as it
stands plus one question, so the request reads the cached prefix), then goes on from a fresh
history: the summary, and what must survive word for word. `/compact` at the prompt does the same
by hand. The screen says when it compacts, and how many tokens went in and came out. A summary
request that fails keeps the history as it was and is not asked again until the next turn. The
system prompt ends with a cache breakpoint, so that system and tools stay cached across a
compaction. Subagents never compact: their history ends with their report.

New in v6: MCP. A server is a program that offers tools over the Model Context Protocol; the
agent starts the ones named in a .mcp.json file (Claude Code's format), lists their tools and
offers them to the model as mcp__<server>__<tool>. The answer is someone else's words: it is
held to MCP_RESULT_BUDGET before it enters the history, and the cut tells the model which of
the tool's own arguments (a mode, a page, a limit) asks for less. A server that fails to start,
hangs or dies costs one line; the session goes on without it, and no server outlives the agent.
The work folder's .mcp.json runs programs, so it is used only once the user says yes (remembered
for that file as it is: a changed file asks again).

Settings come from the environment, or from the .env file beside this script (never from one in
the folder the agent works in): ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (a compatible
endpoint), MODEL_ID (the model), and the limits MAX_TOKENS (per reply, thinking and text
together), MAX_ROUNDS (50 model calls per turn), MAX_CALLS_PER_TURN (200, subagents' included),
BASH_TIMEOUT (120 s per command). --help ends with the model and MAX_TOKENS in effect.
Subagents: SUBAGENT_MAX_ROUNDS (25 model calls per subagent).
Compaction: COMPACT_AT (8000 input tokens of one request: low, so that you see it happen; with a
1M-token window a real session can set it far higher, and --help says what is in effect).
MCP: --mcp-config FILE (servers to start), --trust-project-mcp (use the work folder's .mcp.json
without asking), MCP_TIMEOUT (30 s for a server to start), MCP_TOOL_TIMEOUT (120 s per call),
MCP_RESULT_BUDGET (30000 characters of one result, as for the built-in tools), MCP_TRUSTED (the
file that remembers a yes to a work folder's .mcp.json, ~/.agent_mcp_trusted.json; off: none).
No API key? `python -m scripted.demo v6` runs this script offline, against a scripted model.
"""
import argparse
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
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
from plumbing.read_only import parse_read_only
from plumbing.sandbox import note_read_only_protection, run_read_only
from plumbing.status import StatusBoard
from plumbing.subagents import subagent_failed, within_budget
from plumbing.skills import (DESCRIPTION_LIMIT, SkillSkipped, note_override, read_front_matter,
                            read_skill_or_warn, resource_listing, skill_name, warn_if_missing,
                            warn_of_spec_problems, without_repeats)
from plumbing.compaction import (CompactionFailed, compaction_note, failure_note, fresh_history,
                                 note_once, prompt_size, summary_of, with_question)
from plumbing.mcp import (McpError, McpServers, is_read_only, offered_tool, read_servers,
                          result_content, text_of, user_trusts, ways_to_ask_for_less)

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
               max_rounds: int = MAX_ROUNDS, compact_at: int | None = None) -> str:
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
            # Past compact_at, the next request (larger still) goes out from a summary instead.
            # Only the main conversation passes one: a subagent's history ends with its report.
            if compact_at and prompt_size(response.usage) > compact_at:
                first_message = messages[0]
                compact(messages, system, tools, screen, f"over COMPACT_AT={compact_at:,}")
                if messages[0] is first_message:  # not replaced: the summary request failed
                    compact_at = None  # so not again this turn: one extra call, not one a round
        elif response.stop_reason != "pause_turn":  # pause_turn: send it back and the model resumes
            return final_answer(response, messages)  # an empty one after tool results stops
    raise AgentStopped(f"no final answer within the round cap of {max_rounds} model calls")


def call_model(messages: list, system: str, tools: list,
               screen: LoopScreen) -> anthropic.types.Message:
    """One streamed model call: its thinking shown dimmed, then its text. The same system prompt
    and tools each time, and automatic caching: each call reads the earlier ones from the cache."""
    request = {"model": MODEL_ID, "max_tokens": MAX_TOKENS, "tools": tools,
               "system": cached_system(system),  # its breakpoint outlives a compaction
               "messages": messages}
    response = stream_reply(client, request, OPTIONS, screen, CALLS)  # retried where it helps
    screen.reply_done(response)
    return response


def answer_tool_calls(messages: list, calls: list, tools: list, screen: LoopScreen) -> None:
    """Run the calls (Task calls first, all at once; then the others in order); send all the
    results back in one user message."""
    results = []
    try:
        tasks = run_tasks(calls, tools, screen)  # the Task calls, run at once: {call id: result}
        for call in calls:
            if call.id in tasks:
                results.append(tasks[call.id])
            elif call.name in MCP_TOOLS:  # a server's tool: its answer is held to the budget
                results.append(run_mcp_tool(call, tools, screen))
            else:
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
    lines, total = read_lines(path_for_reading(path), offset, limit, LINE_LIMIT)  # skills too
    shown = [f"{number:6}\t{line}" for number, line in enumerate(lines, start=offset)]
    return "\n".join(shown + page_note(path, offset, len(lines), total))


def write_file(path: str, content: str) -> str:
    write_text_file(workdir_path(path), content)  # folders made; a regular file, through no link
    note_once(KEPT.files_changed, path)  # one of what must survive a compaction
    return f"wrote {len(content):,} characters to {path}"


def edit_file(path: str, old_text: str, new_text: str) -> str:
    target = workdir_path(path)
    text = read_text_file(target)  # as bytes, so \r\n endings stay as they are; regular files only
    old_text, new_text = match_line_endings(text, old_text, new_text)
    matches = count_matches(text, old_text)
    if matches != 1:
        raise ToolError(f"old_text matches {matches} places in {path}; {edit_hint(matches)}")
    write_text_file(target, text.replace(old_text, new_text))  # \r\n endings written as they are
    note_once(KEPT.files_changed, path)
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


# -- agent_types -- subagent types: plain data, each with its own tools and system prompt
SUBAGENT_MAX_ROUNDS = int(os.environ.get("SUBAGENT_MAX_ROUNDS", 25))  # model calls per subagent
REPORT_BUDGET = 3000  # characters of a subagent's report; the tool result still goes through clip()
REPORT_RULES = (
    "You are a subagent: another agent gave you this task and sees nothing of your work but your "
    "final message. Work on your own (nobody answers questions) and stop as soon as you can "
    f"answer. End with a report of at most {REPORT_BUDGET:,} characters: the facts asked for, with "
    "file paths and line numbers, not the story of your search.")
AGENT_TYPES = {  # "use_for" is what the main agent reads in the Task tool's description
    "explore": {
        "use_for": "read-only; searches and reads the code, reports what is where (files, lines, "
                   "names)",
        "tools": ["read_only_bash", "read_file"],
        "system": "You explore a code base to answer a question. You can search and read, not "
                  "change anything. " + REPORT_RULES},
    "plan": {
        "use_for": "read-only; studies the code a change touches and returns a numbered "
                   "step-by-step plan",
        "tools": ["read_only_bash", "read_file"],
        "system": "You plan a change to a code base: read what it touches, then reply with a "
                  "numbered plan, one step per line, naming files and functions, and a last step "
                  "that checks the result. You can search and read, not change anything. "
                  + REPORT_RULES},
    "code": {
        "use_for": "changes files and runs commands; carries out a well-defined change and reports "
                   "what it did",
        "tools": ["bash", "read_file", "write_file", "edit_file"],
        "system": SYSTEM + " " + REPORT_RULES},
}
TASK_TOOL = {"name": "Task", "description": (
    "Hand a self-contained side job to a subagent and get back only its final report: the files "
    "it reads and the commands it runs never enter your context. The subagent starts with no "
    "context: it does not see this conversation, only the prompt, so the prompt must say "
    "everything it needs (the goal, paths, what to report). Reports are at most about "
    f"{REPORT_BUDGET:,} characters. Several Task calls in one reply run in parallel, before the "
    "reply's other tool calls. Agent types:\n"
    + "\n".join(f"- {name}: {profile['use_for']}" for name, profile in AGENT_TYPES.items())),
    "input_schema": {"type": "object", "properties": {
        "description": {"type": "string",
                        "description": "3-5 words, shown to the user while the subagent works"},
        "prompt": {"type": "string", "pattern": "\\S",
                   "description": "the whole task, self-contained"},
        "agent_type": {"type": "string", "enum": list(AGENT_TYPES)}},
        "required": ["description", "prompt", "agent_type"], "additionalProperties": False}}
TOOLS.append(TASK_TOOL)


# -- subagent -- running a subagent: a fresh history, its own tools, only the report comes back
def run_subagent(description: str, prompt: str, agent_type: str) -> str:
    """The Task tool: run the same loop on the prompt alone and return only the final text."""
    profile = AGENT_TYPES[agent_type]  # its tools are never Task itself: no subagents of its own
    tools = [tool for tool in TOOLS + SUBAGENT_TOOLS if tool["name"] in profile["tools"]]
    messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]  # nothing else
    status = BOARD.start(agent_type, description)  # one status line instead of its tool calls
    outcome = "failed"
    try:
        report = agent_loop(messages, profile["system"], tools, status, SUBAGENT_MAX_ROUNDS)
        outcome = "done"
    except (AgentStopped, anthropic.APIError) as exc:  # the main agent reads why, decides what next
        raise subagent_failed(agent_type, exc, messages, REPORT_BUDGET) from None
    finally:
        BOARD.finish(status, outcome)
    if not report.strip():
        return f"(the {agent_type} subagent finished without a report)"
    return within_budget(report, REPORT_BUDGET)  # a long report is cut, and says so


TOOL_HANDLERS["Task"] = run_subagent

# -- read_only -- a read-only shell for explore and plan: parse the command, check every word
READ_ONLY_COMMANDS = {  # command: its options that write files, run programs or never end
    "ls": [], "cat": [], "head": [], "tail": ["-f", "-F", "--follow"], "wc": [], "grep": [],
    "cut": [], "sort": ["-o", "--output", "--compress-program", "-T", "--temporary-directory"],
    "file": ["-C", "--compile"], "stat": [], "du": [], "pwd": [], "echo": [], "uniq": [],
    "tree": ["-o", "-R"], "rg": ["--pre", "--hostname-bin"], "diff": [],
    "find": ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
             "-fls"],
    "git log": ["--output", "--ext-diff"], "git show": ["--output", "--ext-diff"],
    "git diff": ["--output", "--ext-diff"], "git grep": ["-O", "--open-files-in-pager"],
    "git status": [], "git ls-files": [], "git blame": [],
}
READ_ONLY_BASH = {"name": "read_only_bash", "description": (
    "Run one read-only command in the work directory, or a pipeline of them joined by |. Returns "
    "stdout and stderr together, then the exit code. Commands: "
    f"{', '.join(READ_ONLY_COMMANDS)}. Every word reaches the command exactly as written: no "
    "globs (use find -name, or grep -r --include), no $VARIABLES, no > < ; & ( ) $( ). Options "
    "that write files or run programs are refused. Long output is cut: narrow it with grep or "
    "head."),
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                     "required": ["command"], "additionalProperties": False}}
SUBAGENT_TOOLS = [READ_ONLY_BASH]  # only subagents get it; the main agent has the full bash


def run_read_only_bash(command: str) -> str:
    pipeline = parse_read_only(command, READ_ONLY_COMMANDS)  # every word checked; writing refused
    output, exit_code = run_read_only(pipeline, BASH_TIMEOUT, STOPPED)  # sandboxed where it can
    return f"{output}\n[exit code {exit_code}]"


TOOL_HANDLERS["read_only_bash"] = run_read_only_bash

# -- parallel -- the Task calls of one reply run at the same time
PARALLEL_SUBAGENTS = 4  # subagents running at once; more Task calls wait for a free place
BOARD = StatusBoard(SCREEN, STOPPED)  # one status line per running subagent


def run_tasks(calls: list, tools: list, screen: LoopScreen) -> dict:
    """Run the reply's Task calls at the same time, one thread each; return results by call id."""
    tasks = [call for call in calls if call.name == "Task"]
    if not tasks or "Task" not in [tool["name"] for tool in tools]:
        return {}  # a subagent has no Task tool: run_tool answers its Task calls as unknown
    pool = ThreadPoolExecutor(max_workers=min(len(tasks), PARALLEL_SUBAGENTS))
    shared_screen = BOARD.locked(screen)  # threads print whole lines, above the status lines
    futures = {call.id: pool.submit(run_tool, call, tools, shared_screen) for call in tasks}
    try:
        BOARD.wait_for(futures.values())  # redraws the status lines while they run
        return {call_id: future.result() for call_id, future in futures.items()}
    except BaseException:  # Ctrl-C: the subagents stop at their next step; every call is answered
        BOARD.stop_all()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


# -- skills -- skills: folders of instructions, listed in the system prompt, loaded when needed
REPO_SKILLS = Path(__file__).resolve().parent / "skills"  # beside the script, run from anywhere
# SKILLS_DIR: folders separated by os.pathsep, relative to where the script was started
SKILLS_DIR_TEXT = os.environ.get("SKILLS_DIR", "")
SKILLS_DIR = [Path(folder).resolve() for folder in SKILLS_DIR_TEXT.split(os.pathsep) if folder]
RESOURCE_LIST_LIMIT = 50  # files listed when a skill is loaded, so a full folder cannot flood
SKILLS_PROMPT = (
    "\n\nSkills are folders of instructions for particular kinds of task. When a task matches a "
    "skill below, call the Skill tool with its name before you start, and follow what it returns; "
    "read the skill's other files with read_file only when its instructions call for them.\n")


@dataclass
class Skill:
    name: str
    description: str
    folder: Path  # resolved, so that read_file can tell what lies inside it
    body: str  # the instructions: SKILL.md without its front matter


SKILLS: dict[str, Skill] = {}  # this session's skills by name, set once by install_skills()


def skill_sources(named: list[Path]) -> list[Path]:
    """The folders to look in, lowest priority first: the repo's, the project's, SKILLS_DIR, then
    --skills-dir."""
    named = [*SKILLS_DIR, *named]
    warn_if_missing(named)  # the default folders may well be missing; one the user named should not
    project = Path.cwd().resolve() / ".agents" / "skills"
    return without_repeats([REPO_SKILLS, project, *named])  # a folder named twice is read once


def load_skills(sources: list[Path]) -> dict[str, Skill]:
    """Every <source>/<name>/SKILL.md that can be used. A later source wins a name, and says so."""
    skills: dict[str, Skill] = {}
    for source in sources:
        for skill_md in sorted(source.glob("*/SKILL.md")):  # a missing source has none
            skill = read_skill_or_warn(read_skill, skill_md)  # None, after one line, if unusable
            if skill is None:
                continue
            if skill.name in skills:
                note_override(skills[skill.name], skill, SCREEN)
            skills[skill.name] = skill
    if skills:
        SCREEN.note(f"skills: {', '.join(sorted(skills))}")
    return skills


def read_skill(skill_md: Path) -> Skill:
    """Parse one SKILL.md. Lenient, as the spec's guide for clients advises: a flaw gets a warning
    and the skill still loads; only a skill the model could not choose (no front matter or no
    description) is skipped."""
    fields, body = read_front_matter(skill_md)  # the YAML between the two '---' lines, and the rest
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillSkipped("has no description; the model needs one to know when to use the skill")
    warn_of_spec_problems(fields, skill_md)
    name = skill_name(fields, skill_md.parent.name)  # the name it declares, or its folder's
    return Skill(name, description.strip()[:DESCRIPTION_LIMIT], skill_md.parent.resolve(), body)


def catalogue(skills: dict[str, Skill]) -> str:
    """Level 1: one line per skill, name and description, for the system prompt; no skills, no
    text, so the system prompt is v3's."""
    if not skills:
        return ""
    entries = [f"- {name}: {' '.join(skills[name].description.split())}" for name in sorted(skills)]
    return SKILLS_PROMPT + "<available_skills>\n" + "\n".join(entries) + "\n</available_skills>"


def skill_tool(names: list[str]) -> dict:
    return {"name": "Skill", "description": (
        "Load a skill named in the system prompt's catalogue. Returns its instructions in "
        "<skill_content>, then the skill's folder and its other files (names and sizes, not "
        "contents). Call it before starting a task that matches the skill's description."),
        "input_schema": {"type": "object",
                         "properties": {"name": {"type": "string", "enum": names}},
                         "required": ["name"], "additionalProperties": False}}


def install_skills(skills: dict[str, Skill]) -> None:
    """Once, at start-up: the skills join SKILLS, whose catalogue run_turn() adds to the system
    prompt, and the Skill tool joins the tools. Loading a skill later changes neither, so every
    request shares the same cached prefix."""
    if not skills:
        return  # no catalogue and no Skill tool: the agent is exactly v3
    SKILLS.update(skills)
    TOOLS.append(skill_tool(sorted(skills)))


def activate_skill(name: str) -> str:
    """Level 2: the instructions, then where the skill's other files are; level 3 is reading one."""
    skill = SKILLS[name]  # the input schema's enum already refused any other name
    note_once(KEPT.skills_loaded, name)
    parts = [f'<skill_content name="{name}">', skill.body, "</skill_content>"]
    parts += resource_listing(skill, RESOURCE_LIST_LIMIT)  # its folder, its other files
    return "\n".join(parts)


def path_for_reading(path: str) -> Path:
    """Level 3: read_file may also read inside the folders of this session's skills, wherever
    they are. write_file and edit_file still use workdir_path: a skill folder stays read-only."""
    full = (Path.cwd() / path).resolve()
    for skill in SKILLS.values():
        if full.is_relative_to(skill.folder):
            return full
    return workdir_path(path)


TOOL_HANDLERS["Skill"] = activate_skill  # offered to the model only when install_skills() adds it


# -- compaction -- compaction: past COMPACT_AT, a summary of the work takes the history's place
COMPACT_AT = int(os.environ.get("COMPACT_AT", 8_000))  # tokens one request sent, cache included
SUMMARY_QUESTION = (
    "Stop here and call no tool: this conversation is about to be replaced by your summary. "
    "Write a summary of the work so far that lets you go on without the conversation: the goal, "
    "what you found (facts, values, names, file paths and line numbers), what you changed and "
    "why, what worked and what did not, and what is left to do. The user's latest request, the "
    "todo list, the skills loaded and the files changed are kept for you word for word.")


@dataclass
class WorkSoFar:
    """What a summary must not lose, kept beside the history so that it survives every
    compaction, the second as well as the first. The todo list is TODO's."""
    request: str = ""  # the user's latest request, as typed
    skills_loaded: list[str] = field(default_factory=list)  # in the order they were first loaded
    files_changed: list[str] = field(default_factory=list)  # in the order they were first changed


KEPT = WorkSoFar()


def compact(messages: list, system: str, tools: list, screen: LoopScreen, why: str) -> None:
    """Ask for a summary of the history, then go on from a fresh one. The summary request sends
    the same system prompt and tools and the history as it stands, one question appended: all
    of it up to the last round is the prefix the last request cached, so it is read, not paid
    for again; the last reply, its results and the question are new. Ctrl-C stops the turn.
    The history is replaced only once the summary is there: a failure keeps it as it was."""
    screen.note(f"compacting ({why}): asking for a summary of the work so far")
    try:
        response = call_model(with_question(messages, SUMMARY_QUESTION), system, tools, screen)
        summary = summary_of(response)  # its text; a tool call or an empty reply is none
    except (CompactionFailed, anthropic.APIError) as exc:  # the turn goes on, uncompacted
        screen.alert(failure_note(exc))
        return
    messages[:] = fresh_history(summary, what_must_survive())
    screen.note(compaction_note(prompt_size(response.usage), response))


def cached_system(system: str) -> list:
    """The system prompt as one text block with a cache breakpoint at its end: tools and system
    come first and never change, so the first request after a compaction reads them cached."""
    return [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]


def what_must_survive() -> str:
    """What the summary may not lose, word for word and in its order: the user's latest request,
    the todo list, the skills loaded (their instructions went with the history: the model loads
    one again if it needs it) and the files changed."""
    parts = ["The conversation so far was compacted into the summary above. Kept word for word:",
             f"The user's latest request:\n{KEPT.request}"]
    if TODO.items:
        todos = [f"- [{item['status']}] {item['content']}" for item in TODO.items]
        parts.append("The todo list:\n" + "\n".join(todos))
    if KEPT.skills_loaded:
        parts.append("Skills loaded (call Skill again for their instructions): "
                     + ", ".join(KEPT.skills_loaded))
    if KEPT.files_changed:
        parts.append("Files changed: " + ", ".join(KEPT.files_changed))
    return "\n\n".join(parts)


def compact_by_hand(messages: list) -> int:
    """/compact at the prompt: the same compaction, between turns. Returns an exit code."""
    if not messages:
        SCREEN.note("nothing to compact yet")
        return 0
    before = copy_history(messages)
    CALLS.start_turn()
    try:
        compact(messages, SYSTEM + catalogue(SKILLS), TOOLS, SCREEN, "/compact")
        return 0
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - as in run_turn()
        return recover_from(exc, messages, before, SCREEN, STOPPED)


# -- mcp -- MCP servers: tools from other programs, each answer held to the budget
MCP_FILE = ".mcp.json"  # Claude Code's project file: {"mcpServers": {name: {command, args, env}}}
# Where a yes to a work folder's .mcp.json is remembered: the home folder, not the work folder
MCP_TRUSTED = os.environ.get("MCP_TRUSTED", "~/.agent_mcp_trusted.json")  # "off": nowhere
MCP_TIMEOUT = float(os.environ.get("MCP_TIMEOUT", 30))  # seconds for a server to start
MCP_TOOL_TIMEOUT = float(os.environ.get("MCP_TOOL_TIMEOUT", 120))  # seconds for one call
# Characters of one result, as TOOL_RESULT_BUDGET for the built-in tools. Not tokens: counting
# them would cost a request per result, and several endpoints (Ollama) have no count_tokens.
MCP_RESULT_BUDGET = int(os.environ.get("MCP_RESULT_BUDGET", 30_000))
MCP_DESCRIPTION_LIMIT = 1_000  # characters of a tool's description: the server's words, bounded
MCP_SCHEMA_LIMIT = 10_000  # characters of a tool's input schema, sent with every request
MCP_TOOLS_PER_SERVER = 50  # tools offered from one server; every one is sent with every request
# Which subagents get a server's tools: explore and plan promise to change nothing, so only the
# tools a server marks read-only (its readOnlyHint); code gets them all.
MCP_FOR_AGENT_TYPES = {"explore": "read-only", "plan": "read-only", "code": "all"}
SERVERS = McpServers(MCP_TIMEOUT, MCP_TOOL_TIMEOUT)  # one event loop, in its own thread
MCP_TOOLS: dict = {}  # offered name -> (server, the tool as the server listed it)


def start_mcp_servers(named: Path | None, trusted: bool) -> None:
    """Start the servers of --mcp-config FILE, or of the work folder's .mcp.json once trusted;
    offer their tools. A server that fails costs one line, and the session goes on without it."""
    path = named or Path.cwd() / MCP_FILE
    if not path.is_file():
        if named:
            SCREEN.alert(f"--mcp-config {named}: no such file")
        return
    try:
        specs, problems = read_servers(path)  # one line for each entry that cannot be used
    except McpError as exc:
        SCREEN.alert(f"{exc}; no MCP server started")
        return
    for problem in problems:
        SCREEN.alert(problem)
    if not (named or trusted
            or user_trusts(path, specs, SCREEN, "--trust-project-mcp", MCP_TRUSTED)):
        return  # it came with the folder: it runs programs only once the user says yes
    for server, started in SERVERS.start_all(specs).items():  # at once, each within MCP_TIMEOUT
        if isinstance(started, McpError):
            SCREEN.alert(f"{started}; going on without it")
        else:
            offer_tools(server, started)


def offer_tools(server: str, tools: list) -> None:
    """Each tool the API accepts joins TOOLS (once, at start-up: the cached prefix stays valid),
    and the subagent types MCP_FOR_AGENT_TYPES allows. The others are left out, saying why."""
    offered = []
    for tool in tools[:MCP_TOOLS_PER_SERVER]:
        definition, why_not = offered_tool(server, tool, MCP_DESCRIPTION_LIMIT, MCP_SCHEMA_LIMIT,
                                           taken=MCP_TOOLS)
        if why_not:
            SCREEN.note(f"mcp server {server!r}: tool {tool.name[:80]!r} left out: {why_not}")
            continue
        TOOLS.append(definition)
        MCP_TOOLS[definition["name"]] = (server, tool)
        for agent_type, allowed in MCP_FOR_AGENT_TYPES.items():
            if allowed == "all" or is_read_only(tool):
                AGENT_TYPES[agent_type]["tools"].append(definition["name"])
        offered.append(tool.name)
    if len(tools) > MCP_TOOLS_PER_SERVER:
        SCREEN.note(f"mcp server {server!r}: {len(tools) - MCP_TOOLS_PER_SERVER} more tools left "
                    f"out (at most MCP_TOOLS_PER_SERVER={MCP_TOOLS_PER_SERVER})")
    SCREEN.note(f"mcp server {server!r}: {', '.join(offered) or 'no tools'}")


def run_mcp_tool(call, tools: list, screen: LoopScreen) -> dict:
    """Call a server's tool. Its answer enters the history only within MCP_RESULT_BUDGET, and
    only as content the API accepts; a server that fails is one line the model reads."""
    screen.tool_call(call.name, call.input)
    try:
        check_tool_call(call, tools)  # offered to this agent, with input that fits the schema
        server, tool = MCP_TOOLS[call.name]
        result = SERVERS.call(server, tool.name, call.input, STOPPED)  # MCP_TOOL_TIMEOUT at most
        ask_for_less = ways_to_ask_for_less(tool.input_schema)  # its own mode, page or limit
        content, cut = result_content(result, MCP_RESULT_BUDGET, "MCP_RESULT_BUDGET",
                                      ask_for_less)
        is_error = bool(result.is_error)  # the server said its tool failed
    except Exception as exc:  # noqa: BLE001 - a failing server must not end the session
        content = [{"type": "text", "text": tool_error_text(call.name, exc)}]
        cut = ""
        is_error = True
    shown = text_of(content)
    if cut:  # the user sees the budget at work, as the model does: the cut comes first
        shown = f"[{cut}]\n{shown}"
    screen.tool_result(shown, is_error)
    return {"type": "tool_result", "tool_use_id": call.id, "content": content, "is_error": is_error}


# -- cli -- the command line: one task, or an interactive session
def run_turn(messages: list, text: str) -> int:
    """One user turn. Failures print one line and leave the history valid. Returns an exit code."""
    before = copy_history(messages)  # to undo a turn that broke on a bug
    add_user_message(messages, text)
    request_before = KEPT.request  # the request to keep again if this turn is taken back
    KEPT.request = text  # survives a compaction word for word
    CALLS.start_turn()
    try:
        agent_loop(messages, SYSTEM + catalogue(SKILLS), TOOLS, SCREEN, compact_at=COMPACT_AT)
        return 0
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - limits, API errors, Ctrl-C, bugs
        exit_code = recover_from(exc, messages, before, SCREEN, STOPPED)  # history kept valid
        if messages == before:  # taken back (refused, too long, a bug): so is what it asked
            KEPT.request = request_before
        return exit_code


def command_line() -> int:
    settings = in_effect(MODEL_ID, MAX_TOKENS, client)  # and the endpoint, and the key's header
    settings += f" COMPACT_AT={COMPACT_AT}; /compact at the prompt compacts by hand."
    settings += (f" MCP_TIMEOUT={MCP_TIMEOUT:g} s, MCP_TOOL_TIMEOUT={MCP_TOOL_TIMEOUT:g} s, "
                 f"MCP_RESULT_BUDGET={MCP_RESULT_BUDGET:,} characters.")
    parser = argparse.ArgumentParser(description=__doc__, epilog=f"{KEYS}\n\n{settings}",
                                     formatter_class=PlainHelp)
    parser.add_argument("task", nargs="*", help="one task to run, then exit; none: interactive")
    parser.add_argument("--workdir", default=".", help="the folder the tools work in (default: .)")
    parser.add_argument("--skills-dir", action="append", default=[], metavar="FOLDER",
                        help="load the skills in FOLDER too (repeatable; or SKILLS_DIR, "
                        f"separated by {os.pathsep!r})")
    parser.add_argument("--mcp-config", metavar="FILE", help="start the MCP servers FILE names "
                        f"(Claude Code's .mcp.json format); default: the work folder's {MCP_FILE}")
    parser.add_argument("--trust-project-mcp", action="store_true",
                        help=f"use the work folder's {MCP_FILE} without asking first")
    args = parser.parse_args()
    check_setup(args, "v6", SCREEN)  # the API key is there and the folder exists, or exit
    skills_dirs = [Path(folder).resolve() for folder in args.skills_dir]  # from where typed
    mcp_file = args.mcp_config and Path(args.mcp_config).resolve()  # from where typed
    os.chdir(args.workdir)
    SCREEN.note(f"{MODEL_ID} in {Path.cwd()}")
    note_read_only_protection(SCREEN)  # what keeps read_only_bash read-only here: say it once
    install_skills(load_skills(skill_sources(skills_dirs)))
    start_mcp_servers(mcp_file, args.trust_project_mcp)
    if args.task:
        return run_turn([], " ".join(args.task))
    history = []
    prompt = Prompt(SCREEN, STOPPED)  # line editing, history, pasted blocks
    while True:
        text = prompt.read()  # the next message; None when the user leaves
        if text is None:
            return 0
        if text.strip() == "/compact":  # by hand, as in Claude Code
            compact_by_hand(history)
            continue
        run_turn(history, text)


def main() -> int:
    """The command line, then every MCP server stopped: none outlives the agent, Ctrl-C or not."""
    try:
        return command_line()
    finally:
        SERVERS.close()


if __name__ == "__main__":
    leave(main(), SCREEN)

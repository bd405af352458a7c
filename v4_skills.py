#!/usr/bin/env python3
"""v4_skills.py: skills. Folders of instructions, listed by name up front and loaded when a task needs one.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

    Task(prompt, agent_type) --> a subagent: this same loop, on a fresh history that holds only the prompt,
                                 with its type's tools --> only its final text comes back, as the tool_result
    skills/<name>/SKILL.md  --start-up-->  name + description, in the system prompt   (level 1: always there)
                            --Skill------>  the instructions, and a list of the files  (level 2: on demand)
    skills/<name>/*/...     --read_file-->  one of those files                          (level 3: on demand)

New in v2: a `todo` tool. The model sends its whole plan on every call; a TodoList checks the rules (at most
20 items, at most one in progress, no blank text) before the new list replaces the old one, so a bad update
changes nothing. The user sees the plan each time it changes: [ ] pending, [>] in progress, [x] completed.
Two reminders keep the plan in use: one in the session's first message, and one when open items have gone
untouched for TODO_REMINDER_ROUNDS rounds of tool calls.

New in v3: a `Task` tool. The model hands a side job to a subagent of a type from AGENT_TYPES: explore and
plan can only read (their shell is read_only_bash, which checks every word), code has the four base tools.
The subagent's reading never enters the main context. Several Task calls in one reply run in parallel, and
each subagent shows the user one status line instead of its tool calls.

New in v4: skills. Skills come from skills/ beside this script, .agents/skills/ in the work folder, SKILLS_DIR
and --skills-dir; a later folder wins a name. Loading one never changes the system prompt or the tools, so the
cached prefix stays valid. Subagents get no Skill tool.

Environment, also read from a .env file: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (another
Anthropic-compatible endpoint), MODEL_ID (default claude-sonnet-5), and the limits MAX_TOKENS (8000 per reply),
MAX_ROUNDS (50 model calls per turn), BASH_TIMEOUT (120 s per command).
Subagents: SUBAGENT_MAX_ROUNDS (25 model calls per subagent).
Interactive session: q, exit or Ctrl-D leaves; Ctrl-C stops the current turn and keeps the history.
No API key? `python -m scripted.demo v4` runs this script offline, against a scripted model.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import anthropic
import jsonschema
import yaml

# -- config -- environment variables, optionally from a .env file
def load_dotenv(*paths: Path) -> None:
    """Copy KEY=VALUE lines of .env files into the environment; the environment, then earlier files, win."""
    for path in filter(Path.is_file, paths):
        for line in path.read_text(encoding="utf-8").splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and not key.startswith("#"):
                os.environ.setdefault(key.strip(), value.strip().strip("'\""))

load_dotenv(Path.cwd() / ".env", Path(__file__).resolve().parent / ".env")
MODEL_ID = os.environ.get("MODEL_ID", "claude-sonnet-5")
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", 8000))  # per model reply
MAX_ROUNDS = int(os.environ.get("MAX_ROUNDS", 50))  # model calls per user turn, so a runaway loop stops
BASH_TIMEOUT = int(os.environ.get("BASH_TIMEOUT", 120))  # seconds
BASH_OUTPUT_LIMIT = 10_000_000  # bytes a command may write before it is stopped as a runaway
TOOL_RESULT_BUDGET = 30_000  # characters of one tool result that may enter the context
READ_LIMIT, LINE_LIMIT = 2000, 2000  # read_file: lines per call, characters per line
BLOCKED_COMMANDS = ["rm -rf /", "rm -rf ~", "sudo ", "mkfs", "shutdown", "reboot", "dd if=", ":(){"]
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")  # escape codes: never shown as they are
SYSTEM = ("You are a coding agent working in the user's current directory. Act with your tools instead of "
          "describing what you would do: read before you edit, keep changes small, run what you write to check it. "
          "Tool results may be cut to fit the context; the cut says how to get the rest. "
          "When the task is done, reply with a short summary and call no tool.")
client = anthropic.Anthropic(base_url=os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com")

# -- tools -- tool schemas: what the model sees
TOOLS = [  # paths are relative to the work directory; additionalProperties: False turns a typo into an error
    {"name": "bash", "description": "Run a shell command in the work directory. Returns stdout and stderr "
     f"together, then the exit code. Stopped after {BASH_TIMEOUT} s. Long output is cut: narrow it with grep or head.",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                      "required": ["command"], "additionalProperties": False}},
    {"name": "read_file", "description": f"Read a text file as numbered lines, at most {READ_LIMIT} lines per call "
     f"and {LINE_LIMIT} characters per line. For more, call again with offset = the next line number.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "offset": {"type": "integer", "minimum": 1, "description": "first line, 1-based"},
         "limit": {"type": "integer", "minimum": 1, "description": f"how many lines (default {READ_LIMIT})"}},
         "required": ["path"], "additionalProperties": False}},
    {"name": "write_file", "description": "Create or overwrite a file; missing parent folders are created.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                      "required": ["path", "content"], "additionalProperties": False}},
    {"name": "edit_file", "description": "Replace old_text with new_text in a file. old_text must match exactly "
     "one place, whitespace included; if it matches none or several, the error says so.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "old_text": {"type": "string", "minLength": 1}, "new_text": {"type": "string"}},
         "required": ["path", "old_text", "new_text"], "additionalProperties": False}},
]

# -- handlers -- tool handlers: what each tool does
class ToolError(Exception):
    """A failure the model can read and fix, such as a bad path or an ambiguous edit."""

def safe_path(path: str) -> Path:
    root = Path.cwd().resolve()
    full = (root / path).resolve()  # resolve() follows symlinks, so a link pointing out is caught too
    if not full.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the work directory; use a path inside {root}")
    return full

def run_bash(command: str) -> str:
    if any(blocked in command for blocked in BLOCKED_COMMANDS):
        raise ToolError("refused: the command matches the blocklist of destructive commands (a teaching guard)")
    with tempfile.TemporaryFile() as out:  # a file, not a pipe: a job left running in the background can't hang us
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        problem = wait_or_stop(proc, out)
        out.seek(0)
        output = out.read(BASH_OUTPUT_LIMIT).decode("utf-8", errors="replace").rstrip()
    if problem:
        raise ToolError(f"{problem}. Output so far:\n{output}")
    return f"{output}\n[exit code {proc.returncode}]"

def wait_or_stop(proc: subprocess.Popen, out) -> str:
    """Wait for a command; stop it and all it started if it runs too long, writes too much, or Ctrl-C comes."""
    deadline, problem = time.monotonic() + BASH_TIMEOUT, ""
    try:
        while proc.poll() is None and not problem:
            time.sleep(0.001)  # short: most commands end within milliseconds
            if time.monotonic() > deadline:
                problem = f"timed out after {BASH_TIMEOUT} s and was stopped"
            elif os.fstat(out.fileno()).st_size > BASH_OUTPUT_LIMIT:
                problem = f"stopped after writing more than {BASH_OUTPUT_LIMIT:,} bytes"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL) if os.name == "posix" else proc.kill()
            proc.wait()
    return problem

def read_file(path: str, offset: int = 1, limit: int = READ_LIMIT) -> str:
    data = readable_path(path).read_bytes()  # safe_path, widened to the skills' folders
    if b"\0" in data[:8192]:
        raise ToolError(f"{path} looks binary ({len(data):,} bytes); read_file shows text. Try bash: file, xxd | head")
    lines = data.decode("utf-8", errors="replace").splitlines()
    shown = [f"{number:6}\t{line[:LINE_LIMIT]}" + (" [line cut]" if len(line) > LINE_LIMIT else "")
             for number, line in enumerate(lines[offset - 1:offset - 1 + limit], start=offset)]
    if (last := offset - 1 + len(shown)) < len(lines):
        shown.append(f"[lines {offset}-{last} of {len(lines)}; call read_file with offset={last + 1} for more]")
    return "\n".join(shown) or f"[{path} has {len(lines)} lines; nothing from line {offset}]"

def write_file(path: str, content: str) -> str:
    target = safe_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return f"wrote {len(content):,} characters to {path}"

def edit_file(path: str, old_text: str, new_text: str) -> str:
    target = safe_path(path)
    text = target.read_bytes().decode("utf-8")  # bytes, not read_text(): \r\n line endings stay as they are
    if "\r\n" in text and old_text not in text:  # read_file showed the lines without their \r
        old_text, new_text = (part.replace("\r\n", "\n").replace("\n", "\r\n") for part in (old_text, new_text))
    if (matches := len(re.findall(f"(?={re.escape(old_text)})", text))) != 1:  # overlapping ones count too
        hint = "read the file and copy the text exactly" if matches == 0 else "add nearby lines so it matches one"
        raise ToolError(f"old_text matches {matches} places in {path}; {hint}")
    target.write_text(text.replace(old_text, new_text), encoding="utf-8", newline="")
    return f"edited {path}"

TOOL_HANDLERS = {"bash": run_bash, "read_file": read_file, "write_file": write_file, "edit_file": edit_file}

# -- budget -- the context budget: one limit for every tool result, enforced where results are sent
def clip(text: str, budget: int = TOOL_RESULT_BUDGET) -> str:
    """Keep the head and the tail of an over-long result; say in the middle what was cut and how to get it."""
    if len(text) <= budget:
        return text
    keep = budget - 400  # room for the note
    head, tail = text[:keep * 2 // 3], text[len(text) - keep // 3:]
    cut = text[len(head):len(text) - len(tail)]
    return (f"{head}\n\n[... {len(cut):,} of {len(text):,} characters ({cut.count(chr(10)):,} lines) cut here to "
            "fit the context budget. Ask for less at a time: read_file with offset and limit, or narrow the "
            f"command with grep, head, tail or sed -n ...]\n\n{tail}")

# -- dispatch -- running tool calls: every failure becomes a result the model can read
def error_result(tool_use_id: str, message: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": message, "is_error": True}

def run_tool(call, tools: list, show) -> dict:
    schemas = {tool["name"]: tool["input_schema"] for tool in tools}  # only the tools this agent was given
    show("tool", f"{call.name} {json.dumps(call.input, ensure_ascii=False)}")
    try:
        if call.name not in schemas:
            raise ToolError(f"unknown tool {call.name!r}; the tools you have are: {', '.join(schemas)}")
        jsonschema.validate(call.input, schemas[call.name])
        output, is_error = TOOL_HANDLERS[call.name](**call.input), False
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "input"
        problem = exc.message if len(exc.message) < 300 else f"breaks the rule {exc.validator}: {exc.validator_value!r}"
        output, is_error = f"invalid input for {call.name} ({where}): {problem}", True
    except ToolError as exc:
        output, is_error = str(exc), True
    except Exception as exc:  # noqa: BLE001 - a failing tool must not end the session; the model reads why
        output, is_error = f"{call.name} failed: {type(exc).__name__}: {exc}", True
    show("error" if is_error else "result", output)
    return {"type": "tool_result", "tool_use_id": call.id, "content": clip(output), "is_error": is_error}

def answer_tool_calls(messages: list, calls: list, tools: list, show) -> None:
    """Run the calls (Task calls first, all at once; the others in order); send all results back in one message."""
    results = []
    try:
        tasks = run_tasks(calls, tools, show)  # the Task calls, run at once: {call id: tool_result}
        for call in calls:
            results.append(tasks[call.id] if call.id in tasks else run_tool(call, tools, show))
    finally:  # the API rejects a tool_use without its tool_result, so answer every call, even after Ctrl-C
        results += [error_result(call.id, "interrupted by the user before this call finished")
                    for call in calls[len(results):]]
        messages.append({"role": "user", "content": results})

# -- todo -- planning: a todo list the model rewrites, checked against rules, kept in mind by reminders
TODO_LIMIT = 20  # items in one list; a longer plan is too fine-grained to keep current
TODO_REMINDER_ROUNDS = 10  # rounds of tool calls without a todo call, while items are open, before a reminder
TODO_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}  # each status, as the user sees it

TOOLS.append(
    {"name": "todo", "description": "Plan and track a task that takes several steps (three or more, or several "
     "tasks at once); skip it for a single quick step. Each call replaces the whole list, so send every item, "
     "completed ones too. Each item has content (what to do: 'Run the tests'), activeForm (shown while it is "
     f"worked on: 'Running the tests') and a status. Rules: at most {TODO_LIMIT} items; at most one in_progress, "
     "marked before you start that step; mark an item completed as soon as it is done, not in batches. "
     "Returns a one-line summary. A list that breaks a rule is rejected, the error names the rule and the item, "
     "and your previous list stays.",
     "input_schema": {"type": "object", "properties": {"items": {"type": "array", "items": {
         "type": "object", "properties": {"content": {"type": "string"},
                                          "status": {"type": "string", "enum": list(TODO_MARKS)},
                                          "activeForm": {"type": "string"}},
         "required": ["content", "status", "activeForm"], "additionalProperties": False}}},
         "required": ["items"], "additionalProperties": False}})  # no maxItems: TodoList says which rule, briefly

def shorten(text: str, width: int = 60) -> str:
    text = CONTROL_CHARS.sub("?", " ".join(text.split()))  # one line, and no escape codes
    return text if len(text) <= width else text[:width - 1] + "…"

class TodoList:
    """The model's plan. An update replaces the whole list, or breaks a rule and changes nothing."""

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.rounds_since_update = 0  # rounds of tool calls in which the model did not call todo

    def replace(self, items: list[dict]) -> None:
        if problem := self.broken_rule(items):
            raise ToolError(f"todo list rejected: {problem}. Your previous list is kept ({self.summary()}); "
                            "send the whole list again with this fixed.")
        self.items = [{"content": item["content"].strip(), "status": item["status"],
                       "activeForm": item["activeForm"].strip()} for item in items]

    @staticmethod
    def broken_rule(items: list[dict]) -> str | None:
        """The first rule the new list breaks, naming the item that breaks it; None if it keeps them all."""
        if len(items) > TODO_LIMIT:
            return f"{len(items)} items, but a list holds at most {TODO_LIMIT}; merge small steps into larger ones"
        labels = [f"item {number}" + (f" ({shorten(item['content'], 40)!r})" if item["content"].strip() else "")
                  for number, item in enumerate(items, 1)]
        for label, item in zip(labels, items, strict=True):
            if item["status"] not in TODO_MARKS:
                return f"{label} has status {item['status']!r}; use one of {', '.join(TODO_MARKS)}"
            for field in ("content", "activeForm"):
                if not item[field].strip():
                    return f"{label} has an empty {field}; every item needs both content and activeForm"
        working = [label for label, item in zip(labels, items, strict=True) if item["status"] == "in_progress"]
        if len(working) > 1:
            return (f"at most one item may be in_progress, but {' and '.join(working)} are; mark the finished "
                    "one completed, or set the others back to pending")
        return None

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
        return f"{progress}; nothing in progress, next: {shorten(pending[0])}" if pending else progress

    def render(self) -> str:
        """The plan as the user sees it each time it changes."""
        if not self.items:
            return "  (the todo list is empty)"
        lines = [f"  {TODO_MARKS[item['status']]} {shorten(item['content'], 90)}"
                 + (f" ({shorten(item['activeForm'])})" if item["status"] == "in_progress" else "")
                 for item in self.items]
        return "\n".join(lines + [f"  {len(self.items) - self.open_items()}/{len(self.items)} done"])

TODO = TodoList()  # one plan per session; v3's subagents are not given the todo tool, so they never touch it

def update_todos(items: list[dict]) -> str:
    TODO.replace(items)  # a list that breaks a rule raises ToolError here, and the old list stays
    print(TODO.render(), flush=True)
    return f"todo list updated: {TODO.summary()}"

TOOL_HANDLERS["todo"] = update_todos

# Reminders are text blocks in user messages, so the system prompt and tools stay byte-identical (cached).
# They only apply to an agent that has the todo tool: v3's subagents, which lack it, never see them.
PLANNING_REMINDER = {"type": "text", "text": "<reminder>If this task takes several steps, first write a plan with "
                     "the todo tool, then keep it current: one item in_progress while you work on it, marked "
                     "completed as soon as it is done.</reminder>"}

def has_todo_tool(tools: list) -> bool:
    return any(tool["name"] == "todo" for tool in tools)

def remind_to_plan(messages: list, tools: list) -> None:
    """Before the session's first model call, add the planning reminder to the user's first message."""
    first = messages[0]["content"]  # it has the reminder already if the first turn failed and the user went on
    if has_todo_tool(tools) and len(messages) == 1 and PLANNING_REMINDER not in first:
        first.append(PLANNING_REMINDER)

def remind_of_open_todos(messages: list, calls: list, tools: list) -> None:
    """After TODO_REMINDER_ROUNDS rounds of tool calls without todo, remind the model of its open items."""
    if not has_todo_tool(tools):
        return
    called = any(call.name == "todo" for call in calls)  # a rejected call counts: the model is at work on the plan
    TODO.rounds_since_update = 0 if called else TODO.rounds_since_update + 1
    if TODO.rounds_since_update >= TODO_REMINDER_ROUNDS and TODO.open_items():
        TODO.rounds_since_update = 0  # so the next reminder comes after another TODO_REMINDER_ROUNDS, not every round
        messages[-1]["content"].append({"type": "text", "text": (  # after the tool_results: the API wants them first
            f"<reminder>You have not updated the todo list for {TODO_REMINDER_ROUNDS} rounds of tool calls, and it "
            f"has open items ({TODO.summary()}). Mark what you finished completed and what you work on in_progress; "
            "if the plan changed, rewrite it.</reminder>")})

# -- agent_types -- subagent types: plain data, each with its own tools and system prompt
SUBAGENT_MAX_ROUNDS = int(os.environ.get("SUBAGENT_MAX_ROUNDS", 25))  # model calls per subagent
REPORT_BUDGET = 3000  # characters a subagent's report may have; the tool result still goes through clip()
REPORT_RULES = ("You are a subagent: another agent gave you this task and sees nothing of your work but your final "
                "message. Work on your own (nobody answers questions) and stop as soon as you can answer. End with "
                f"a report of at most {REPORT_BUDGET:,} characters: the facts asked for, with file paths and line "
                "numbers, not the story of your search.")
AGENT_TYPES = {  # "use_for" is what the main agent reads in the Task tool's description
    "explore": {
        "use_for": "read-only; searches and reads the code, reports what is where (files, lines, names)",
        "tools": ["read_only_bash", "read_file"],
        "system": "You explore a code base to answer a question. You can search and read, not change anything. "
                  + REPORT_RULES},
    "plan": {
        "use_for": "read-only; studies the code a change touches and returns a numbered step-by-step plan",
        "tools": ["read_only_bash", "read_file"],
        "system": "You plan a change to a code base: read what it touches, then reply with a numbered plan, one "
                  "step per line, naming files and functions, and a last step that checks the result. You can "
                  "search and read, not change anything. " + REPORT_RULES},
    "code": {
        "use_for": "changes files and runs commands; carries out a well-defined change and reports what it did",
        "tools": ["bash", "read_file", "write_file", "edit_file"],
        "system": SYSTEM + " " + REPORT_RULES},
}
TASK_TOOL = {"name": "Task", "description": (
    "Hand a self-contained side job to a subagent and get back only its final report: the files it reads and the "
    "commands it runs never enter your context. The subagent starts with no context: it does not see this "
    "conversation, only the prompt, so the prompt must say everything it needs (the goal, paths, what to report). "
    f"Reports are at most about {REPORT_BUDGET:,} characters. Several Task calls in one reply run in parallel, "
    "before the reply's other tool calls. Agent types:\n"
    + "\n".join(f"- {name}: {spec['use_for']}" for name, spec in AGENT_TYPES.items())),
    "input_schema": {"type": "object", "properties": {
        "description": {"type": "string", "description": "3-5 words, shown to the user while the subagent works"},
        "prompt": {"type": "string", "pattern": "\\S", "description": "the whole task, self-contained"},
        "agent_type": {"type": "string", "enum": list(AGENT_TYPES)}},
        "required": ["description", "prompt", "agent_type"], "additionalProperties": False}}
TOOLS.append(TASK_TOOL)

# -- subagent -- running a subagent: a fresh history, its own tools, only the report comes back
def run_subagent(description: str, prompt: str, agent_type: str) -> str:
    """The Task tool: run the same loop on the prompt alone and return only the final text."""
    spec = AGENT_TYPES[agent_type]
    tools = [tool for tool in TOOLS + SUBAGENT_TOOLS if tool["name"] in spec["tools"]]  # never Task: no recursion
    messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]  # nothing of the main agent's history
    status, outcome = BOARD.start(agent_type, description), "failed"
    try:
        report = agent_loop(messages, spec["system"], tools, SUBAGENT_MAX_ROUNDS, show=status.show)
        outcome = "done"
    except (AgentStopped, anthropic.APIError) as exc:  # the main agent reads why and decides what next
        why = explain_api_error(exc) if isinstance(exc, anthropic.APIError) else str(exc)
        raise ToolError(f"the {agent_type} subagent stopped without a report: {why}.{last_words(messages)}\n"
                        "Try again with a smaller task, or do it yourself.") from None
    finally:
        BOARD.finish(status, outcome)
    return report if report.strip() else f"(the {agent_type} subagent finished without a report)"

def last_words(messages: list) -> str:
    """The subagent's last text, so that a run that failed still hands back what it had found."""
    texts = [block.text for message in messages if message["role"] == "assistant"
             for block in message["content"] if block.type == "text"]
    if not texts:
        return ""
    cut = f" (its first {REPORT_BUDGET:,} of {len(texts[-1]):,} characters)" if len(texts[-1]) > REPORT_BUDGET else ""
    return f"\nIts last message{cut}:\n{texts[-1][:REPORT_BUDGET]}"

TOOL_HANDLERS["Task"] = run_subagent

# -- read_only -- a read-only shell for explore and plan: parse the command, check every word
READ_ONLY_COMMANDS = {  # command: its options that write files, run programs or never end; those are refused
    "ls": [], "cat": [], "head": [], "tail": ["-f", "-F", "--follow"], "wc": [], "grep": [], "cut": [],
    "sort": ["-o", "--output", "--compress-program"], "uniq": [], "diff": [], "file": ["-C", "--compile"],
    "stat": [], "du": [], "pwd": [], "echo": [], "tree": ["-o", "-R"], "rg": ["--pre", "--hostname-bin"],
    "find": ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"],
    "git log": ["--output", "--ext-diff"], "git show": ["--output", "--ext-diff"],
    "git diff": ["--output", "--ext-diff"], "git grep": ["-O", "--open-files-in-pager"],
    "git status": [], "git ls-files": [], "git blame": [],
}
REFUSED_TEXT = {  # looked for in the raw command line, quoted or not
    "\n": "a line break starts a second command", "\r": "a line break starts a second command",
    "`": "backticks run a command inside the command line", "$(": "$( ) runs a command inside the command line",
}
OPERATORS = {  # shell operators by their first character, and why each is refused (a plain | pipe is fine)
    ">": "> and >> write the output into a file", "<": "< is not supported: give the file name as an argument",
    ";": "; runs a second command", "&": "& and && run a second command", "|": "|| and |& run a second command",
    "(": "( ) runs commands in a subshell", ")": "( ) runs commands in a subshell",
}
READ_ONLY_BASH = {"name": "read_only_bash", "description": (
    "Run one read-only command in the work directory, or a pipeline of them joined by |. Returns stdout and stderr "
    f"together, then the exit code. Commands: {', '.join(READ_ONLY_COMMANDS)}. Every word reaches the command "
    "exactly as written: no globs (use find -name, or grep -r --include), no $VARIABLES, no > < ; & ( ) $( ). "
    "Options that write files or run programs are refused. Long output is cut: narrow it with grep or head."),
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                     "required": ["command"], "additionalProperties": False}}
SUBAGENT_TOOLS = [READ_ONLY_BASH]  # only subagents get it; the main agent has the full bash

def parse_read_only(command: str) -> list[list[str]]:
    """Split a command line into the argument lists of a pipeline; refuse whatever could change a file."""
    for text, why in REFUSED_TEXT.items():
        if text in command:
            raise ToolError(f"refused: {why}; read_only_bash runs one command, or a pipeline joined by |")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)  # splits 'a>b' into a, >, b as a shell does
    lexer.whitespace_split, lexer.commenters = True, ""
    try:
        words = list(lexer)
    except ValueError as exc:  # an unclosed quote, say: what cannot be parsed is refused
        raise ToolError(f"refused: cannot parse the command ({exc})") from None
    pipeline = [[]]
    for word in words:
        if word == "|":
            pipeline.append([])
        elif word and set(word) <= set(OPERATORS):
            raise ToolError(f"refused: {OPERATORS[word[0]]} (a quoted {word!r} counts too)")
        else:
            pipeline[-1].append(word)
    for argv in pipeline:
        check_read_only(argv)
    return pipeline

def check_read_only(argv: list[str]) -> None:
    if not argv:
        raise ToolError("refused: an empty command; a | needs a command on each side")
    name = " ".join(argv[:2]) if argv[0] == "git" else argv[0]
    if name not in READ_ONLY_COMMANDS:
        raise ToolError(f"refused: {name!r} is not one of the read-only commands this tool runs: "
                        f"{', '.join(READ_ONLY_COMMANDS)}. To get a file changed, say so in your report.")
    for word in argv[1:]:
        if option := refused_option(word, READ_ONLY_COMMANDS[name]):
            raise ToolError(f"refused: {name} {option} writes files, runs a program or never ends")
    if name == "uniq":  # its second file name is where it writes; "-" and every word after "--" are names too
        end = argv.index("--") if "--" in argv else len(argv)
        names = [word for word in argv[1:end] if word == "-" or not word.startswith("-")] + argv[end + 1:]
        if len(names) > 1:
            raise ToolError("refused: uniq writes into its second file name; give it one file, or pipe into it")

def refused_option(word: str, refused: list[str]) -> str | None:
    """The refused option that `word` spells, also abbreviated (--out=f) or grouped with others (-ro f)."""
    for option in refused:
        if option.startswith("--"):
            name = word.split("=")[0]
            spelled = len(name) > 2 and option.startswith(name)
        elif len(option) == 2:
            spelled = word.startswith("-") and not word.startswith("--") and option[1] in word[1:]
        else:  # find's single-dash words such as -delete
            spelled = word == option
        if spelled:
            return option
    return None

def run_read_only_bash(command: str) -> str:
    pipeline = parse_read_only(command)
    # Run exactly the words that were checked: quoted again, no shell can turn them into globs or substitutions.
    # GIT_OPTIONAL_LOCKS=0: without it, git status refreshes the index, which is a write.
    return run_bash("export GIT_OPTIONAL_LOCKS=0; " + " | ".join(shlex.join(argv) for argv in pipeline))

TOOL_HANDLERS["read_only_bash"] = run_read_only_bash

# -- parallel -- parallel Task calls, and one status line per subagent
PARALLEL_SUBAGENTS = 4  # subagents running at once; more Task calls wait for a free place
PROGRESS_TICK = 0.2  # seconds between redraws of the status lines on a terminal

class Status:
    """One subagent as the user sees it: a label, a count of its tool calls, a clock."""
    def __init__(self, agent_type: str, description: str) -> None:
        self.label = f"[{agent_type}] {shorten(description)}"  # shorten(): one line, no escape codes
        self.tools, self.started, self.cancelled = 0, time.monotonic(), False

    def show(self, kind: str, text: str) -> None:
        """The subagent's show callback: it counts tool calls instead of printing them."""
        if self.cancelled:  # Ctrl-C reaches only the main thread, so the subagent stops at its next step
            raise KeyboardInterrupt
        if kind == "tool":
            self.tools += 1

    def line(self, outcome: str = "") -> str:
        tools = "1 tool" if self.tools == 1 else f"{self.tools} tools"
        progress = f"{tools}, {time.monotonic() - self.started:.1f} s"
        return f"{self.label} {outcome} ({progress})" if outcome else f"{self.label} … {progress}"

class StatusBoard:
    """The status lines of the running subagents. Threads print through its lock, so lines never mix. On a terminal
    the lines stay below everything else and are redrawn in place; elsewhere (a pipe, a log, the tests) each
    subagent prints one line when it starts and one when it ends."""
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: list[Status] = []
        self.drawn = 0  # status lines on the terminal now; the cursor is at the end of the last one

    def start(self, agent_type: str, description: str) -> Status:
        status = Status(agent_type, description)
        with self.lock:
            self._erase()
            self.running.append(status)
            if not sys.stdout.isatty():
                print(f"{DIM}{status.label} … started{RESET}", flush=True)
            self._draw()
        return status

    def finish(self, status: Status, outcome: str) -> None:
        with self.lock:
            if status in self.running:  # after Ctrl-C it is not: stop_all() took it off
                self._erase()
                self.running.remove(status)
                print(f"{DIM}{status.line(outcome)}{RESET}", flush=True)
                self._draw()

    def printer(self, show):
        """A show callback that threads can share: each event prints whole, above the status lines."""
        def locked_show(kind: str, text: str) -> None:
            with self.lock:
                self._erase()
                show(kind, text)
                self._draw()
        return locked_show

    def redraw(self) -> None:
        with self.lock:
            self._erase()
            self._draw()

    def stop_all(self) -> None:
        """Ctrl-C: tell every running subagent to stop, and leave its status line as it is."""
        with self.lock:
            for status in self.running:
                status.cancelled = True
            self.running.clear()
            if self.drawn:
                print(flush=True)
            self.drawn = 0

    def _erase(self) -> None:  # bottom up, so the cursor ends where the first status line began
        if self.drawn:
            sys.stdout.write("\r\033[K" + "\033[A\r\033[K" * (self.drawn - 1))
            self.drawn = 0

    def _draw(self) -> None:
        if sys.stdout.isatty() and self.running:
            width = shutil.get_terminal_size().columns - 1  # a wrapped line would throw off the erasing
            sys.stdout.write("\n".join(f"{DIM}{status.line()[:width]}{RESET}" for status in self.running))
            self.drawn = len(self.running)
        sys.stdout.flush()

BOARD = StatusBoard()  # one terminal, so one board

def run_tasks(calls: list, tools: list, show) -> dict:
    """Run the reply's Task calls at the same time, one thread each; return their tool_results by call id."""
    tasks = [call for call in calls if call.name == "Task"]
    if not tasks or "Task" not in [tool["name"] for tool in tools]:
        return {}  # a subagent has no Task tool: run_tool answers its Task calls as unknown
    pool = ThreadPoolExecutor(max_workers=min(len(tasks), PARALLEL_SUBAGENTS))
    futures = {call.id: pool.submit(run_tool, call, tools, BOARD.printer(show)) for call in tasks}
    try:
        while wait(futures.values(), timeout=PROGRESS_TICK).not_done:
            BOARD.redraw()  # the clocks tick even while every subagent waits for the model
        return {call_id: future.result() for call_id, future in futures.items()}
    except BaseException:  # Ctrl-C: the subagents stop at their next step; the caller answers every call
        BOARD.stop_all()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)

# -- skills -- skills: folders of instructions, listed in the system prompt, loaded when needed
REPO_SKILLS = Path(__file__).resolve().parent / "skills"  # beside the script, wherever it is run from
# SKILLS_DIR holds folders separated by os.pathsep; resolved now, so relative to where the script was started
SKILLS_DIR = [Path(folder).resolve() for folder in os.environ.get("SKILLS_DIR", "").split(os.pathsep) if folder]
NAME_LIMIT, DESCRIPTION_LIMIT = 64, 1024  # characters, as the Agent Skills specification says
NAME_CHARACTERS = re.compile(r"[a-z0-9-]+")
KNOWN_FIELDS = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"]
RESOURCE_LIST_LIMIT = 50  # files listed when a skill is loaded, so a crowded folder cannot flood the context
SKILLS_PROMPT = ("\n\nSkills are folders of instructions for particular kinds of task. When a task matches a skill "
                 "below, call the Skill tool with its name before you start, and follow what it returns; read the "
                 "skill's other files with read_file only when its instructions call for them.\n")

@dataclass
class Skill:
    name: str
    description: str
    folder: Path  # resolved, so that read_file can tell what lies inside it
    body: str  # the instructions: SKILL.md without its front matter

SKILLS: dict[str, Skill] = {}  # this session's skills by name, set once by install_skills()

class SkillSkipped(Exception):
    """A SKILL.md that cannot be used at all: unreadable, no front matter, broken YAML, or no description."""

def warn(text: str) -> None:
    print(f"[{text}]", file=sys.stderr)

def shown_path(path: Path) -> str:
    """A resolved path as read_file takes it: relative inside the work directory, absolute outside."""
    root = Path.cwd().resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

def skill_sources(named: list[Path]) -> list[Path]:
    """The folders to look in, lowest priority first: the repo's, the project's, SKILLS_DIR, then --skills-dir."""
    named = [*SKILLS_DIR, *named]
    for folder in named:
        if not folder.is_dir():  # the default folders may well be missing; one the user named should not be
            warn(f"no skills folder at {folder}; skipped")
    project = Path.cwd().resolve() / ".agents" / "skills"
    return list(dict.fromkeys([REPO_SKILLS, project, *named]))  # a folder named twice is read once

def load_skills(sources: list[Path]) -> dict[str, Skill]:
    """Every <source>/<name>/SKILL.md that can be used. A later source wins a name, and says so."""
    skills: dict[str, Skill] = {}
    for source in sources:
        for skill_md in sorted(source.glob("*/SKILL.md")):  # a missing source has none
            try:
                skill = read_skill(skill_md)
            except SkillSkipped as exc:
                warn(f"skill skipped: {shown_path(skill_md.resolve())} {exc}")
                continue
            if skill.name in skills:
                print(f"{DIM}[skill {skill.name} from {shown_path(skill.folder.parent)} overrides the one in "
                      f"{shown_path(skills[skill.name].folder.parent)}]{RESET}", flush=True)
            skills[skill.name] = skill
    if skills:
        print(f"{DIM}[skills: {', '.join(sorted(skills))}]{RESET}", flush=True)
    return skills

def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body) of a SKILL.md whose first line is '---' and that has a closing '---' line."""
    lines = text.splitlines()
    fences = [number for number, line in enumerate(lines) if line.rstrip() == "---"]
    if len(fences) < 2 or fences[0] != 0:
        raise SkillSkipped("has no front matter: name and description between two '---' lines at the top")
    return "\n".join(lines[1:fences[1]]), "\n".join(lines[fences[1] + 1:]).strip()

def read_skill(skill_md: Path) -> Skill:
    """Parse one SKILL.md. Lenient, as the spec's guide for clients advises: a flaw gets a warning and the skill
    still loads; only a skill the model could not choose (no front matter or no description) is skipped."""
    try:
        front_matter, body = split_front_matter(skill_md.read_text(encoding="utf-8-sig"))
        fields = yaml.safe_load(front_matter)
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillSkipped(f"cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)  # counts from the front matter's first line, the file's second
        where, problem = f" (line {mark.line + 2})" if mark else "", getattr(exc, "problem", None) or exc
        raise SkillSkipped(f"has front matter that is not valid YAML: {problem}{where}") from None
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # valid YAML can fail too: 2024-02-30
        raise SkillSkipped(f"has front matter that cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not isinstance(fields, dict):
        raise SkillSkipped("has front matter that is not a set of 'key: value' fields")
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillSkipped("has no description; the model needs one to know when to use the skill")
    for problem in spec_problems(fields, skill_md.parent.name):
        warn(f"skill warning: {shown_path(skill_md.resolve())} {problem}")
    declared = fields.get("name")
    name = declared if isinstance(declared, str) and declared else skill_md.parent.name
    name = name.encode("utf-8", errors="replace").decode("utf-8")  # a folder name need not be UTF-8; a request must
    return Skill(name, description.strip()[:DESCRIPTION_LIMIT], skill_md.parent.resolve(), body)

def spec_problems(fields: dict, folder: str) -> list[str]:
    """What the Agent Skills specification forbids but a lenient client loads anyway, one sentence each."""
    name, problems = fields.get("name"), []
    if not isinstance(name, str) or not name:
        problems.append(f"has no usable name; its folder name {folder!r} is used")
    else:
        if len(name) > NAME_LIMIT:
            problems.append(f"has a name of {len(name)} characters; the limit is {NAME_LIMIT}")
        if not NAME_CHARACTERS.fullmatch(name):
            problems.append(f"has the name {name!r}; use only lowercase letters, digits and hyphens")
        if name.startswith("-") or name.endswith("-"):
            problems.append(f"has the name {name!r}; it must not start or end with a hyphen")
        if "--" in name:
            problems.append(f"has the name {name!r}; it must not have two hyphens in a row")
        if name != folder:
            problems.append(f"has the name {name!r}, which does not match its folder {folder!r}")
    if len(description := fields["description"].strip()) > DESCRIPTION_LIMIT:
        problems.append(f"has a description of {len(description):,} characters; only the first "
                        f"{DESCRIPTION_LIMIT:,} are used")
    if unknown := [str(field) for field in fields if field not in KNOWN_FIELDS]:
        problems.append(f"has unknown field(s) {', '.join(unknown)}; the spec knows {', '.join(KNOWN_FIELDS)}")
    return problems

def catalogue(skills: dict[str, Skill]) -> str:
    """Level 1: one line per skill, name and description, for the system prompt."""
    entries = [f"- {name}: {' '.join(skills[name].description.split())}" for name in sorted(skills)]
    return SKILLS_PROMPT + "<available_skills>\n" + "\n".join(entries) + "\n</available_skills>"

def skill_tool(names: list[str]) -> dict:
    return {"name": "Skill", "description": "Load a skill named in the system prompt's catalogue. Returns its "
            "instructions in <skill_content>, then the skill's folder and its other files (names and sizes, not "
            "contents). Call it before starting a task that matches the skill's description.",
            "input_schema": {"type": "object", "properties": {"name": {"type": "string", "enum": names}},
                             "required": ["name"], "additionalProperties": False}}

def install_skills(skills: dict[str, Skill]) -> None:
    """Once, at start-up: the catalogue joins the system prompt and the Skill tool joins the tools. Loading a
    skill later changes neither, so every request of the session shares the same cached prefix."""
    global SYSTEM
    if not skills:
        return  # no catalogue and no Skill tool: the agent is exactly v1
    SKILLS.update(skills)
    SYSTEM += catalogue(skills)
    TOOLS.append(skill_tool(sorted(skills)))

def resource_files(folder: Path) -> list[Path]:
    """A skill's files besides SKILL.md: scripts/, references/, assets/ and whatever else is there, unhidden,
    that read_file can read (a link to a file outside the folder is left out)."""
    return [path for path in sorted(folder.rglob("*")) if path.is_file() and path != folder / "SKILL.md"
            and not any(part.startswith(".") for part in path.relative_to(folder).parts)
            and path.resolve().is_relative_to(folder)]

def activate_skill(name: str) -> str:
    """Level 2: the instructions, then where the skill's other files are; level 3 is reading one of them."""
    skill = SKILLS[name]  # the input schema's enum already refused any other name
    folder, files = shown_path(skill.folder), resource_files(skill.folder)
    listed = [f"  {path.relative_to(skill.folder).as_posix()} ({path.stat().st_size:,} bytes)"
              for path in files[:RESOURCE_LIST_LIMIT]]
    if len(files) > RESOURCE_LIST_LIMIT:
        more = len(files) - RESOURCE_LIST_LIMIT
        listed.append(f"  [{more} more; list them with bash: find {shlex.quote(folder)} -type f]")
    files_note = (f"Its other files are not loaded; when the instructions call for one, read it with read_file at "
                  f"the folder plus the path listed, e.g. {folder}/{files[0].relative_to(skill.folder).as_posix()}"
                  if files else "It has no other files.")
    text = "\n".join([f'<skill_content name="{name}">', skill.body, "</skill_content>",
                      f"Skill folder: {folder} (its SKILL.md has these instructions in full, if they were cut "
                      f"above). {files_note}", *listed])
    return text.encode("utf-8", errors="replace").decode("utf-8")  # file names need not be UTF-8; a request must

def readable_path(path: str) -> Path:
    """Level 3: read_file may also read inside the folders of this session's skills, wherever they are.
    write_file and edit_file still use safe_path: a skill folder outside the work directory stays read-only."""
    full = (Path.cwd() / path).resolve()
    if any(full.is_relative_to(skill.folder) for skill in SKILLS.values()):
        return full
    return safe_path(path)

TOOL_HANDLERS["Skill"] = activate_skill  # offered to the model only when install_skills() added its schema

# -- model -- talking to the model, and showing the user what happens
COLOR = sys.stdout.isatty() and "NO_COLOR" not in os.environ
DIM, CYAN, RED, RESET = ("\033[2m", "\033[36m", "\033[31m", "\033[0m") if COLOR else ("", "", "", "")

def print_event(kind: str, text: str) -> None:
    """Show one event of the loop: streamed text, a tool call, its result, or token usage."""
    if kind == "text":
        print(text, end="", flush=True)
    elif kind in ("result", "error"):
        lines = text.strip().splitlines() or ["(no output)"]
        more = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        print(f"  {RED if kind == 'error' else DIM}{CONTROL_CHARS.sub('?', lines[0][:100])}{more}{RESET}", flush=True)
    else:
        print(f"{CYAN}> {text[:100]}{RESET}" if kind == "tool" else f"{DIM}  [{text}]{RESET}", flush=True)

def call_model(messages: list, system: str, tools: list, show) -> anthropic.types.Message:
    """One streamed model call. The same system prompt and tools every time, so the prefix stays cached."""
    with client.messages.stream(model=MODEL_ID, max_tokens=MAX_TOKENS, system=system, tools=tools,
                                messages=messages, cache_control={"type": "ephemeral"}) as stream:
        for text in stream.text_stream:
            show("text", text)
        response = stream.get_final_message()
    if any(block.type == "text" for block in response.content):
        show("text", "\n")
    usage = response.usage
    show("usage", f"tokens: in {usage.input_tokens:,}, out {usage.output_tokens:,}, "
                  f"cache read {usage.cache_read_input_tokens or 0:,}")
    return response

# -- loop -- the agent loop
class AgentStopped(Exception):
    """The turn ended without a finished answer: the round cap, max_tokens, or a refusal."""

def agent_loop(messages: list, system: str, tools: list, max_rounds: int = MAX_ROUNDS, show=print_event) -> str:
    """Call the model, run the tools it asks for, repeat until it answers. Returns the final text."""
    remind_to_plan(messages, tools)
    for _ in range(max_rounds):
        response = call_model(messages, system, tools, show)
        content = [block for block in response.content if block.type != "text" or block.text.strip()]
        if content:  # the API rejects empty messages and blank text blocks, so an empty reply is not kept
            messages.append({"role": "assistant", "content": content})
        calls = [block for block in response.content if block.type == "tool_use"]
        if response.stop_reason in ("max_tokens", "refusal", "model_context_window_exceeded"):
            reason = f"the reply stopped early ({response.stop_reason}); it is incomplete"
            if calls:  # cut-off calls are never run, but each still needs its result
                messages.append({"role": "user", "content": [error_result(call.id, f"not run: {reason}") for call in calls]})
            raise AgentStopped(reason)
        if calls:
            answer_tool_calls(messages, calls, tools, show)
            remind_of_open_todos(messages, calls, tools)
        elif response.stop_reason != "pause_turn":  # pause_turn: send the history back and the model resumes
            return "".join(block.text for block in response.content if block.type == "text")
    raise AgentStopped(f"no final answer after {max_rounds} model calls (MAX_ROUNDS); say how to go on")

# -- cli -- the command line: one task, or an interactive session
API_ERRORS = [  # (SDK exception, what the user should do), most specific first
    (anthropic.AuthenticationError, "the API rejected the key (401): check ANTHROPIC_API_KEY"),
    (anthropic.APIConnectionError, "could not reach the API at {url}: check ANTHROPIC_BASE_URL and your network"),
    (anthropic.RateLimitError, "rate limited (429), still after the SDK's retries: wait a minute, then try again"),
    (anthropic.NotFoundError, "not found (404): is MODEL_ID={model} offered at {url}?"),
    (anthropic.APIStatusError, "the API answered {status}, still after the SDK's retries: {exc}"),
]

def explain_api_error(exc: anthropic.APIError) -> str:
    hint = next((hint for kind, hint in API_ERRORS if isinstance(exc, kind)), "API error: {exc}")
    return hint.format(url=client.base_url, model=MODEL_ID, status=getattr(exc, "status_code", "?"), exc=exc)

def add_user_message(messages: list, text: str) -> None:
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":  # a stopped turn ended on our side: join it
        messages[-1]["content"].append(block)
    else:
        messages.append({"role": "user", "content": [block]})

def run_turn(messages: list, text: str) -> int:
    """One user turn. Failures print one line and leave the history valid. Returns an exit code."""
    before = [{**message, "content": message["content"][:]} for message in messages]  # to undo a broken turn
    add_user_message(messages, text)
    try:
        agent_loop(messages, SYSTEM, TOOLS)
        return 0
    except AgentStopped as exc:
        print(f"\n[stopped: {exc}]", file=sys.stderr)
    except anthropic.APIError as exc:
        print(f"\n[error: {explain_api_error(exc)}]", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - a bug must not end the session, nor break the next turn
        messages[:] = before
        print(f"\n[error: {type(exc).__name__}: {exc}; this turn is not kept in the history]", file=sys.stderr)
    except KeyboardInterrupt:
        print("\n[interrupted: the turn stopped here; your conversation is kept]", file=sys.stderr)
        return 130
    return 1

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", nargs="*", help="run this one task and exit (0 on success); none: interactive")
    parser.add_argument("--workdir", default=".", help="folder the tools work in (default: the current one)")
    parser.add_argument("--skills-dir", action="append", default=[], metavar="FOLDER",
                        help=f"load the skills in FOLDER too (repeatable; or SKILLS_DIR, separated by {os.pathsep!r})")
    args = parser.parse_args()
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        sys.exit("ANTHROPIC_API_KEY is not set: export it or put it in .env (see .env.example). "
                 "No key? Try the offline demo: python -m scripted.demo v4")
    if not os.path.isdir(args.workdir):
        sys.exit(f"--workdir {args.workdir!r} is not a folder")
    skills_dirs = [Path(folder).resolve() for folder in args.skills_dir]  # relative to where the user typed them
    os.chdir(args.workdir)
    print(f"{DIM}[{MODEL_ID} in {Path.cwd()}]{RESET}")
    install_skills(load_skills(skill_sources(skills_dirs)))
    if args.task:
        return run_turn([], " ".join(args.task))
    history = []
    while True:
        try:
            text = input(f"\n{CYAN}you>{RESET} ").strip()
        except (EOFError, KeyboardInterrupt):
            text = "q"
        if text in ("q", "quit", "exit"):
            return 0
        if text:
            run_turn(history, text)

if __name__ == "__main__":
    sys.exit(main())

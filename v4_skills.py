#!/usr/bin/env python3
"""v4_skills.py: skills. Folders of instructions, listed by name up front, loaded when needed.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

    Task(prompt, agent_type) --> a subagent: this same loop, on a fresh history holding only the
                                 prompt, with its type's tools --> only its final text comes back

    skills/<name>/SKILL.md --start-up--> name + description, in the system prompt  (level 1: always)
                           --Skill-----> the instructions, and a list of its files (level 2: on use)
    skills/<name>/*/...    --read_file-> one of those files, when they call for it (level 3: on use)

Read from the top: configuration, the tools the model sees, the loop, what each tool does, and
the command line. The "plumbing" section at the end (guards, limits, what the screen shows) can
wait for a second reading: the lesson calls it by names that say what it does.

New in v2: a `todo` tool. The model sends its whole plan on every call; a TodoList checks the
rules (at most 20 items, at most one in progress, no blank text) before the new list replaces the
old one, so a bad update changes nothing. The user sees the plan each time it changes: [ ] pending,
[>] in progress, [x] completed. Two reminders keep the plan in use: one in the session's first
message, and one when open items have gone untouched for TODO_REMINDER_ROUNDS rounds of tool calls.

New in v3: a `Task` tool. The model hands a side job to a subagent of a type from AGENT_TYPES:
explore and plan can only read (their shell is read_only_bash, which checks every word), code has
the four base tools. The subagent's reading never enters the main context. Several Task calls in
one reply run in parallel, and each subagent shows the user one status line, not its tool calls.

New in v4: skills. Skills come from skills/ beside this script, .agents/skills/ in the work folder,
SKILLS_DIR and --skills-dir; a later folder wins a name. Loading one never changes the system
prompt or the tools, so the cached prefix stays valid. Subagents get no Skill tool.

Environment, also read from a .env file: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL
(another Anthropic-compatible endpoint), MODEL_ID (default claude-sonnet-5), and the limits
MAX_TOKENS (8000 per reply), MAX_ROUNDS (50 model calls per turn), BASH_TIMEOUT (120 s per
command).
Subagents: SUBAGENT_MAX_ROUNDS (25 model calls per subagent).
Interactive session: arrow keys edit the line and recall earlier ones (kept in ~/.agent_history;
AGENT_HISTORY=off keeps none, AGENT_HISTORY=FILE keeps them there). A line that ends in a
backslash goes on to the next one, and a pasted block of lines is one message. Ctrl-C stops the
current turn and keeps the history; at the prompt it clears the line. Ctrl-C twice, Ctrl-D, q or
exit leaves. On a terminal, a spinner shows what the agent waits for, and each retry is shown.
No API key? `python -m scripted.demo v4` runs this script offline, against a scripted model.
"""
import argparse
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import anthropic
import yaml
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
    """Run the calls (Task calls first, all at once; then the others in order); send all the
    results back in one user message."""
    results = []
    try:
        tasks = run_tasks(calls, tools, screen)  # the Task calls, run at once: {call id: result}
        for call in calls:
            if call.id in tasks:
                results.append(tasks[call.id])
            else:
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
    lines, total = read_lines(path_for_reading(path), offset, limit)  # or in a skill folder
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
    profile = AGENT_TYPES[agent_type]
    all_tools = TOOLS + SUBAGENT_TOOLS
    tools = [tool for tool in all_tools if tool["name"] in profile["tools"]]  # never Task itself
    messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]  # nothing else
    status = BOARD.start(agent_type, description)  # one status line instead of its tool calls
    outcome = "failed"
    try:
        report = agent_loop(messages, profile["system"], tools, status, SUBAGENT_MAX_ROUNDS)
        outcome = "done"
    except (AgentStopped, anthropic.APIError) as exc:  # the main agent reads why, decides what next
        raise subagent_failed(agent_type, exc, messages) from None
    finally:
        BOARD.finish(status, outcome)
    if not report.strip():
        return f"(the {agent_type} subagent finished without a report)"
    return report


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
    pipeline = parse_read_only(command)  # every word checked; anything that could write refused
    return run_bash(as_command_line(pipeline))  # exactly the checked words, quoted again


TOOL_HANDLERS["read_only_bash"] = run_read_only_bash

# -- parallel -- the Task calls of one reply run at the same time
PARALLEL_SUBAGENTS = 4  # subagents running at once; more Task calls wait for a free place


def run_tasks(calls: list, tools: list, screen: "Screen") -> dict:
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
            skill = read_skill_or_warn(skill_md)  # None, after one line, if it cannot be used
            if skill is None:
                continue
            if skill.name in skills:
                note_override(skills[skill.name], skill)
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
    """Level 1: one line per skill, name and description, for the system prompt."""
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
    """Once, at start-up: the catalogue joins the system prompt and the Skill tool joins the tools.
    Loading a skill later changes neither, so every request shares the same cached prefix."""
    global SYSTEM
    if not skills:
        return  # no catalogue and no Skill tool: the agent is exactly v3
    SKILLS.update(skills)
    SYSTEM += catalogue(skills)
    TOOLS.append(skill_tool(sorted(skills)))


def activate_skill(name: str) -> str:
    """Level 2: the instructions, then where the skill's other files are; level 3 is reading one."""
    skill = SKILLS[name]  # the input schema's enum already refused any other name
    parts = [f'<skill_content name="{name}">', skill.body, "</skill_content>"]
    parts += resource_listing(skill)  # its folder, and its other files by name and size
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
    parser.add_argument("--skills-dir", action="append", default=[], metavar="FOLDER",
                        help="load the skills in FOLDER too (repeatable; or SKILLS_DIR, "
                        f"separated by {os.pathsep!r})")
    args = parser.parse_args()
    check_setup(args, "v4")  # the API key is there and the folder exists, or exit
    skills_dirs = [Path(folder).resolve() for folder in args.skills_dir]  # from where typed
    os.chdir(args.workdir)
    SCREEN.note(f"{MODEL_ID} in {Path.cwd()}")
    note_if_parsing_only()  # read_only_bash without an OS sandbox here: say so, once
    install_skills(load_skills(skill_sources(skills_dirs)))
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
import atexit
import contextlib
import errno
import functools
import json
import logging
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from concurrent.futures import wait

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


# -- plumbing/subagents -- what the main agent reads when a subagent fails
def subagent_failed(agent_type: str, exc: Exception, messages: list) -> ToolError:
    if isinstance(exc, anthropic.APIError):
        why = explain_api_error(exc)
    else:
        why = str(exc)
    return ToolError(f"the {agent_type} subagent stopped without a report: {why}."
                     f"{last_message(messages)}\nTry again with a smaller task, or do it yourself.")


def last_message(messages: list) -> str:
    """The subagent's last text, so that a run that failed still hands back what it found."""
    texts = []
    for message in messages:
        if message["role"] == "assistant":
            texts += [block.text for block in message["content"] if block.type == "text"]
    if not texts:
        return ""
    last = texts[-1]
    cut = ""
    if len(last) > REPORT_BUDGET:
        cut = f" (its first {REPORT_BUDGET:,} of {len(last):,} characters)"
    return f"\nIts last message{cut}:\n{last[:REPORT_BUDGET]}"


# -- plumbing/read_only -- the read-only shell's parser: one command or a pipeline, every word
REFUSED_TEXT = {  # looked for in the raw command line, quoted or not
    "\n": "a line break starts a second command", "\r": "a line break starts a second command",
    "`": "backticks run a command inside the command line",
    "$(": "$( ) runs a command inside the command line",
}
OPERATORS = {  # shell operators by their first character, and why each is refused (| is fine)
    ">": "> and >> write the output into a file",
    "<": "< is not supported: give the file name as an argument",
    ";": "; runs a second command", "&": "& and && run a second command",
    "|": "|| and |& run a second command",
    "(": "( ) runs commands in a subshell", ")": "( ) runs commands in a subshell",
}


def parse_read_only(command: str) -> list[list[str]]:
    """Split a command line into the argument lists of a pipeline; refuse whatever could change
    a file."""
    for text, why in REFUSED_TEXT.items():
        if text in command:
            raise ToolError(f"refused: {why}; read_only_bash runs one command, or a pipeline "
                            "joined by |")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)  # 'a>b': a, >, b, as a shell
    lexer.whitespace_split = True
    lexer.commenters = ""
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
    name = argv[0]
    if name == "git":
        name = " ".join(argv[:2])
    if name not in READ_ONLY_COMMANDS:
        raise ToolError(f"refused: {name!r} is not one of the read-only commands this tool runs: "
                        f"{', '.join(READ_ONLY_COMMANDS)}. To get a file changed, say so in your "
                        "report.")
    for word in argv[1:]:
        option = refused_option(word, READ_ONLY_COMMANDS[name])
        if option:
            raise ToolError(f"refused: {name} {option} writes files, runs a program or never ends")
    if name == "uniq" and len(uniq_file_names(argv)) > 1:
        raise ToolError("refused: uniq writes into its second file name; give it one file, or "
                        "pipe into it")


def uniq_file_names(argv: list[str]) -> list[str]:
    """uniq's file names: words that are not options, "-", and every word after "--"."""
    end = len(argv)
    if "--" in argv:
        end = argv.index("--")
    names = [word for word in argv[1:end] if word == "-" or not word.startswith("-")]
    return names + argv[end + 1:]


def refused_option(word: str, refused: list[str]) -> str | None:
    """The refused option that `word` spells, also abbreviated (--out=f) or grouped (-ro f)."""
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


def as_command_line(pipeline: list[list[str]]) -> str:
    """The checked words, quoted again so no shell can turn them into globs or substitutions;
    git with its program-running features off, a memory limit, and the OS sandbox (below)."""
    commands = [shlex.join(without_git_programs(argv)) for argv in pipeline]
    script = f"ulimit -v {READ_ONLY_MEMORY_KB} 2>/dev/null; " + " | ".join(commands)
    return "exec " + shlex.join([*read_only_launcher(), "/bin/sh", "-c", script])


# -- plumbing/sandbox -- read-only at the OS level too: bubblewrap where it runs, else parsing only
# The parser decides what may run; the sandbox makes a command that got through unable to write,
# reach the network, see the API key or read outside the work folder. Both modes: a cleared
# environment, git without the settings that run programs, a memory limit.
READ_ONLY_MEMORY_KB = 1024 * 1024  # address space of each command: tail /dev/zero stops at 1 GiB
SANDBOX_TMP_BYTES = 64 * 1024 * 1024  # the sandbox's private /tmp, thrown away after each command
GIT_SAFE_CONFIG = [  # -c beats the repository's .git/config, which an untrusted repo can fill
    "core.fsmonitor=false", "diff.external=", "log.showSignature=false", "gpg.program=false",
    "gpg.ssh.program=false", "gpg.x509.program=false", "protocol.allow=never", "gc.auto=0",
    "maintenance.auto=false", "core.pager=cat",
    "diff.autoRefreshIndex=false"]  # git diff would rewrite .git/index, optional locks or not
GIT_NO_PROGRAM_FLAGS = {"log": ["--no-ext-diff", "--no-textconv"], "diff": ["--no-ext-diff",
                        "--no-textconv"], "show": ["--no-ext-diff", "--no-textconv"],
                        "blame": ["--no-textconv"], "grep": ["--no-textconv"]}
READ_ONLY_ENV = {  # all a read-only command gets: no API key; git neither locks nor fetches
    "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
    "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat", "PAGER": "cat", "GIT_CONFIG_NOSYSTEM": "1"}
# What the sandbox shows besides the work folder: programs, libraries and the few files of /etc they
# read (all of /etc would include /etc/shadow, readable when the agent runs as root).
SANDBOX_SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/passwd",
                  "/etc/group", "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/localtime",
                  "/etc/alternatives", "/etc/magic", "/etc/magic.mime"]


def without_git_programs(argv: list[str]) -> list[str]:
    """git with GIT_SAFE_CONFIG, and its no-program flags last (before any --), so they win over
    a --textconv of the model's."""
    if argv[0] != "git":
        return argv
    config = []
    for setting in GIT_SAFE_CONFIG:
        config += ["-c", setting]
    words = argv[2:]
    end = words.index("--") if "--" in words else len(words)
    flags = GIT_NO_PROGRAM_FLAGS.get(argv[1], [])
    return ["git", *config, argv[1], *words[:end], *flags, *words[end:]]


def read_only_launcher() -> list[str]:
    """The words that start a read-only command: bwrap's, or env -i's with a private temp folder."""
    if sandbox_ready():
        return [*sandbox_argv(Path.cwd().resolve()), "--"]
    private = private_tmp()
    env = {**READ_ONLY_ENV, "HOME": private, "TMPDIR": private}
    return ["/usr/bin/env", "-i", *[f"{name}={value}" for name, value in env.items()]]


def sandbox_argv(workdir: Path) -> list[str]:
    """Read-only system folders and work folder, a private /tmp, no network. In its own PID
    namespace: when the command ends or is killed, every process it left is killed with it."""
    argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL", "--clearenv", "--dev", "/dev",
            "--proc", "/proc", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
    for path in SANDBOX_SYSTEM:
        argv += ["--ro-bind-try", path, path]
    argv += ["--ro-bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    for name, value in {**READ_ONLY_ENV, "HOME": "/tmp", "TMPDIR": "/tmp"}.items():
        argv += ["--setenv", name, value]
    return argv


@functools.cache
def sandbox_ready() -> bool:
    """Whether bubblewrap is here and starts (user namespaces may be off): tried once."""
    if not shutil.which("bwrap"):
        return False
    probe = subprocess.run([*sandbox_argv(Path.cwd().resolve()), "--", "true"],
                           capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


@functools.cache
def private_tmp() -> str:
    """Without the sandbox: a temp folder of our own for the session (sort spills there, not into
    the work folder or $HOME), removed when the session ends."""
    folder = tempfile.mkdtemp(prefix="read-only-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def note_if_parsing_only() -> None:
    if not sandbox_ready():
        SCREEN.note("read_only_bash: read-only is enforced by parsing only here (bubblewrap is "
                    "missing or cannot start); the parser still refuses anything that writes")


# -- plumbing/status -- one status line per running subagent, redrawn in place on a terminal
PROGRESS_TICK = 0.2  # seconds between redraws of the status lines on a terminal


class Status:
    """One subagent as the user sees it: a label, a count of its tool calls, a clock. It is the
    subagent's screen: it counts tool calls instead of printing them."""

    def __init__(self, agent_type: str, description: str) -> None:
        self.label = f"[{agent_type}] {shorten(description)}"  # one line, no escape codes
        self.tools = 0
        self.started = time.monotonic()
        self.cancelled = False

    def stop_if_cancelled(self) -> None:
        """Ctrl-C reaches only the main thread, so a subagent stops at its next step instead."""
        if self.cancelled:
            raise KeyboardInterrupt

    def text(self, text: str) -> None:
        self.stop_if_cancelled()

    def reply_done(self, response: anthropic.types.Message) -> None:
        self.stop_if_cancelled()

    def tool_call(self, name: str, tool_input: dict) -> None:
        self.stop_if_cancelled()
        self.tools += 1

    def tool_result(self, output: str, is_error: bool) -> None:
        self.stop_if_cancelled()

    def line(self, outcome: str = "", columns: int = PIPED_WIDTH) -> str:
        """The status line, its label cut so that the whole line fits in `columns`."""
        tools = f"{self.tools} tools"
        if self.tools == 1:
            tools = "1 tool"
        progress = f"{tools}, {time.monotonic() - self.started:.1f} s"
        end = f" … {progress}"
        if outcome:
            end = f" {outcome} ({progress})"
        return fit(self.label, columns - len(end)) + end


class LockedScreen:
    """The main agent's screen, shared by threads: each event prints whole, above the status
    lines, and a Task's result comes right under its subagent's last status line."""

    def __init__(self, board: "StatusBoard", screen: Screen) -> None:
        self.board = board
        self.screen = screen

    def tool_call(self, name: str, tool_input: dict) -> None:
        with self.board.printing():
            self.screen.tool_call(name, tool_input)

    def tool_result(self, output: str, is_error: bool) -> None:
        with self.board.printing():
            self.board.print_finished()
            self.screen.tool_result(output, is_error)


class StatusBoard:
    """The status lines of the running subagents. Threads print through its lock, so lines never
    mix. On a terminal the lines stay below everything else and are redrawn in place; elsewhere
    (a pipe, a log, the tests) each subagent prints one line when it starts and one when it ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: list[Status] = []
        self.drawn = 0  # status lines on the terminal now; the cursor is at the end of the last one
        self.finished: dict[int, str] = {}  # thread: its subagent's last line, not yet shown

    def start(self, agent_type: str, description: str) -> Status:
        status = Status(agent_type, description)
        with self.printing():
            self.running.append(status)
            if not sys.stdout.isatty():
                SCREEN.write(f"{DIM}{status.label} … started{RESET}\n")
        return status

    def finish(self, status: Status, outcome: str) -> None:
        with self.printing():
            if status in self.running:  # after Ctrl-C it is not: stop_all() took it off
                self.running.remove(status)
                self.finished[threading.get_ident()] = status.line(outcome, line_width())

    def print_finished(self) -> None:
        """The last status line of the subagent this thread ran, if it has not been shown yet."""
        line = self.finished.pop(threading.get_ident(), None)
        if line is not None:
            SCREEN.write(f"{DIM}{line}{RESET}\n")  # cut to the width when it was made

    def locked(self, screen: Screen) -> LockedScreen:
        return LockedScreen(self, screen)

    def redraw(self) -> None:
        with self.printing():
            return

    @contextlib.contextmanager
    def printing(self):
        """Hold the locks and take the status lines (and the spinner) away while something
        prints; then draw them again below it."""
        with self.lock, SCREEN.lock:
            SCREEN.clear_spinner()
            self._erase()
            try:
                yield
            finally:
                self._draw()
                SCREEN.spinner_paused = bool(self.running)  # the status lines show the clocks

    def wait_for(self, futures) -> None:
        """Wait until every subagent has finished, redrawing their clocks meanwhile."""
        while wait(futures, timeout=PROGRESS_TICK).not_done:
            self.redraw()

    def stop_all(self) -> None:
        """Ctrl-C: stop every running subagent and every command it started, and mark their
        status lines interrupted."""
        stop_all_commands()
        with self.printing():
            for status in self.running:
                status.cancelled = True
                SCREEN.write(f"{DIM}{status.line('interrupted', line_width())}{RESET}\n")
            self.running.clear()
            self.finished.clear()

    def _erase(self) -> None:  # bottom up, so the cursor ends where the first status line began
        if self.drawn:
            sys.stdout.write("\r\033[K" + "\033[A\r\033[K" * (self.drawn - 1))
            self.drawn = 0

    def _draw(self) -> None:
        if sys.stdout.isatty() and self.running:
            width = shutil.get_terminal_size().columns - 1  # a wrapped line would throw off erasing
            lines = [f"{DIM}{status.line(columns=width)}{RESET}" for status in self.running]
            sys.stdout.write("\n".join(lines))
            self.drawn = len(self.running)
        sys.stdout.flush()


BOARD = StatusBoard()  # one terminal, so one board


# -- plumbing/skills -- reading SKILL.md files, and the Agent Skills specification's rules
NAME_LIMIT = 64  # characters, as the Agent Skills specification says
DESCRIPTION_LIMIT = 1024  # characters, likewise
NAME_CHARACTERS = re.compile(r"[a-z0-9-]+")
KNOWN_FIELDS = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"]


class SkillSkipped(Exception):
    """A SKILL.md that cannot be used at all: unreadable, no front matter, broken YAML, or no
    description."""


def warn(text: str) -> None:
    print(f"[{CONTROL_CHARS.sub('?', text)}]", file=sys.stderr)  # names and paths from skill files


def tool_path(path: Path) -> str:
    """A resolved path as the file tools take it: relative inside the work directory, absolute
    outside."""
    root = Path.cwd().resolve()
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return str(path)


def without_repeats(folders: list[Path]) -> list[Path]:
    unique = []
    for folder in folders:
        if folder not in unique:
            unique.append(folder)
    return unique


def warn_if_missing(folders: list[Path]) -> None:
    for folder in folders:
        if not folder.is_dir():
            warn(f"no skills folder at {folder}; skipped")


def read_skill_or_warn(skill_md: Path) -> Skill | None:
    try:
        return read_skill(skill_md)
    except SkillSkipped as exc:
        warn(f"skill skipped: {tool_path(skill_md.resolve())} {exc}")
    except Exception as exc:  # noqa: BLE001 - whatever one skill file does, the others still load
        warn(f"skill skipped: {tool_path(skill_md.resolve())} cannot be loaded: "
             f"{type(exc).__name__}: {exc}")
    return None


def note_override(old: Skill, new: Skill) -> None:
    line = (f"skill {new.name} from {tool_path(new.folder.parent)} overrides the one in "
            f"{tool_path(old.folder.parent)}")
    SCREEN.note(CONTROL_CHARS.sub("?", line))  # folder names may hold escape codes


def read_front_matter(skill_md: Path) -> tuple[dict, str]:
    """The fields of a SKILL.md's front matter, and its body; SkillSkipped if there are none."""
    try:
        front_matter, body = split_front_matter(read_skill_file(skill_md))  # bounded, regular
        fields = yaml.load(front_matter, Loader=FrontMatterLoader)  # noqa: S506 - a SafeLoader
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillSkipped(f"cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        problem = yaml_problem(exc)
        raise SkillSkipped(f"has front matter that is not valid YAML: {problem}") from None
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:  # valid YAML: 2024-02-30
        raise SkillSkipped(f"has front matter that cannot be loaded: {type(exc).__name__}: "
                           f"{exc}") from None
    if not isinstance(fields, dict):
        raise SkillSkipped("has front matter that is not a set of 'key: value' fields")
    refuse_unusable_name(skill_name(fields, skill_md.parent.name))
    return fields, body


def yaml_problem(exc: yaml.YAMLError) -> str:
    """The parser's problem, with the line in SKILL.md (the front matter starts on its second)."""
    problem = getattr(exc, "problem", None) or exc
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return str(problem)
    return f"{problem} (line {mark.line + 2})"


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body) of a SKILL.md whose first line is '---' and that has a closing '---'."""
    lines = text.splitlines()
    fences = [number for number, line in enumerate(lines) if line.rstrip() == "---"]
    if len(fences) < 2 or fences[0] != 0:
        raise SkillSkipped("has no front matter: name and description between two '---' lines at "
                           "the top")
    return "\n".join(lines[1:fences[1]]), "\n".join(lines[fences[1] + 1:]).strip()


def skill_name(fields: dict, folder: str) -> str:
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        name = folder
    return as_utf8(name)  # a folder name need not be UTF-8; a request must


def warn_of_spec_problems(fields: dict, skill_md: Path) -> None:
    for problem in spec_problems(fields, skill_md.parent.name):
        warn(f"skill warning: {tool_path(skill_md.resolve())} {problem}")


def spec_problems(fields: dict, folder: str) -> list[str]:
    """What the Agent Skills specification forbids but a lenient client loads anyway, one sentence
    each."""
    name = fields.get("name")
    problems = []
    if not isinstance(name, str) or not name:
        problems.append(f"has no usable name; its folder name {folder!r} is used")
    else:
        problems += name_problems(name, folder)
    description = fields["description"].strip()
    if len(description) > DESCRIPTION_LIMIT:
        problems.append(f"has a description of {len(description):,} characters; only the first "
                        f"{DESCRIPTION_LIMIT:,} are used")
    unknown = [str(field) for field in fields if field not in KNOWN_FIELDS]
    if unknown:
        problems.append(f"has unknown field(s) {', '.join(unknown)}; the spec knows "
                        f"{', '.join(KNOWN_FIELDS)}")
    return problems


def name_problems(name: str, folder: str) -> list[str]:
    problems = []
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
    return problems


def resource_listing(skill: Skill) -> list[str]:
    """The lines after a skill's instructions: its folder, and its other files, up to
    RESOURCE_LIST_LIMIT of them."""
    folder = tool_path(skill.folder)
    files = resource_files(skill.folder)
    if files:
        example = f"{folder}/{files[0].relative_to(skill.folder).as_posix()}"
        files_note = ("Its other files are not loaded; when the instructions call for one, read it "
                      f"with read_file at the folder plus the path listed, e.g. {example}")
    else:
        files_note = "It has no other files."
    lines = [f"Skill folder: {folder} (its SKILL.md has these instructions in full, if they were "
             f"cut above). {files_note}"]
    for path in files[:RESOURCE_LIST_LIMIT]:
        name = path.relative_to(skill.folder).as_posix()
        lines.append(f"  {name} ({path.stat().st_size:,} bytes)")
    if len(files) > RESOURCE_LIST_LIMIT:
        more = len(files) - RESOURCE_LIST_LIMIT
        lines.append(f"  [{more} more; list them with bash: find {shlex.quote(folder)} -type f]")
    return [as_utf8(line) for line in lines]  # file names need not be UTF-8; a request must


def as_utf8(text: str) -> str:
    return text.encode("utf-8", errors="replace").decode("utf-8")


def resource_files(folder: Path) -> list[Path]:
    """A skill's files besides SKILL.md: scripts/, references/, assets/ and whatever else is
    there, unhidden, that read_file can read (a link to a file outside the folder is left out)."""
    files = []
    for path in sorted(folder.rglob("*")):
        hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
        inside = path.resolve().is_relative_to(folder)
        if path.is_file() and path != folder / "SKILL.md" and not hidden and inside:
            files.append(path)
    return files


# -- plumbing/skill_files -- a hostile skill file cannot hang, flood or crash start-up
SKILL_FILE_LIMIT = 256 * 1024  # bytes of one SKILL.md (its body is read whole at start-up)
YAML_NODE_LIMIT = 2000  # nodes in one front matter; a few fields need far fewer


def read_skill_file(skill_md: Path) -> str:
    """A SKILL.md's text, if it is a regular file of at most SKILL_FILE_LIMIT bytes: a FIFO or a
    link to /dev/zero is opened without waiting, then refused; a huge file is not read past it."""
    fd = os.open(skill_md, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkillSkipped("is not a regular file (a FIFO, a device, ...)")
        data = file.read(SKILL_FILE_LIMIT + 1)
    if len(data) > SKILL_FILE_LIMIT:
        raise SkillSkipped(f"is over {SKILL_FILE_LIMIT:,} bytes; put long parts in references/")
    return data.decode("utf-8-sig")


class FrontMatterLoader(yaml.SafeLoader):
    """yaml.SafeLoader without anchors and aliases (& and *), and with at most YAML_NODE_LIMIT
    nodes: a few hundred bytes of aliases, or merge keys (<<) built on them, can expand into
    millions."""

    nodes = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.YAMLError("anchors and aliases (& and *) are not allowed in front matter")
        self.nodes += 1
        if self.nodes > YAML_NODE_LIMIT:
            raise yaml.YAMLError(f"more than {YAML_NODE_LIMIT:,} YAML nodes in the front matter")
        return super().compose_node(parent, index)


def refuse_unusable_name(name: str) -> None:
    """The catalogue and the Skill tool use a name as it is, so it must be the spec's kind of word:
    no newline to inject catalogue lines, no escape codes for the terminal."""
    if not NAME_CHARACTERS.fullmatch(name):
        raise SkillSkipped(f"has the name {name!r}; use only lowercase letters, digits and "
                           "hyphens (a skill with any other name is not loaded)")


if __name__ == "__main__":
    leave(main())

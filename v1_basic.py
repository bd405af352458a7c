#!/usr/bin/env python3
"""v1_basic.py: the agent loop. A model, four tools, and a loop that runs until the model stops asking.

    you --> messages --> model --tool_use--> run every tool --> tool_result --+
                           ^                                                  |
                           +--------------------------------------------------+
            the turn ends when the model answers without asking for a tool

Environment, also read from a .env file: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL (another
Anthropic-compatible endpoint), MODEL_ID (default claude-sonnet-5), and the limits MAX_TOKENS (8000 per reply),
MAX_ROUNDS (50 model calls per turn), BASH_TIMEOUT (120 s per command).
Interactive session: q, exit or Ctrl-D leaves; Ctrl-C stops the current turn and keeps the history.
No API key? `python -m scripted.demo v1` runs this script offline, against a scripted model.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import jsonschema

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
    data = safe_path(path).read_bytes()
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
    """Run the calls in order and send all their results back in one user message."""
    results = []
    try:
        for call in calls:
            results.append(run_tool(call, tools, show))
    finally:  # the API rejects a tool_use without its tool_result, so answer every call, even after Ctrl-C
        results += [error_result(call.id, "interrupted by the user before this call finished")
                    for call in calls[len(results):]]
        messages.append({"role": "user", "content": results})

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
    args = parser.parse_args()
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        sys.exit("ANTHROPIC_API_KEY is not set: export it or put it in .env (see .env.example). "
                 "No key? Try the offline demo: python -m scripted.demo v1")
    if not os.path.isdir(args.workdir):
        sys.exit(f"--workdir {args.workdir!r} is not a folder")
    os.chdir(args.workdir)
    print(f"{DIM}[{MODEL_ID} in {Path.cwd()}]{RESET}")
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

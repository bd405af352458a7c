"""v6: MCP servers. The settings file, one event loop that owns every server, the tools as the API
accepts them, and each result turned into tool_result content within a budget.

The official SDK (`mcp`) is asyncio-based, the agent is threads: McpServers runs one event loop in
a background thread, each server's session lives in it, and the agent's threads submit calls and
wait for them with a timeout (MCP_TIMEOUT, MCP_TOOL_TIMEOUT), or until Ctrl-C. A server's
stderr goes to a file, never to the screen; when the server fails, the end of it is quoted in
the one line that says so: bounded, and without control codes.

The SDK is imported only when a server starts: it takes longer to import than the rest of the
agent together, and a session without servers does not need it.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import jsonschema
import psutil
import pydantic

from plumbing.budget import cut_short
from plumbing.checks import ToolError
from plumbing.screen import plain

if TYPE_CHECKING:  # for the annotations only
    from mcp import ClientSession
    from mcp import types as mcp_types

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what the Messages API accepts as a tool name
SERVER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,40}$")
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")  # what an image block takes
IMAGE_BYTES = 5 * 1024 * 1024  # the API's limit for one image
STDERR_QUOTED = 300  # characters of a failing server's stderr shown to the user
CLOSE_WAIT = 8.0  # seconds to let the SDK stop every server (stdin closed, then killed) on exit
# Arguments by which a tool's caller can ask for less; the cut note names those a schema has.
ASK_FOR_LESS = ("mode", "response_format", "format", "detail", "verbosity", "page", "cursor",
                "offset", "limit", "max_results", "max_count", "top_k", "max_tokens", "count",
                "page_size", "context_lines")


class McpError(ToolError):
    """A server or a call failed: the message is one line naming the server and what to change.
    A ToolError, so that the model reads these words as they are."""


@dataclass
class ServerSpec:
    name: str
    command: str
    args: list[str]
    env: dict[str, str]
    cwd: Path  # the folder of the file that names the server: relative paths in args work there


# -- the settings file --
def read_servers(path: Path, environ: Mapping[str, str] = os.environ
                 ) -> tuple[list[ServerSpec], list[str]]:
    """The stdio servers of a file in Claude Code's .mcp.json format, and one line per entry that
    cannot be used. A file that cannot be read at all raises McpError. `${VAR}` and
    `${VAR:-default}` in a command, an argument or an env value are filled in from `environ`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise McpError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise McpError(f"{path} is not JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpError(f'{path} has no "mcpServers" object: {{"mcpServers": {{name: '
                       '{"command": ..., "args": [...], "env": {...}}}}')
    specs, problems = [], []
    for name, entry in servers.items():
        problem = spec_problem(name, entry)
        if not problem:
            fields, problem = expand_fields(entry, environ)
        if problem:
            problems.append(f"mcp server {cut_short(str(name), 40)!r} in {path} skipped: {problem}")
            continue
        specs.append(ServerSpec(name, fields["command"], fields["args"], fields["env"],
                                path.resolve().parent))
    return specs, problems


def spec_problem(name: str, entry) -> str:
    """What makes one entry unusable, or ""."""
    if not SERVER_NAME.match(name):
        return "its name must be 1-40 letters, digits, _ or - (it becomes part of tool names)"
    if not isinstance(entry, dict):
        return "its entry is not an object"
    if entry.get("type", "stdio") != "stdio" or "url" in entry:
        return "only stdio servers (a command to run) are supported here, not http or sse"
    if not isinstance(entry.get("command"), str) or not entry["command"].strip():
        return 'it has no "command" (the program that runs the server)'
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        return '"args" must be a list of strings'
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        return '"env" must be an object of strings'
    return ""


# ${VAR} or ${VAR:-default}, as Claude Code reads them; a bare $VAR is text, as is a lone ${.
VARIABLE = re.compile(r"\$\{(?P<name>[^}:]+)(?::-(?P<default>[^}]*))?\}")


class UnsetVariable(ValueError):
    """A ${VAR} with no default names a variable that is not set: the message names the field."""


def expand_fields(entry: dict, environ: Mapping[str, str]) -> tuple[dict, str]:
    """An entry's command, args and env with their variables filled in, and "" or what stops it:
    the first variable that is unset and has no default, with the field that uses it."""
    try:
        command = expand(entry["command"], environ, "command")
        args = [expand(arg, environ, f"args[{n}]") for n, arg in enumerate(entry.get("args", []))]
        env = {key: expand(value, environ, f"env.{key}")
               for key, value in entry.get("env", {}).items()}
    except UnsetVariable as exc:
        return {}, str(exc)
    return {"command": command, "args": args, "env": env}, ""


def expand(text: str, environ: Mapping[str, str], field_name: str) -> str:
    """`text` with each ${VAR} and ${VAR:-default} filled in. A variable set to "" is set, as
    Claude Code has it; one that is unset with no default raises UnsetVariable."""

    def value(match: re.Match) -> str:
        name = match["name"]
        if name in environ:
            return environ[name]
        if match["default"] is None:
            with_default = "${" + name + ":-default}"
            raise UnsetVariable(f'"{field_name}" uses {match[0]}, which is not set and has no '
                                f"default (set {name}, or write {with_default})")
        return match["default"]

    return VARIABLE.sub(value, text)


def describe(spec: ServerSpec) -> str:
    """The command line a server runs, for the question before trusting a file."""
    return cut_short(" ".join([spec.command, *spec.args]), 120)


# -- the tools, as the Messages API accepts them --
def offered_tool(server: str, tool: mcp_types.Tool, description_limit: int, schema_limit: int,
                 taken) -> tuple[dict | None, str]:
    """The tool definition to send the model, or None and why it is left out (`taken`: the names
    offered already). The description is the server's words: bounded, and only ever in the tools
    list, never in the system prompt."""
    name = f"mcp__{server}__{tool.name}"
    if not TOOL_NAME.match(name):
        return None, (f"its name {cut_short(name, 80)!r} is not one the API accepts (1-64 "
                      "letters, digits, _ or -)")
    if name in taken:  # the API refuses two tools of one name
        return None, f"{name} is offered already"
    schema = tool.input_schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None, 'its input schema is not an object schema ({"type": "object", ...})'
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return None, f"its input schema is not valid JSON Schema: {cut_short(exc.message, 120)}"
    if len(json.dumps(schema)) > schema_limit:
        return None, f"its input schema is longer than {schema_limit:,} characters"
    description = tool.description or tool.title or f"the {tool.name} tool of MCP server {server}"
    description = cut_short(description, description_limit, "… [description cut]")
    return {"name": name, "description": description, "input_schema": schema}, ""


def is_read_only(tool: mcp_types.Tool) -> bool:
    """The server's own readOnlyHint. A hint, not proof: the server is a program the user chose
    to run, so its word on its own tools is trusted as far as its code already is."""
    return bool(tool.annotations and tool.annotations.read_only_hint)


def ways_to_ask_for_less(schema: dict) -> str:
    """The arguments of a tool's schema that ask for less, with their choices where listed."""
    properties = schema.get("properties") or {}
    named = []
    for name in properties:
        if name.lower() not in ASK_FOR_LESS:
            continue
        choices = properties[name].get("enum") if isinstance(properties[name], dict) else None
        named.append(f"{name} ({', '.join(map(str, choices))})" if choices else name)
    if not named:
        return "this tool has no mode, page or limit argument: ask for something narrower"
    return "call it again asking for less with " + ", ".join(named)


# -- results, as tool_result content the API accepts --
def result_content(result: mcp_types.CallToolResult, budget: int, setting: str,
                   ask_for_less: str) -> tuple[list[dict], str]:
    """Text, images and resources as content blocks; what the API cannot take becomes a note.
    The text is held to `budget` characters in all; the cut says how much and how to get less.
    Returns the blocks, and the cut's note ("" if nothing was cut), for the screen too."""
    blocks = [block for item in result.content for block in as_blocks(item)]
    if not blocks and result.structured_content is not None:
        blocks = [{"type": "text", "text": json.dumps(result.structured_content)}]
    if not blocks:
        blocks = [{"type": "text", "text": "(the tool returned nothing)"}]  # never an empty text
    return within_budget(blocks, budget, setting, ask_for_less)


def as_blocks(item) -> list[dict]:
    """One part of a result (text, image, audio, resource, resource_link) as content blocks."""
    if item.type == "text":
        return [{"type": "text", "text": item.text}] if item.text else []
    if item.type == "image":
        return [image_block(item.data, item.mime_type)]
    if item.type == "resource":
        resource = item.resource
        if isinstance(getattr(resource, "text", None), str):
            return [{"type": "text", "text": f"[resource {resource.uri}]\n{resource.text}"}]
        return [note(f"a binary resource ({resource.uri}, {resource.mime_type or 'no type'}) "
                     "was left out: only text reaches the model")]
    if item.type == "resource_link":
        return [{"type": "text", "text": f"[resource link: {item.uri} ({item.name})]"}]
    return [note(f"a part of type {cut_short(str(item.type), 40)} was left out: the API takes "
                 "text and images only")]


def image_block(data: str, media_type: str) -> dict:
    if media_type not in IMAGE_TYPES:
        return note(f"an image of type {cut_short(media_type, 40)} was left out: the API takes "
                    + ", ".join(IMAGE_TYPES))
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return note("an image was left out: its data is not valid base64")
    if size > IMAGE_BYTES:
        return note(f"an image of {size:,} bytes was left out: the API takes at most "
                    f"{IMAGE_BYTES:,}")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def note(text: str) -> dict:
    return {"type": "text", "text": f"[{text}]"}


def within_budget(blocks: list[dict], budget: int, setting: str,
                  ask_for_less: str) -> tuple[list[dict], str]:
    """The text blocks' characters held to budget in all: the first ones whole, the one that
    crosses the limit cut, later ones dropped, and a note that says what was left out."""
    total = sum(len(block["text"]) for block in blocks if block["type"] == "text")
    if total <= budget:
        return blocks, ""
    kept, room = [], budget
    for block in blocks:
        if block["type"] != "text":
            kept.append(block)
        elif room > 0:
            kept.append({"type": "text", "text": block["text"][:room]})
            room -= len(block["text"][:room])
    shown = budget - room
    cut = (f"... {total - shown:,} of {total:,} characters of this result were cut here to fit "
           f"{setting}={budget:,}: {ask_for_less}")
    return [*kept, note(cut)], cut


def text_of(content: list[dict]) -> str:
    """What the screen shows of a result: its text, an image as a short mark."""
    return "\n".join(block["text"] if block["type"] == "text" else f"[{block['type']}]"
                     for block in content)


# -- the servers: one event loop in a background thread owns every session --
@dataclass
class Connection:
    spec: ServerSpec
    stderr: Path  # a temporary file the server writes its stderr to, never the screen
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    session: ClientSession | None = None
    runner: asyncio.Task | None = None
    processes: list = field(default_factory=list)  # psutil.Process: the server, as started
    gone: str = ""  # why the server can no longer be called; "" while it can


class McpServers:
    """The running servers. start_all(), call() their tools, close() them all (idempotent).
    Every wait has a timeout; a failure raises McpError with one line naming the server and
    the setting to change (MCP_TIMEOUT to start, MCP_TOOL_TIMEOUT for a call)."""

    def __init__(self, start_timeout: float, call_timeout: float) -> None:
        self.start_timeout = start_timeout  # MCP_TIMEOUT: initialize and tools/list
        self.call_timeout = call_timeout  # MCP_TOOL_TIMEOUT: one tools/call
        self.connections: dict[str, Connection] = {}
        self.loop: asyncio.AbstractEventLoop | None = None  # started by the first start_all()
        self.thread: threading.Thread | None = None
        self.closed = False
        # The SDK logs a server's garbage on stdout at ERROR; with no handler Python would print it
        # on the screen. What went wrong reaches the user as one line from here instead.
        sdk_logger = logging.getLogger("mcp")
        if not sdk_logger.handlers:  # once per process, however many agents a test loads
            sdk_logger.addHandler(logging.NullHandler())
        sdk_logger.propagate = False

    def start_all(self, specs: list[ServerSpec]) -> dict[str, list | McpError]:
        """Start the servers at once; for each, its tools or the error that stopped it."""
        if self.closed:
            raise RuntimeError("these MCP servers were closed")
        try:  # here, not in the loop: on a slow disk the import takes seconds (20 under Wine)
            import mcp  # noqa: F401 - that no server's MCP_TIMEOUT counts, nor blocks the loop
        except ImportError as exc:
            return {spec.name: McpError(f"mcp server {spec.name!r} not started: the MCP SDK is "
                                        f"missing ({exc}); pip install -r requirements.txt")
                    for spec in specs}
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
            self.thread = threading.Thread(target=self.loop.run_forever, name="mcp", daemon=True)
            self.thread.start()
        futures = {spec.name: self.submit(self.start(spec)) for spec in specs}
        outcome = {}
        for name, future in futures.items():
            try:
                outcome[name] = future.result()  # start() itself gives up after the timeout
            except McpError as exc:
                outcome[name] = exc
            except BaseException:  # Ctrl-C while waiting: stop the others' starts too
                for other in futures.values():
                    other.cancel()
                raise
        return outcome

    def call(self, server: str, tool: str, arguments: dict, stopped: threading.Event):
        """Call one tool and wait for its CallToolResult: at most `call_timeout` seconds, or until
        stopped is set (Ctrl-C). Raises McpError with one line when it cannot be had."""
        connection = self.connections[server]
        if connection.gone:
            raise McpError(f"mcp server {server!r} is not running ({connection.gone}); its "
                           "tools cannot be called in this session")
        future = self.submit(self.call_in_loop(connection, tool, arguments))
        try:
            while True:  # a wait on the result itself, woken each 0.1 s to see a Ctrl-C
                if stopped.is_set():
                    raise KeyboardInterrupt
                with contextlib.suppress(TimeoutError):
                    return future.result(timeout=0.1)
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        """Stop every server: the SDK closes its stdin, waits, then ends its process tree.
        Whatever is still alive after CLOSE_WAIT is killed here, so none outlives the agent."""
        if self.closed:
            return
        self.closed = True
        if self.loop is not None:
            with contextlib.suppress(Exception):
                self.submit(self.stop_all()).result(timeout=CLOSE_WAIT)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=CLOSE_WAIT)
            if not self.thread.is_alive():
                self.loop.close()
        for connection in self.connections.values():
            kill_left_over(connection.processes)
            with contextlib.suppress(OSError):
                connection.stderr.unlink()

    # -- in the event loop --
    def submit(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    async def start(self, spec: ServerSpec) -> list:
        """Start one server; its tools once it has answered initialize and tools/list."""
        handle, path = tempfile.mkstemp(prefix=f"mcp-{spec.name}-", suffix=".stderr")
        os.close(handle)
        connection = Connection(spec, Path(path))
        self.connections[spec.name] = connection
        ready = asyncio.get_running_loop().create_future()
        connection.runner = asyncio.create_task(self.run(connection, ready))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except TimeoutError:
            ready.cancel()  # nobody waits for it any more
            connection.gone = "it did not start in time"
            await self.stop(connection)
            raise McpError(self.failure(spec.name, "did not answer initialize and tools/list "
                                        f"within MCP_TIMEOUT={self.start_timeout:g} s")) from None
        except McpError as exc:
            connection.gone = "it failed to start"
            await self.stop(connection)
            raise McpError(self.failure(spec.name, str(exc))) from None

    async def run(self, connection: Connection, ready: asyncio.Future) -> None:
        """The server's whole life: started, listed, kept until close(), then stopped."""
        from mcp import ClientSession, StdioServerParameters, stdio_client  # see the docstring

        spec = connection.spec
        env = server_environment(spec.env)
        # Found on the server's PATH here: on Windows the SDK looks on the agent's, and then
        # CreateProcess looks first beside the agent's interpreter (a venv's base Python).
        command = shutil.which(spec.command, path=env["PATH"]) or spec.command
        params = StdioServerParameters(command=command, args=spec.args, env=env, cwd=spec.cwd)
        try:
            before = child_pids()
            with open(connection.stderr, "w", encoding="utf-8") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    connection.processes = still_running(child_pids() - before)
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        tools = await list_all_tools(session)
                        connection.session = session
                        ready.set_result(tools)
                        await connection.closing.wait()
        except FileNotFoundError:
            fail(ready, connection, f"cannot start: no program {spec.command!r} (its \"command\")")
        except OSError as exc:
            fail(ready, connection, f"cannot start {spec.command!r}: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 - whatever the server did, the agent goes on
            fail(ready, connection, start_failure(exc) if not ready.done() else "it stopped")
        finally:
            if not ready.done():
                fail(ready, connection, NOT_A_SERVER)

    async def call_in_loop(self, connection: Connection, tool: str, arguments: dict):
        name = connection.spec.name
        try:
            return await asyncio.wait_for(connection.session.call_tool(tool, arguments),
                                          self.call_timeout)
        except TimeoutError:
            raise McpError(f"mcp server {name!r} did not answer {tool} within "
                           f"MCP_TOOL_TIMEOUT={self.call_timeout:g} s: the call was given up"
                           ) from None
        except Exception as exc:  # noqa: BLE001 - the connection broke, or the server refused
            if connection.runner.done() or "Connection closed" in str(exc):
                connection.gone = "it stopped during a call"
                raise McpError(self.failure(name, f"stopped during the call to {tool}")) from None
            raise McpError(f"mcp server {name!r} refused the call to {tool}: "
                           f"{what_went_wrong(exc)}") from None

    async def stop(self, connection: Connection) -> None:
        connection.closing.set()
        if connection.runner and not connection.runner.done():
            connection.runner.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(connection.runner), CLOSE_WAIT)

    async def stop_all(self) -> None:
        await asyncio.gather(*(self.stop(connection) for connection in self.connections.values()))

    def failure(self, name: str, what: str) -> str:
        """One line: the server, what went wrong, and the tail of what it wrote on stderr."""
        line = f"mcp server {name!r} {what}"
        said = self.stderr_tail(name)
        return f"{line}; its stderr ends: {said}" if said else line

    def stderr_tail(self, name: str) -> str:
        """The end of what the server wrote on stderr, on one line, without control codes."""
        with contextlib.suppress(OSError), open(self.connections[name].stderr, "rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(max(file.tell() - 4 * STDERR_QUOTED, 0))
            text = file.read().decode("utf-8", errors="replace")
            text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
            return plain(text)[-STDERR_QUOTED:]
        return ""


async def list_all_tools(session: ClientSession, pages: int = 20) -> list:
    """tools/list, every page (at most `pages`: a server that never stops paging cannot hang)."""
    from mcp import types as mcp_types

    tools, cursor = [], None
    for _ in range(pages):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=params)
        tools += listed.tools
        cursor = listed.next_cursor
        if not cursor:
            break
    return tools


NOT_A_SERVER = "ended before answering initialize: is it an MCP server that speaks stdio?"


def start_failure(exc: BaseException) -> str:
    """Why a server did not get as far as listing its tools, in a few words."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, pydantic.ValidationError):
        return f"answered with what the MCP SDK refuses ({what_went_wrong(exc)})"
    if "Connection closed" in str(exc):
        return NOT_A_SERVER
    return f"failed to start ({what_went_wrong(exc)})"


def server_environment(env: dict[str, str]) -> dict[str, str]:
    """What a server gets on top of the SDK's few safe variables (PATH, HOME, ...; never the API
    key): its own "env", and the agent's Python first on PATH, so that "command": "python" runs
    the Python (and the virtual environment) that runs the agent."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {"PATH": path, **env}


def fail(ready: asyncio.Future, connection: Connection, why: str) -> None:
    if not ready.done():
        ready.set_exception(McpError(why))
    elif not connection.closing.is_set():
        connection.gone = why


def what_went_wrong(exc: BaseException) -> str:
    """One line for an exception, even an ExceptionGroup from the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return cut_short(text, 200)


def child_pids() -> set[int]:
    return {process.pid for process in psutil.Process().children()}


def still_running(pids: set[int]) -> list:
    """The processes of `pids` that still run. Servers start at once: another's process, seen
    among the new children, may have ended by now, and that is no failure of this one."""
    running = []
    for pid in sorted(pids):
        with contextlib.suppress(psutil.NoSuchProcess):
            running.append(psutil.Process(pid))
    return running


def kill_left_over(processes: list) -> None:
    """A server the SDK could not stop (it ignored its closed stdin and the signal): killed, with
    whatever it started. psutil.Process checks it is still the process it was (no reused pid)."""
    for process in processes:
        with contextlib.suppress(psutil.Error):
            for child in [*process.children(recursive=True), process]:
                with contextlib.suppress(psutil.Error):
                    child.kill()
            with contextlib.suppress(psutil.Error):
                process.wait(timeout=2)


# -- trusting a work folder's .mcp.json --
def user_trusts(path: Path, specs: list[ServerSpec], screen, trust_flag: str,
                remembered: str = "off") -> bool:
    """Ask before running the programs a work folder's .mcp.json names, as Claude Code does: the
    file came with the folder, not from the user. A yes is remembered in the file `remembered`
    names ("off": nowhere), outside the work folder, for this file and these programs: the same
    file is not asked about again, a changed one is. With no terminal to ask on, the answer is no
    (unless it was yes before)."""
    if not specs:
        return False
    store = None if remembered == "off" else Path(remembered).expanduser()
    fingerprint = trust_fingerprint(path, specs)
    if store and trusted_before(store, path, fingerprint, screen):
        screen.note(f"{path}: trusted before, unchanged since (remembered in {store})")
        return True
    if not sys.stdin.isatty():
        screen.alert(f"{path} names MCP servers ({', '.join(spec.name for spec in specs)}) but "
                     f"was not used: no terminal to ask whether to trust it; {trust_flag} does")
        return False
    screen.wait("")  # the question needs the terminal: no spinner drawn over it
    screen.block(f"{path} starts these programs as MCP servers:\n"
                 + "\n".join(f"  {spec.name}: {describe(spec)}" for spec in specs))
    try:
        answer = input("Trust this file and start them? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        if store:
            remember_trust(store, path, fingerprint, screen)
        return True
    screen.note(f"{path} not used; {trust_flag} uses it without asking")
    return False


def trust_fingerprint(path: Path, specs: list[ServerSpec]) -> str:
    """A hash of the file and of the programs it starts, as they would run (its ${VAR}s filled
    in): a change to either asks again."""
    digest = hashlib.sha256(path.read_bytes())
    for spec in specs:
        digest.update(json.dumps([spec.name, spec.command, spec.args, spec.env]).encode("utf-8"))
    return digest.hexdigest()


def trusted_before(store: Path, path: Path, fingerprint: str, screen) -> bool:
    """Whether `store` remembers a yes for this file with this fingerprint."""
    return read_trusted(store, screen).get(str(path.resolve())) == fingerprint


def read_trusted(store: Path, screen) -> dict[str, str]:
    """The remembered answers: file -> fingerprint. A store that cannot be read is one line, and
    remembers nothing."""
    if not store.exists():
        return {}
    try:
        trusted = json.loads(store.read_text(encoding="utf-8"))["trusted"]
        if not isinstance(trusted, dict):
            raise TypeError("'trusted' is not an object")
        return trusted
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        screen.note(f"{store} cannot be read ({type(exc).__name__}: {exc}): no earlier yes to a "
                    ".mcp.json is used")
        return {}


def remember_trust(store: Path, path: Path, fingerprint: str, screen) -> None:
    """Remember a yes for this file and fingerprint (one per file: a changed file replaces it)."""
    trusted = read_trusted(store, screen)
    trusted[str(path.resolve())] = fingerprint
    partial = store.with_name(store.name + ".partial")
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps({"trusted": trusted}, indent=1), encoding="utf-8")
        os.replace(partial, store)  # whole or not at all: another session may read it
    except OSError as exc:
        screen.note(f"could not remember the answer in {store} ({exc.strerror}): it is asked again "
                    "next time")

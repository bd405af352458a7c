"""plumbing/mcp.py in-process, without starting a server: the question before a work folder's
.mcp.json is trusted (at a terminal, played by a stdin that says it is one), the answers
remembered, the settings file's entries that cannot be used, and the few words a failure is
told in. tests/test_mcp.py reaches these through the agent, with real servers, where it can;
its tests at a pseudo-terminal are left out of the mcp target (seconds per mutant)."""

import asyncio
import base64
import io
import json
import locale
import logging
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psutil
import pytest
from rich.console import Console

from plumbing.mcp import (
    NOT_A_SERVER,
    McpError,
    McpServers,
    ServerSpec,
    describe,
    is_read_only,
    kill_left_over,
    list_all_tools,
    offered_tool,
    read_servers,
    read_trusted,
    remember_trust,
    server_environment,
    start_failure,
    still_running,
    text_of,
    trust_fingerprint,
    user_trusts,
    ways_to_ask_for_less,
    what_went_wrong,
)
from plumbing.screen import Screen
from tests.test_mcp import result_content_of

FLAG = "--trust-project-mcp"


class Terminal(io.StringIO):
    """The user at a terminal: stdin says it is one, and holds what they type."""

    def isatty(self) -> bool:
        return True


def mcp_json(folder: Path, servers: dict) -> tuple[Path, list[ServerSpec]]:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    specs, problems = read_servers(path, {})
    assert problems == []
    return path, specs


TWO = {"docs": {"command": "python3", "args": ["-m", "docs"]}, "git": {"command": "uvx"}}


@pytest.mark.parametrize("typed", ["y\n", "yes\n", " YES \n"])
def test_at_a_terminal_a_yes_trusts_the_file_and_is_remembered_for_it(
        tmp_path, monkeypatch, capsys, typed):
    path, specs = mcp_json(tmp_path, TWO)
    store = tmp_path / "home" / "trusted.json"
    monkeypatch.setattr(sys, "stdin", Terminal(typed))
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is True
    shown = capsys.readouterr().out
    assert f"{path} starts these programs as MCP servers:\n  docs: python3 -m docs\n  git: uvx\n" \
           "Trust this file and start them? [y/N] " in shown
    assert read_trusted(store, Screen()) == {str(path.resolve()): trust_fingerprint(path, specs)}


@pytest.mark.parametrize("typed", ["n\n", "\n", "yy\n", ""])  # "": the input ended (EOF)
def test_at_a_terminal_anything_but_yes_leaves_the_file_unused_and_says_how_to_use_it(
        tmp_path, monkeypatch, capsys, typed):
    path, specs = mcp_json(tmp_path, TWO)
    store = tmp_path / "trusted.json"
    monkeypatch.setattr(sys, "stdin", Terminal(typed))
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is False
    assert f"[{path} not used; {FLAG} uses it without asking]" in capsys.readouterr().out
    assert not store.exists()


def test_a_yes_is_not_remembered_where_remembering_is_off(tmp_path, monkeypatch):
    path, specs = mcp_json(tmp_path, TWO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG, "off") is True
    assert sorted(entry.name for entry in tmp_path.iterdir()) == [".mcp.json"]


def test_without_a_terminal_every_server_of_the_file_is_named(tmp_path, monkeypatch, capsys):
    path, specs = mcp_json(tmp_path, TWO)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG) is False
    assert (f"[{path} names MCP servers (docs, git) but was not used: no terminal to ask whether "
            f"to trust it; {FLAG} does]") in capsys.readouterr().err


def test_a_file_without_servers_is_not_asked_about(tmp_path, monkeypatch, capsys):
    path, specs = mcp_json(tmp_path, {})
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG) is False
    assert capsys.readouterr() == ("", "")


def test_a_long_command_line_is_cut_in_the_question():
    spec = ServerSpec("docs", "python3", ["-m", "docs", "x" * 200], {}, Path("."))
    described = describe(spec)
    assert len(described) == 120 and described.startswith("python3 -m docs xxx")
    assert described.endswith("…")


def test_an_answer_that_cannot_be_remembered_is_one_line_and_asked_again_later(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    store = tmp_path / "a-file" / "trusted.json"  # its folder is a file
    remember_trust(store, tmp_path / ".mcp.json", "f1", Screen())
    assert capsys.readouterr().out.strip() == (
        f"[could not remember the answer in {store} (File exists): it is asked again next "
        "time]")


def test_remembering_a_second_file_keeps_the_first_and_a_changed_file_replaces_its_own(
        tmp_path):
    store = tmp_path / "trusted.json"
    first, second = tmp_path / "a" / ".mcp.json", tmp_path / "b" / ".mcp.json"
    for path, fingerprint in [(first, "f1"), (second, "f2"), (first, "f3")]:
        remember_trust(store, path, fingerprint, Screen())
    assert read_trusted(store, Screen()) == {str(first.resolve()): "f3",
                                             str(second.resolve()): "f2"}
    assert not (tmp_path / "trusted.json.partial").exists()


@pytest.mark.parametrize(("text", "why"), [
    ('{"trusted": []}', "TypeError: 'trusted' is not an object"),
    ('{"other": {}}', "KeyError: 'trusted'"),
])
def test_a_store_of_another_shape_is_one_line_and_remembers_nothing(tmp_path, capsys, text, why):
    store = tmp_path / "trusted.json"
    store.write_text(text, encoding="utf-8")
    assert read_trusted(store, Screen()) == {}
    assert capsys.readouterr().out.strip() == (
        f"[{store} cannot be read ({why}): no earlier yes to a .mcp.json is used]")


# -- the settings file's entries --
@pytest.mark.parametrize(("entry", "problem"), [
    ("python3", "its entry is not an object"),
    ({"command": "  "}, 'it has no "command" (the program that runs the server)'),
    ({"command": "python3", "args": "-m docs"}, '"args" must be a list of strings'),
    ({"command": "python3", "args": ["-m", 3]}, '"args" must be a list of strings'),
    ({"command": "python3", "env": ["A=1"]}, '"env" must be an object of strings'),
    ({"command": "python3", "env": {"A": 1}}, '"env" must be an object of strings'),
    ({"type": "sse", "command": "python3"}, "only stdio servers (a command to run) are "
                                            "supported here, not http or sse"),
    ({"command": "python3", "url": "https://example.com"}, "only stdio servers (a command to "
                                                           "run) are supported here, not http "
                                                           "or sse"),
])
def test_each_entry_that_cannot_be_used_says_why_and_the_rest_are_kept(tmp_path, entry, problem):
    path = tmp_path / ".mcp.json"
    good = {"command": "python3", "type": "stdio", "args": [], "env": {"A": "1"}}
    path.write_text(json.dumps({"mcpServers": {"bad": entry, "good": good}}), encoding="utf-8")
    specs, problems = read_servers(path, {})
    assert [(spec.name, spec.command, spec.env, spec.cwd) for spec in specs] == [
        ("good", "python3", {"A": "1"}, tmp_path.resolve())]
    assert problems == [f"mcp server 'bad' in {path} skipped: {problem}"]


def test_a_name_of_41_characters_is_refused_and_one_of_40_taken(tmp_path):
    path = tmp_path / ".mcp.json"
    names = {"a" * 40: {"command": "x"}, "b" * 41: {"command": "x"}}
    path.write_text(json.dumps({"mcpServers": names}), encoding="utf-8")
    specs, problems = read_servers(path, {})
    assert [spec.name for spec in specs] == ["a" * 40]
    assert problems == [f"mcp server '{'b' * 39}…' in {path} skipped: its name must be 1-40 "
                        "letters, digits, _ or - (it becomes part of tool names)"]


@pytest.mark.parametrize("content", [b"\xff\xfe{}", None])  # not UTF-8; a folder
def test_a_settings_file_that_cannot_be_read_names_the_file(tmp_path, content):
    path = tmp_path / "servers.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(Exception) as failed:
        read_servers(path, {})
    assert str(failed.value).startswith(f"cannot read {path}: ")


# -- a failure, in a few words --
def test_a_failure_is_the_first_error_of_its_group_on_one_line_within_200_characters():
    group = ExceptionGroup("tasks", [ExceptionGroup("inner", [ValueError("bad\n  value")]),
                                     KeyError("later")])
    assert what_went_wrong(group) == "bad value"
    assert what_went_wrong(ExceptionGroup("tasks", [TimeoutError()])) == "TimeoutError"
    long = what_went_wrong(RuntimeError("x" * 300))
    assert len(long) == 200 and long.endswith("…")


def test_why_a_server_did_not_start_in_a_few_words():
    assert start_failure(ExceptionGroup("g", [OSError("Connection closed")])) == NOT_A_SERVER
    assert start_failure(ExceptionGroup("g", [RuntimeError("boom")])) == \
        "failed to start (boom)"


def test_a_server_gets_its_own_env_and_the_agents_python_first_on_the_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin")
    python_folder = str(Path(sys.executable).parent)
    assert server_environment({"TOKEN": "t"}) == {
        "PATH": f"{python_folder}{os.pathsep}/usr/bin", "TOKEN": "t"}
    assert server_environment({"PATH": "/opt/bin"}) == {"PATH": "/opt/bin"}


def test_with_no_path_set_a_server_s_path_is_the_agents_python_folder_and_an_empty_entry(
        monkeypatch):
    monkeypatch.delenv("PATH", raising=False)
    assert server_environment({}) == {"PATH": f"{Path(sys.executable).parent}{os.pathsep}"}


# -- the servers' processes --
@pytest.mark.skipif(os.name != "posix", reason="runs sh and sleep")
def test_a_server_left_running_is_killed_with_what_it_started_and_an_ended_one_is_skipped():
    server = subprocess.Popen(["sh", "-c", "(sleep 300 & echo $!; wait) & exec sleep 301"],
                              stdout=subprocess.PIPE, text=True)
    child = int(server.stdout.readline())
    started = psutil.Process(child)  # the child of the server's child: the agent started neither
    ended = subprocess.Popen(["true"])
    ended.wait()
    try:
        processes = still_running({server.pid, ended.pid})
        assert [process.pid for process in processes] == [server.pid]
        kill_left_over(processes)
        assert not psutil.pid_exists(server.pid)  # killed, and collected by the wait after it
        _, alive = psutil.wait_procs([started], timeout=10)  # a SIGKILL lands a moment later
        assert [process for process in alive if process.status() != "zombie"] == []
    finally:
        for pid in (server.pid, child):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        server.stdout.close()


class EndlessPages:
    """A server whose tools/list always names a next page: what each request asked for."""

    def __init__(self):
        self.cursors = []

    async def list_tools(self, params=None):
        from mcp import types as mcp_types

        self.cursors.append(params.cursor if params else None)
        page = len(self.cursors)
        tool = mcp_types.Tool(name=f"t{page}", inputSchema={"type": "object"})
        return mcp_types.ListToolsResult(tools=[tool], nextCursor=f"after-{page}")


def test_a_tool_list_that_never_ends_is_read_for_twenty_pages_each_from_the_last_cursor():
    session = EndlessPages()
    tools = asyncio.run(list_all_tools(session))
    assert [tool.name for tool in tools] == [f"t{n}" for n in range(1, 21)]
    assert session.cursors == [None] + [f"after-{n}" for n in range(1, 20)]


# -- the settings file's shape, and what a result becomes --
def test_a_settings_file_that_is_a_list_says_what_shape_it_needs(tmp_path):
    path = tmp_path / "servers.json"
    path.write_text('[{"command": "python3"}]', encoding="utf-8")
    with pytest.raises(McpError) as failed:
        read_servers(path, {})
    assert str(failed.value) == (f'{path} has no "mcpServers" object: {{"mcpServers": {{name: '
                                 '{"command": ..., "args": [...], "env": {...}}}}')


def test_an_argument_whose_schema_is_true_is_named_as_a_way_to_ask_for_less():
    schema = {"type": "object", "properties": {"limit": True, "query": {"type": "string"},
                                               "mode": {"enum": ["short", "long"]}}}
    assert ways_to_ask_for_less(schema) == ("call it again asking for less with limit, "
                                            "mode (short, long)")


def tool(name: str = "echo", schema: dict | None = None, **fields):
    from mcp import types as mcp_types

    return mcp_types.Tool(name=name, inputSchema=schema or {"type": "object"}, **fields)


def offered(listed, taken=(), description_limit: int = 1000, schema_limit: int = 10_000):
    return offered_tool("mis", listed, description_limit, schema_limit, taken)


LONG_NAME = "n" * 75


@pytest.mark.parametrize(("listed", "taken", "why"), [
    (tool(LONG_NAME), (), f"its name 'mcp__mis__{'n' * 69}…' is not one the API accepts (1-64 "
                          "letters, digits, _ or -)"),
    (tool("echo"), ("mcp__mis__echo",), "mcp__mis__echo is offered already"),
    (tool(schema={"type": "array"}), (), 'its input schema is not an object schema ({"type": '
                                         '"object", ...})'),
    (tool(schema={"properties": {}}), (), 'its input schema is not an object schema ({"type": '
                                          '"object", ...})'),
    (tool(schema={"type": "object", "minProperties": "x" * 200}), (),
     f"its input schema is not valid JSON Schema: '{'x' * 118}…"),
])
def test_a_tool_the_api_would_refuse_is_left_out_saying_why(listed, taken, why):
    assert offered(listed, taken) == (None, why)


def test_a_schema_as_long_as_the_limit_is_taken_and_one_character_more_is_not():
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    size = len(json.dumps(schema))
    assert offered(tool(schema=schema), schema_limit=size)[1] == ""
    assert offered(tool(schema=schema), schema_limit=size - 1) == (
        None, f"its input schema is longer than {size - 1:,} characters")


@pytest.mark.parametrize(("fields", "description"), [
    ({"description": "Say it.", "title": "Echo"}, "Say it."),
    ({"title": "Echo"}, "Echo"),
    ({}, "the echo tool of MCP server mis"),  # 31 characters: as long as the limit
    ({"description": "d" * 32}, "d" * 12 + "… [description cut]"),
])
def test_a_tool_is_offered_with_its_own_words_or_a_title_or_a_name_within_the_limit(
        fields, description):
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    assert offered(tool(schema=schema, **fields), description_limit=31) == (
        {"name": "mcp__mis__echo", "description": description, "input_schema": schema}, "")


def test_only_a_tool_the_server_marks_read_only_is_read_only():
    from mcp import types as mcp_types

    def marked(hint):
        return tool(annotations=mcp_types.ToolAnnotations(readOnlyHint=hint))

    assert [is_read_only(listed) for listed in (marked(True), marked(False), marked(None),
                                                tool())] == [True, False, False, False]


def test_a_binary_resource_without_a_type_is_a_note_that_says_so():
    blob = {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAAA"}}
    assert result_content_of(blob)[0] == [{"type": "text", "text": (
        "[a binary resource (file:///a.bin, no type) was left out: only text reaches the model]")}]


def test_an_image_type_of_41_characters_is_cut_to_40_in_its_note():
    media_type = "image/" + "x" * 35
    (block,), _ = result_content_of({"type": "image", "data": "AAAA", "mimeType": media_type})
    assert block["text"] == (f"[an image of type image/{'x' * 33}… was left out: the API takes "
                             "image/jpeg, image/png, image/gif, image/webp]")


def test_an_image_of_exactly_five_megabytes_is_sent():
    data = base64.b64encode(bytes(5 * 1024 * 1024)).decode()
    (block,), cut = result_content_of({"type": "image", "data": data, "mimeType": "image/png"},
                                      budget=10)
    assert block == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": data}}
    assert cut == ""


def test_a_result_within_the_budget_has_no_cut_note():
    assert result_content_of({"type": "text", "text": "a" * 10}, budget=10) == (
        [{"type": "text", "text": "a" * 10}], "")


def test_a_text_reached_with_one_character_of_budget_left_gives_that_character():
    blocks, cut = result_content_of({"type": "text", "text": "aaa"},
                                    {"type": "text", "text": "bbb"}, budget=4)
    assert [block["text"] for block in blocks] == ["aaa", "b", f"[{cut}]"]
    assert cut.startswith("... 2 of 6 characters of this result were cut here")


def test_the_screen_shows_each_text_on_its_line_and_an_image_as_a_mark():
    assert text_of([{"type": "text", "text": "before"}, {"type": "image", "source": {}},
                    {"type": "text", "text": "after"}]) == "before\n[image]\nafter"


# -- the servers: started, failing, stopped --
MISBEHAVING = Path(__file__).parent / "mcp_servers" / "misbehaving.py"


# says on stderr what the file it is given holds, and its own "env" and first folder on PATH
DYING = ("import os, sys; sys.stderr.buffer.write(open(sys.argv[1], 'rb').read()); "
         "print(os.environ.get('WORD', ''), os.environ['PATH'].split(os.pathsep)[0], "
         "file=sys.stderr); sys.exit(1)")
JAPANESE = "エラー"


def test_a_server_that_dies_at_start_is_quoted_from_the_end_of_its_stderr(tmp_path):
    """Only the last 4 x STDERR_QUOTED bytes are read (what came before is not, however long),
    cut mid-character where they begin, their lines joined by " | ". Each server runs in the
    folder of its spec (its relative arguments found there), with its own "env"."""
    agents_python = Path(sys.executable).parent
    last_line = len(f" {agents_python}\n".encode())  # with no WORD set
    exclamations = 1  # so that the last 1,200 bytes begin inside a character of three bytes
    while (1200 - last_line - exclamations - 1) % 3 == 0:
        exclamations += 1
    said = {
        # 1,200 bytes from the end: "A" and blank lines; "early" lies 1,500 bytes from the end
        "window": b"early" + b"\n" * 295 + b"A" + b"\n" * (1199 - last_line),
        "japanese": JAPANESE.encode() * 1500 + b"!" * exclamations + b"\n",
        "lines": b"first\n\n   second  \n",
    }
    specs = []
    for name, text in said.items():
        (tmp_path / name).write_bytes(text)
        specs.append(ServerSpec(name, sys.executable, ["-c", DYING, name], {}, tmp_path))
    specs[-1].env = {"WORD": "third"}
    servers = McpServers(5, 60)  # they end at once: the time only bounds a start that never ends
    try:
        started = servers.start_all(specs)
        quoted = {name: str(failure).split("; its stderr ends: ")[1]
                  for name, failure in started.items()}
        japanese = f"{JAPANESE * 1500}{'!' * exclamations} | {agents_python}"
        assert quoted == {"window": f"A | {agents_python}", "japanese": japanese[-300:],
                          "lines": f"first | second | third {agents_python}"}
        assert str(started["lines"]) == (
            f"mcp server 'lines' {NOT_A_SERVER}; its stderr ends: first | second | third "
            f"{agents_python}")
        with pytest.raises(McpError) as called:
            servers.call("lines", "echo", {}, threading.Event())
        assert str(called.value) == ("mcp server 'lines' is not running (it failed to start); "
                                     "its tools cannot be called in this session")
        servers.connections["lines"].stderr.unlink()  # a cleaner of the temporary folder
        assert servers.failure("lines", "stopped") == "mcp server 'lines' stopped"
    finally:
        servers.close()
    assert not [name for name in said if servers.connections[name].stderr.exists()]


@pytest.mark.skipif(os.name != "posix", reason="a file without its execute bit")
def test_a_command_that_cannot_be_run_says_why(tmp_path):
    (tmp_path / "server.py").write_text("print('never run')\n")  # its execute bit not set
    servers = McpServers(5, 60)
    try:
        started = servers.start_all([ServerSpec("noexec", "./server.py", [], {}, tmp_path)])
    finally:
        servers.close()
    assert str(started["noexec"]) == (
        "mcp server 'noexec' cannot start './server.py': Permission denied")


# reads the request to initialize and never answers it (and ends: no test waits for ever)
SILENT = "import sys; sys.stdin.readline()"


def test_a_server_given_no_time_to_start_says_so_and_so_do_its_tools(tmp_path):
    servers = McpServers(0, 60)
    try:
        started = servers.start_all([ServerSpec(
            "slow", sys.executable, ["-c", SILENT], {}, tmp_path)])
        assert str(started["slow"]) == ("mcp server 'slow' did not answer initialize and "
                                        "tools/list within MCP_TIMEOUT=0 s")
        with pytest.raises(McpError) as called:
            servers.call("slow", "echo", {}, threading.Event())
        assert str(called.value) == ("mcp server 'slow' is not running (it did not start in "
                                     "time); its tools cannot be called in this session")
    finally:
        servers.close()


class CtrlCOnSecondLook(threading.Event):
    """The agent's stop event, as the user presses Ctrl-C while a call waits: not set when the
    call starts, set the next time anyone looks."""

    def __init__(self):
        super().__init__()
        self.looks = 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks > 1


def test_a_server_runs_beside_its_stderr_file_and_close_lets_it_end_on_its_closed_stdin(tmp_path):
    """One server's whole life: its stderr in a file named after it, a Ctrl-C while a call hangs,
    then close(): the server sees its stdin close and saves its work (nothing kills it first),
    the thread and the event loop end, and the servers cannot be started again."""
    farewell = tmp_path / "farewell.txt"
    servers = McpServers(60, 20)
    try:
        started = servers.start_all([ServerSpec(
            "mis", sys.executable, [str(MISBEHAVING), "--farewell", str(farewell)], {},
            tmp_path)])
        assert isinstance(started["mis"], list), started["mis"]
        stderr = servers.connections["mis"].stderr
        assert stderr.parent == Path(tempfile.gettempdir())
        assert stderr.name.startswith("mcp-mis-") and stderr.name.endswith(".stderr")
        assert servers.thread.daemon  # an agent that never gets to close() still exits
        with pytest.raises(KeyboardInterrupt):
            servers.call("mis", "hang", {}, CtrlCOnSecondLook())
        echoed = servers.call("mis", "echo", {"text": "still here"}, threading.Event())
        assert [part.text for part in echoed.content] == ["still here"]
    finally:
        servers.close()
    assert farewell.read_text() == "my stdin closed: work saved"
    assert not stderr.exists()
    assert not servers.thread.is_alive() and servers.loop.is_closed()
    servers.close()  # a second time: nothing left to do, and no error
    with pytest.raises(RuntimeError, match="^these MCP servers were closed$"):
        servers.start_all([])


def test_what_the_sdk_logs_reaches_neither_the_screen_nor_a_handler_of_the_agents(
        monkeypatch, caplog, capsys):
    """The SDK logs a server's garbage at ERROR. Its logger as a process starts: no handler of its
    own, and records passed up to the root's, or, with none there, printed on stderr."""
    sdk_logger = logging.getLogger("mcp")
    monkeypatch.setattr(sdk_logger, "handlers", [])
    monkeypatch.setattr(sdk_logger, "propagate", True)
    McpServers(60, 60)
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("mcp.client.stdio").error("Failed to parse JSONRPC message")
    assert caplog.records == []
    assert capsys.readouterr() == ("", "")


def test_without_the_mcp_sdk_each_server_is_one_line_that_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # what `import mcp` meets when it is missing
    servers = McpServers(60, 60)
    started = servers.start_all([ServerSpec("docs", "python3", [], {}, Path("."))])
    assert str(started["docs"]) == (
        "mcp server 'docs' not started: the MCP SDK is missing (import of mcp halted; None in "
        "sys.modules); pip install -r requirements.txt")
    assert servers.loop is None  # and no thread was started for it


# -- trusting a work folder's .mcp.json: what is remembered, and where --
def test_a_yes_is_not_remembered_when_no_store_is_named(tmp_path, monkeypatch):
    path, specs = mcp_json(tmp_path, TWO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG) is True
    assert sorted(entry.name for entry in tmp_path.iterdir()) == [".mcp.json"]


class AnsweringTerminal(Terminal):
    """A terminal that notes, as the user is asked, whether the spinner is drawn over it."""

    def __init__(self, typed: str, screen: Screen):
        super().__init__(typed)
        self.screen = screen
        self.spinner_when_asked = None

    def readline(self, *args) -> str:
        self.spinner_when_asked = self.screen.live is not None
        return super().readline(*args)


def test_no_spinner_is_drawn_over_the_question(tmp_path, monkeypatch):
    path, specs = mcp_json(tmp_path, TWO)
    screen = Screen(Console(file=io.StringIO(), force_terminal=True, width=100))
    terminal = AnsweringTerminal("n\n", screen)
    monkeypatch.setattr(sys, "stdin", terminal)
    screen.wait("starting")  # what the agent did before it asks
    try:
        assert screen.live is not None
        assert user_trusts(path, specs, screen, FLAG, "off") is False
    finally:
        screen.stop_live()
    assert terminal.spinner_when_asked is False


def test_a_yes_over_a_store_that_cannot_be_read_says_so_and_is_remembered_anew(
        tmp_path, monkeypatch, capsys):
    path, specs = mcp_json(tmp_path, TWO)
    store = tmp_path / "trusted.json"
    store.write_text("not json", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is True
    unreadable = (f"[{store} cannot be read (JSONDecodeError: Expecting value: line 1 column 1 "
                  "(char 0)): no earlier yes to a .mcp.json is used]")
    assert unreadable in capsys.readouterr().out
    assert read_trusted(store, Screen()) == {str(path.resolve()): trust_fingerprint(path, specs)}


def test_the_same_file_starting_other_programs_is_asked_about_again(tmp_path, monkeypatch):
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"docs": {"command": "${DOCS_PYTHON}"}}}),
                    encoding="utf-8")
    store = tmp_path / "trusted.json"
    specs, _ = read_servers(path, {"DOCS_PYTHON": "python3"})
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is True
    specs, _ = read_servers(path, {"DOCS_PYTHON": "/tmp/other/python3"})  # the file unchanged
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # no terminal: not asked, so not used
    assert user_trusts(path, specs, Screen(), FLAG, str(store)) is False


def test_a_store_in_folders_not_made_yet_is_made_with_them_one_answer_a_line(tmp_path):
    store = tmp_path / "home" / ".config" / "agent" / "trusted.json"
    remember_trust(store, tmp_path / ".mcp.json", "f1", Screen())
    assert store.read_text(encoding="utf-8") == (
        '{\n "trusted": {\n  ' + json.dumps(str((tmp_path / ".mcp.json").resolve()))
        + ': "f1"\n }\n}')


def test_the_store_is_written_beside_itself_first_so_it_is_never_half_written(tmp_path, capsys):
    store = tmp_path / "trusted.json"
    remember_trust(store, tmp_path / "a" / ".mcp.json", "f1", Screen())
    before = store.read_text(encoding="utf-8")
    (tmp_path / "trusted.json.partial").mkdir()  # in the way of the next write
    remember_trust(store, tmp_path / "b" / ".mcp.json", "f2", Screen())
    assert capsys.readouterr().out.strip() == (
        f"[could not remember the answer in {store} (Is a directory): it is asked again next "
        "time]")
    assert store.read_text(encoding="utf-8") == before


@pytest.fixture
def ascii_locale():
    """The C locale, whose files are ASCII unless told otherwise: what Windows' cp1252 or
    cp932 is to a file in UTF-8."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    yield
    locale.setlocale(locale.LC_CTYPE, before)


def test_settings_and_answers_are_utf_8_whatever_the_locale(tmp_path, ascii_locale, capsys):
    folder = tmp_path / "café"
    folder.mkdir()
    path = folder / ".mcp.json"
    path.write_bytes(json.dumps({"mcpServers": {"docs": {"command": "python3",
                                                          "args": ["--title", "café"]}}},
                                ensure_ascii=False).encode("utf-8"))
    specs, problems = read_servers(path, {})
    assert (problems, specs[0].args) == ([], ["--title", "café"])
    store = tmp_path / "trusted.json"
    remember_trust(store, path, "f1", Screen())
    assert read_trusted(store, Screen()) == {str(path.resolve()): "f1"}
    by_hand = tmp_path / "by-hand.json"  # a store another program wrote, its é not escaped
    by_hand.write_bytes('{"trusted": {"/work/café/.mcp.json": "f2"}}'.encode())
    assert read_trusted(by_hand, Screen()) == {"/work/café/.mcp.json": "f2"}
    assert capsys.readouterr().out == ""
